"""Kernel plumbing of a lab: namespaces, veth cables, the management bridge, per-namespace sysctls.

Bulk changes go through `ip -batch` (one process for hundreds of objects) and cables are created
directly inside their namespaces, so switch-side names like swp1 never collide in the root namespace.
"""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Iterable, Mapping

from netfab.lab.layout import Layout, owns_ifname
from netfab.lab.proc import in_netns, run
from netfab.lab.spec import MGMT_IFNAME, LabHost, LabSpec

# accept_dad 0 must be in place before interfaces appear (new interfaces copy `default`): it saves 1-2 s
# of tentative IPv6 link-locals, which BGP unnumbered needs. rp_filter 0: ECMP return paths are asymmetric.
HOST_SYSCTLS: dict[str, str] = {
    "net.ipv4.conf.all.rp_filter": "0",
    "net.ipv4.conf.default.rp_filter": "0",
    "net.ipv6.conf.all.accept_dad": "0",
    "net.ipv6.conf.default.accept_dad": "0",
    "net.ipv6.conf.all.accept_ra": "0",
    "net.ipv6.conf.default.accept_ra": "0",
}
SWITCH_SYSCTLS: dict[str, str] = {
    "net.ipv4.ip_forward": "1",
    "net.ipv6.conf.all.forwarding": "1",
    "net.ipv6.conf.default.forwarding": "1",
    **HOST_SYSCTLS,
}


def ip_batch(lines: Iterable[str], ns: str | None = None, what: str = "ip -batch") -> None:
    text = "".join(f"{line}\n" for line in lines)
    if text:
        run(["ip", *(["-n", ns] if ns else []), "-batch", "-"], input=text, what=what)


def set_sysctls(ns: str, sysctls: Mapping[str, str], what: str = "") -> None:
    if sysctls:
        args = [f"{key}={value}" for key, value in sysctls.items()]
        run(in_netns(ns, ["sysctl", "-q", "-w", *args]), what=what or f"sysctls in {ns}")


def add_namespaces(names: Iterable[str]) -> None:
    ip_batch((f"netns add {n}" for n in names), what="creating namespaces")


def delete_namespaces(names: Iterable[str]) -> None:
    # -force: keep going past one that is already gone, so a half-swept lab still gets cleaned.
    text = "".join(f"netns del {n}\n" for n in names)
    if text:
        run(["ip", "-force", "-batch", "-"], input=text, check=False)


def delete_root_links(layout: Layout, names: Iterable[str]) -> None:
    """Delete the lab's root-namespace links: by device group when that group holds only this lab's
    links (one batched unregister), then one by one whatever is left (a crash before grouping)."""
    group = str(layout.link_group)
    links = _root_links()
    members = [n for n, g in links.items() if g == group]
    if members and all(owns_ifname(layout.prefix, n) for n in members):
        run(["ip", "link", "del", "group", group], check=False)
        links = _root_links()
    text = "".join(f"link del {n}\n" for n in sorted(set(names)) if n in links)
    if text:
        run(["ip", "-force", "-batch", "-"], input=text, check=False)


def _root_links() -> dict[str, str]:
    """Root-namespace link name -> device group (as iproute2 prints it)."""
    out = run(["ip", "-j", "link", "show"], check=False).stdout or "[]"
    return {link["ifname"]: str(link.get("group", "")) for link in json.loads(out)}


def cable_lines(layout: Layout, spec: LabSpec) -> list[str]:
    """One veth pair per link, born inside its two namespaces with the link's MTU."""
    return [
        f"link add {ln.a_ifname} netns {layout.ns(ln.a_node)} mtu {ln.mtu} type veth "
        f"peer name {ln.b_ifname} netns {layout.ns(ln.b_node)} mtu {ln.mtu}"
        for ln in spec.links
    ]


def mgmt_lines(layout: Layout, spec: LabSpec) -> list[str]:
    """The root-namespace bridge, with a veth to every switch's mgmt0."""
    lines = [
        f"link add {layout.bridge} type bridge",
        f"addr add {spec.bridge_address} dev {layout.bridge}",
        f"link set {layout.bridge} group {layout.link_group} up",
    ]
    for sw in spec.switches:
        veth = layout.mgmt_veth(sw.name)
        lines += [
            f"link add {veth} type veth peer name {MGMT_IFNAME} netns {layout.ns(sw.name)}",
            f"link set {veth} master {layout.bridge} group {layout.link_group} up",
        ]
    return lines


def switch_lines(spec: LabSpec, switch: str, ifnames: Iterable[str]) -> list[str]:
    """Inside a switch: links up and the management address. Fabric addresses come from FRR (zebra)."""
    sw = spec.switch(switch)
    lines = ["link set lo up", f"link set {MGMT_IFNAME} up"]
    lines += [f"link set {name} up" for name in ifnames]
    lines.append(f"addr add {sw.mgmt_ip}/{spec.mgmt_subnet.prefixlen} dev {MGMT_IFNAME}")
    return lines


def host_lines(host: LabHost) -> list[str]:
    lines = ["link set lo up"]
    for hi in host.interfaces:
        lines += [f"link set {hi.name} up", f"addr add {hi.address} dev {hi.name}"]
        lines += [f"route add {net} via {hi.gateway} dev {hi.name}" for net in hi.routes]
    return lines


def namespaces_with_prefix(prefix: str) -> list[str]:
    out = run(["ip", "netns", "list"], check=False).stdout
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    return sorted(n for n in names if n.startswith(f"{prefix}-"))


def root_links_with_prefix(prefix: str) -> list[str]:
    return sorted(name for name in _root_links() if owns_ifname(prefix, name))


def pids_in_namespaces(names: Iterable[str]) -> list[int]:
    """Every process whose network namespace is one of these: one pass over /proc, not one `ip` per netns."""
    inodes = set()
    for name in names:
        try:
            st = os.stat(f"/run/netns/{name}")
        except OSError:
            continue
        inodes.add((st.st_dev, st.st_ino))
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                st = os.stat(f"/proc/{entry.name}/ns/net")
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in inodes:
                pids.append(int(entry.name))
    return pids


def mounts_under(prefixes: Iterable[str]) -> list[str]:
    """Root-namespace mount points starting with any of prefixes, deepest first (the order to unmount)."""
    wanted = tuple(prefixes)
    points = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            point = line.split()[4].replace("\\040", " ")
            if point.startswith(wanted):
                points.append(point)
    return sorted(points, key=len, reverse=True)


def subnet_in_use(subnet: ipaddress.IPv4Network) -> list[str]:
    """Root-namespace addresses that overlap subnet ('ADDR on DEV'): a second bridge there breaks routing."""
    out = run(["ip", "-j", "-4", "addr", "show"], check=False).stdout or "[]"
    users = []
    for link in json.loads(out):
        for info in link.get("addr_info", []):
            net = ipaddress.IPv4Interface(f"{info['local']}/{info['prefixlen']}").network
            if net.overlaps(subnet):
                users.append(f"{info['local']}/{info['prefixlen']} on {link['ifname']}")
    return users
