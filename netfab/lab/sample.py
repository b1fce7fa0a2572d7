"""A hand-built 2-tier Clos LabSpec (spines x leaves x hosts per leaf) for the lab tests and benchmark.

It reads no intent: it is the smallest honest fabric that exercises the runtime (BGP unnumbered over
IPv6 link-locals, v4 + v6, host /31s advertised from leaves, ECMP across every spine).
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

from netfab.lab.layout import default_workdir
from netfab.lab.spec import LabHost, LabHostInterface, LabLink, LabSpec, LabSwitch

SPINE_ASN = 65000  # one AS for all spines: leaf-to-leaf paths via any spine then have identical AS paths
LEAF_ASN_BASE = 65100


def _frr_conf(name: str, asn: int, router_id: str, uplinks: list[str], host_ifs: list[tuple[str, str]]) -> str:
    lines = ["frr defaults datacenter", f"hostname {name}", "!", "interface lo", f" ip address {router_id}/32", "exit"]
    for ifname, addr in host_ifs:
        lines += ["!", f"interface {ifname}", f" ip address {addr}", "exit"]
    lines += [
        "!",
        # bgpd holds every session until the route-map update timer (5 s by default) has run once after
        # the config is loaded: with route-maps in the config, 0 makes bring-up ~4 s faster.
        "bgp route-map delay-timer 0",
        "!",
        # Only fabric space goes into BGP, never the management subnet every switch has on mgmt0.
        "ip prefix-list FABRIC seq 5 permit 10.0.0.0/8 le 32",
        "!",
        "route-map CONNECTED permit 10",
        " match ip address prefix-list FABRIC",
        "exit",
        "!",
        f"router bgp {asn}",
        f" bgp router-id {router_id}",
        " bgp bestpath as-path multipath-relax",
        " coalesce-time 50",
        " neighbor fabric peer-group",
        " neighbor fabric remote-as external",
    ]
    lines += [f" neighbor {ifname} interface peer-group fabric" for ifname in uplinks]
    lines += [
        " !",
        " address-family ipv4 unicast",
        "  redistribute connected route-map CONNECTED",
        "  maximum-paths 64",
        " exit-address-family",
        " !",
        " address-family ipv6 unicast",
        "  neighbor fabric activate",
        "  maximum-paths 64",
        " exit-address-family",
        "exit",
        "!",
    ]
    return "\n".join(lines) + "\n"


def clos_spec(
    prefix: str,
    spines: int = 2,
    leaves: int = 4,
    hosts_per_leaf: int = 2,
    *,
    mgmt_subnet: str = "172.31.255.0/24",
    workdir: Path | None = None,
    mtu: int = 9216,
) -> LabSpec:
    """spine i port swp<j> <-> leaf j port swp<i>; leaf j host k on swp<spines+k> with 10.1.j.(2k-2)/31."""
    subnet = ipaddress.IPv4Network(mgmt_subnet)
    mgmt = iter(subnet.hosts())
    switches, hosts, links = [], [], []
    for i in range(1, spines + 1):
        name = f"spine{i}"
        ports = [f"swp{j}" for j in range(1, leaves + 1)]
        conf = _frr_conf(name, SPINE_ASN, f"10.255.0.{i}", ports, [])
        switches.append(LabSwitch(name, conf, next(mgmt), interfaces=tuple(ports)))
    for j in range(1, leaves + 1):
        name = f"leaf{j}"
        uplinks = [f"swp{i}" for i in range(1, spines + 1)]
        host_ifs = []
        for k in range(1, hosts_per_leaf + 1):
            ifname, net = f"swp{spines + k}", ipaddress.IPv4Network(f"10.1.{j}.{2 * k - 2}/31")
            leaf_ip, host_ip = net[0], net[1]
            host_ifs.append((ifname, f"{leaf_ip}/31"))
            hostname = f"h{j}-{k}"
            hosts.append(
                LabHost(
                    hostname,
                    (
                        LabHostInterface(
                            "eth0",
                            ipaddress.IPv4Interface(f"{host_ip}/31"),
                            leaf_ip,
                            (ipaddress.IPv4Network("10.0.0.0/8"),),
                        ),
                    ),
                )
            )
            links.append(LabLink(name, ifname, hostname, "eth0", mtu))
        conf = _frr_conf(name, LEAF_ASN_BASE + j, f"10.255.1.{j}", uplinks, host_ifs)
        leaf_ports = (*uplinks, *(ifname for ifname, _ in host_ifs))
        switches.append(LabSwitch(name, conf, next(mgmt), interfaces=leaf_ports))
        links += [LabLink(f"spine{i}", f"swp{j}", name, f"swp{i}", mtu) for i in range(1, spines + 1)]
    return LabSpec(
        name=f"clos-{spines}x{leaves}",
        prefix=prefix,
        mgmt_subnet=subnet,
        switches=tuple(switches),
        hosts=tuple(hosts),
        links=tuple(links),
        workdir=workdir or default_workdir(prefix),
    )
