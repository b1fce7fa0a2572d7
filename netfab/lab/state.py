"""What a running lab consists of, on disk, so status/exec/down work from another process or after a crash.

Written before the first kernel object is created and updated once the daemons are up; `down` trusts it
only as far as it goes and always sweeps by name prefix as well.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from netfab.core.validate import InputError, lab_prefix
from netfab.lab.errors import LabError
from netfab.lab.layout import DEFAULT_ROOT, Layout, default_workdir, pointer_file
from netfab.lab.spec import LabSpec


@dataclass(slots=True)
class SwitchRecord:
    name: str
    namespace: str
    mgmt_ip: str
    mgmt_veth: str
    # What "ready" means for this switch, fixed at bring-up from the cabling: one BGP session per
    # switch-facing interface, and (on switches with hosts) every remote host subnet over all uplinks.
    fabric_ifnames: list[str] = field(default_factory=list)
    remote_subnets: list[str] = field(default_factory=list)
    ecmp_width: int = 0


@dataclass(slots=True)
class LabState:
    name: str
    prefix: str
    workdir: str
    mgmt_subnet: str
    bridge: str
    switches: dict[str, SwitchRecord]
    hosts: dict[str, str]  # host name -> namespace
    namespaces: list[str]
    root_links: list[str]  # root-namespace veths and the bridge: deleted explicitly, never left to netns GC
    mounts: list[str]  # root-namespace mount points the lab owns (the /run/netns/<ns> nsfs binds)
    pids: dict[str, dict[str, int]] = field(default_factory=dict)  # switch -> daemon -> pid

    @property
    def layout(self) -> Layout:
        return Layout(self.prefix, Path(self.workdir))

    def save(self) -> None:
        path = self.layout.state_file
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=1, sort_keys=True))
        tmp.replace(path)  # atomic: a crash mid-write never leaves half a state file

    @classmethod
    def load(cls, path: Path) -> LabState:
        try:
            raw = json.loads(path.read_text())
            raw["switches"] = {k: SwitchRecord(**v) for k, v in raw["switches"].items()}
            return cls(**raw)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise LabError(f"cannot read lab state {path}: {exc}") from exc


def plan_state(spec: LabSpec) -> LabState:
    """The state a successful bring-up of spec will have (pids come later)."""
    layout = Layout(spec.prefix, spec.workdir)
    switch_names = {sw.name for sw in spec.switches}
    subnet_of = {(h.name, hi.name): str(hi.address.network) for h in spec.hosts for hi in h.interfaces}
    fabric: dict[str, list[str]] = {name: [] for name in switch_names}
    local: dict[str, set[str]] = {name: set() for name in switch_names}  # host subnets cabled to a switch
    for ln in spec.links:
        for node, ifname, peer, peer_if in (
            (ln.a_node, ln.a_ifname, ln.b_node, ln.b_ifname),
            (ln.b_node, ln.b_ifname, ln.a_node, ln.a_ifname),
        ):
            if node in switch_names and peer in switch_names:
                fabric[node].append(ifname)
            elif node in switch_names and (peer, peer_if) in subnet_of:
                local[node].add(subnet_of[(peer, peer_if)])
    all_subnets = set(subnet_of.values())
    switches = {}
    for sw in spec.switches:
        # Only switches with hosts (leaves) are expected to hold remote host subnets over ECMP.
        remote = all_subnets - local[sw.name] if local[sw.name] else set()
        switches[sw.name] = SwitchRecord(
            name=sw.name,
            namespace=layout.ns(sw.name),
            mgmt_ip=str(sw.mgmt_ip),
            mgmt_veth=layout.mgmt_veth(sw.name),
            fabric_ifnames=sorted(fabric[sw.name]),
            remote_subnets=sorted(remote),
            # In a Clos every uplink is an equal-cost way to any remote leaf.
            ecmp_width=len(fabric[sw.name]) if remote else 0,
        )
    namespaces = [layout.ns(n) for n in (*switch_names, *(h.name for h in spec.hosts))]
    return LabState(
        name=spec.name,
        prefix=spec.prefix,
        workdir=str(spec.workdir),
        mgmt_subnet=str(spec.mgmt_subnet),
        bridge=layout.bridge,
        switches=switches,
        hosts={h.name: layout.ns(h.name) for h in spec.hosts},
        namespaces=sorted(namespaces),
        root_links=sorted([layout.bridge, *(r.mgmt_veth for r in switches.values())]),
        mounts=sorted(f"/run/netns/{ns}" for ns in namespaces),
    )


def find_workdir(prefix: str) -> Path:
    """Default workdir, unless the lab recorded another one in its pointer file."""
    try:
        return Path(pointer_file(prefix).read_text().strip())
    except OSError:
        return default_workdir(prefix)


def remember_workdir(prefix: str, workdir: Path) -> None:
    if workdir != default_workdir(prefix):
        DEFAULT_ROOT.mkdir(parents=True, exist_ok=True)
        pointer_file(prefix).write_text(f"{workdir}\n")


def forget_workdir(prefix: str) -> None:
    # DEFAULT_ROOT itself stays: removing it could race with another lab being created beside it.
    pointer_file(prefix).unlink(missing_ok=True)


def load_state(prefix: str) -> LabState:
    path = Layout(prefix, find_workdir(prefix)).state_file
    if not path.exists():
        raise LabError(f"no lab with prefix {prefix!r} is up (no state file at {path})")
    return LabState.load(path)


def require_running(prefix: str) -> LabState:
    """The lab `--lab PREFIX` names, which must be up: its state file and every switch's namespace exist.

    Raises InputError otherwise. A deploy, verify, audit or rollback aimed at a lab must never fall back to
    the intent's own management addresses: a typo in the prefix would send the lab's root login to the
    production management network. Nothing is contacted here; the checks are local files only.
    """
    lab_prefix(prefix)
    hint = f"start it with `netfab lab up INTENT --prefix {prefix}`, or check the prefix (`netfab lab status`)"
    try:
        state = load_state(prefix)
    except LabError as exc:
        raise InputError(str(exc), hint) from None
    gone = sorted(rec.namespace for rec in state.switches.values() if not Path("/run/netns", rec.namespace).exists())
    if gone:
        raise InputError(f"lab {prefix!r} is not up: namespaces {', '.join(gone)} are missing", hint)
    return state
