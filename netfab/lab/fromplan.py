"""From the fabric plan to a LabSpec: the intent's fabric (or the smaller one its `lab:` section declares),
every switch running the frr platform's rendered config, every GPU server a host namespace."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from pathlib import Path

import yaml

from netfab.capabilities import capabilities_for
from netfab.design.plan import FabricPlan
from netfab.intent import Intent
from netfab.lab.layout import default_workdir
from netfab.lab.spec import LabHost, LabHostInterface, LabLink, LabSpec, LabSwitch
from netfab.platforms import namespace_lab_platform
from netfab.render.device import render_device


def lab_intent(intent: Intent) -> Intent:
    """The fabric the lab runs: every switch on FRR, scaled down where the lab section says so."""
    return lab_variant(intent)[0]


def lab_variant(intent: Intent) -> tuple[Intent, list[str]]:
    """The lab fabric plus plain notes on what the lab cannot model (Linux has no PFC watchdog, no QP
    hashing...). The production intent keeps those features; the lab says it left them out."""
    lab = intent.lab
    scaled = {
        key: getattr(lab, key)
        for key in ("scalable_units", "servers_per_su", "pods", "racks_per_pod")
        if getattr(lab, key) is not None
    }
    # model_copy, not a dump/re-validate round trip: the dump holds normalised numbers ("400G" -> 400),
    # which the unit-checking validators would (rightly) refuse.
    lab_platform = namespace_lab_platform().name
    lab_only: dict[str, str | int | None] = {"platform": lab_platform, "os_version": None}
    leaf_update = dict(lab_only)
    if lab.leaf_uplinks is not None:
        leaf_update["uplinks"] = lab.leaf_uplinks
    spine_update = dict(lab_only)
    if lab.spines is not None:
        spine_update["count"] = lab.spines
    topology = intent.topology.model_copy(
        update={
            **scaled,
            "leaf": intent.topology.leaf.model_copy(update=leaf_update),
            "spine": intent.topology.spine.model_copy(update=spine_update),
            "superspine": intent.topology.superspine.model_copy(update=lab_only)
            if intent.topology.superspine is not None
            else None,
        }
    )
    notes: list[str] = []
    caps = capabilities_for(lab_platform)
    qos = intent.qos
    if qos.pfc.watchdog is not None and not caps.pfc_watchdog.supported:
        notes.append("PFC watchdog: not modelled (Linux has none; veth has no PFC at all)")
        qos = qos.model_copy(update={"pfc": qos.pfc.model_copy(update={"watchdog": None})})
    if qos.buffers.headroom != "auto":
        notes.append("explicit PFC headroom: not modelled (no PFC on veth)")
        qos = qos.model_copy(update={"buffers": qos.buffers.model_copy(update={"headroom": "auto"})})
    lb = intent.load_balancing
    dropped = [f for f in lb.hash_fields if f not in caps.hashes]
    lb_update: dict[str, object] = {}
    if dropped:
        notes.append(
            f"ECMP hash fields {', '.join(map(str, dropped))}: not modelled (the Linux kernel cannot hash on them)"
        )
        lb_update["hash_fields"] = [f for f in lb.hash_fields if f in caps.hashes]
    for feature in ("adaptive_routing", "packet_spraying"):
        if getattr(lb, feature) and not getattr(caps, feature):
            notes.append(f"{feature.replace('_', ' ')}: not modelled (kernel ECMP is hash-only)")
            lb_update[feature] = False
    return (
        intent.model_copy(update={"topology": topology, "qos": qos, "load_balancing": lb.model_copy(update=lb_update)}),
        notes,
    )


def lab_spec(
    plan: FabricPlan,
    prefix: str,
    mgmt_subnet: IPv4Network,
    ecn_mode: str = "auto",
    workdir: Path | None = None,
) -> LabSpec:
    switches = []
    hosts_avail = list(mgmt_subnet.hosts())
    for n, dev in enumerate(plan.devices.values()):
        files = render_device(dev)
        conf = files[f"configs/{dev.name}.conf"]
        script = files.get(f"configs/{dev.name}.sh", "")
        if script and ecn_mode != "auto":
            # The script's own auto mode picks RED where the kernel has it, else nftables; only an explicit
            # choice from the intent's lab section is forced.
            script = f"ECN_MODE={ecn_mode}\nexport ECN_MODE\n" + script
        switches.append(
            LabSwitch(
                name=dev.name,
                frr_conf=conf,
                mgmt_ip=hosts_avail[n],
                setup_script=script,
                interfaces=tuple(i.name for i in dev.interfaces),
            )
        )
    hosts = [
        LabHost(
            name=server.name,
            interfaces=tuple(
                LabHostInterface(
                    name=nic.netdev,
                    address=IPv4Interface(nic.address),
                    gateway=IPv4Address(nic.gateway),
                    routes=tuple(IPv4Network(r) for r in nic.routes),
                )
                for nic in server.nics
            ),
        )
        for server in plan.servers
    ]
    mtu = next(iter(plan.devices.values())).mtu if plan.devices else 9216
    links = [LabLink(link.a_device, link.a_port, link.b_device, link.b_port, mtu) for link in plan.links]
    return LabSpec(
        name=plan.name,
        prefix=prefix,
        mgmt_subnet=mgmt_subnet,
        switches=tuple(switches),
        hosts=tuple(hosts),
        links=tuple(links),
        workdir=workdir or default_workdir(prefix),
    )


def seed_applied_host_scripts(spec: LabSpec, plan: FabricPlan, home: Path | None = None) -> None:
    """Record each switch's Linux script as the one its frr driver last applied, as a deploy would have.

    The lab applied it at bring-up; without this record the first `netfab deploy` would show the whole
    script as a change. Written where the driver keeps its device-side state: the login user's
    ~/.netfab/<management address>/ (lab switches share root's home).
    """
    from netfab.deploy.drivers.frr import HOST_APPLIED

    base = (home or Path.home()) / ".netfab"
    for sw in spec.switches:
        script = render_device(plan.devices[sw.name]).get(f"configs/{sw.name}.sh")
        if not script:
            continue
        target = base / str(sw.mgmt_ip)
        target.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = target / HOST_APPLIED
        path.write_text(script, encoding="utf-8")
        path.chmod(0o600)


def lab_inventory_overrides(spec: LabSpec, key_file: Path, known_hosts: Path) -> dict[str, str]:
    """Inventory overrides that point a deploy at the lab: its management addresses, key and known_hosts
    (paths, not secrets). The lab is reached directly: neither ~/.ssh/config nor a jump host (NETFAB_SSH_JUMP)
    applies to addresses that exist only inside this machine."""
    hosts = {
        sw.name: {
            "hostname": str(sw.mgmt_ip),
            "port": 22,
            "connection_options": {
                "netfab_napalm": {
                    "extras": {
                        "optional_args": {
                            "key_file": str(key_file),
                            "known_hosts": str(known_hosts),
                            "ssh_config": "none",
                            "jump_host": "none",
                        }
                    }
                }
            },
        }
        for sw in spec.switches
    }
    return {"hosts.yaml": yaml.safe_dump(hosts, sort_keys=True)}
