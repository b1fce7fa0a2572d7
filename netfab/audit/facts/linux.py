"""The frr platform's Linux side -> facts: the intended host script (`<name>.sh`) and the kernel state in force.

Both sides are reduced to the same model (sysctls, port MTUs, ECN marking per port and queue), then to facts:
``hash.fields[ipv4]`` (the fields the kernel really hashes: the policy decides, the field mask only counts
under policy 3), ``hash.seed``, ``sysctl[...]``, ``interface[swp1].mtu``,
``interface[swp1].queue[3].ecn.kmin_bytes``...

Which ECN threshold is visible depends on the marking mode the script chose on that kernel:
- red (tc RED with `ecn`): min, max, probability and limit are kernel parameters: Kmin, Kmax, Pmax and the
  hard limit are all compared exactly (the EWMA weight is not: tc derives Wlog from `burst`);
- nftables (phantom queue, kernels without sch_red): a named limit per port and queue holds the drain rate
  (packets/s) and the burst in packets = ceil(Kmin / avpkt). Kmin is compared as burst x avpkt bytes, the
  drain rate as is; Kmax and Pmax do not exist in this mode (marking is a step at Kmin), so they are not
  compared. The script's `avpkt` (NETFAB_ECN_AVPKT) and shaper rate come from the driver's host-script
  environment, reported with the kernel state;
- off: no marking; every queue that should mark is reported missing on that port.
The intended side is evaluated in the mode the port is actually in: red and nftables are both correct
renderings of the same intent, so the mode itself is not drift, its parameters are.

Address families stay apart: the script installs one nftables marking rule per family and queue (`ip dscp`
and `ip6 dscp`), so the DSCPs each rule marks are facts per family (``queue[3].ecn.dscp[ipv4]``): a kernel
that lost only its IPv4 rule no longer marks RoCEv2 over IPv4, and that is drift even though IPv6 still marks.
The kernel-state shape itself is netfab.deploy.kernel_state (shared with the frr driver).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from netfab.audit.model import PRESENT, Facts
from netfab.deploy.kernel_state import FAMILIES, Family, KernelState
from netfab.deploy.kernel_state import load as load_state
from netfab.render.environment import platform_data

_DATA = platform_data("frr")
HASH_SYSCTLS = {
    f"net.{fam}.fib_multipath_hash_{knob}" for fam in ("ipv4", "ipv6") for knob in ("policy", "fields", "seed")
}
DEFAULT_AVPKT = int(_DATA.get("ecn_avpkt_bytes", 1500))


@dataclass
class QueueEcn:
    mode: str
    kmin_bytes: int | None = None
    kmax_bytes: int | None = None
    pmax_percent: int | None = None
    limit_bytes: int | None = None
    drain_pps: int | None = None
    burst_packets: int | None = None
    """nftables: the limit's burst as the kernel holds it (shown in the raw diff; compared as kmin_bytes)."""


@dataclass
class KernelModel:
    sysctl: dict[str, int] = field(default_factory=dict)
    mtu: dict[str, int] = field(default_factory=dict)
    ecn: dict[tuple[str, int | str], QueueEcn] = field(default_factory=dict)
    """(port, queue) -> marking in force on that port for that queue. RED has one FIFO per port and marks
    every queue: the kernel side keys it "all" until aligned with the queue the script gave it."""
    dscp: dict[tuple[Family, int], tuple[int, ...]] = field(default_factory=dict)
    """nftables mode: (address family, queue) -> the DSCPs that family's rule for the queue CE-marks."""


def port_modes(state: Mapping[str, Any]) -> dict[str, str]:
    """Port -> 'red' | 'nftables' as the kernel state reports it (absent = no marking)."""
    ports = (state.get("ecn") or {}).get("ports") or {}
    return {p: ("red" if "red" in v else "nftables") for p, v in ports.items() if "red" in v or "nftables" in v}


def _avpkt(state: Mapping[str, Any], script_default: int = DEFAULT_AVPKT) -> int:
    env = state.get("env") or {}
    try:
        return int(env.get("NETFAB_ECN_AVPKT") or script_default)
    except ValueError:
        return script_default


# --- the kernel state (FRRDriver.get_kernel_state) ------------------------------------------------------------
def model_from_state(data: object) -> KernelModel:
    """The kernel side; `data` is checked against the KernelState contract first (StateError if it is not)."""
    state: KernelState = load_state(data)
    model = KernelModel()
    model.sysctl = {str(k): int(v) for k, v in (state.get("sysctl") or {}).items() if v is not None}
    model.mtu = {p: int(v["mtu"]) for p, v in (state.get("links") or {}).items() if "mtu" in v}
    avpkt = _avpkt(state)
    ecn = state.get("ecn") or {}
    for port, info in (ecn.get("ports") or {}).items():
        red = info.get("red")
        if red:
            model.ecn[port, "all"] = QueueEcn(
                "red",
                kmin_bytes=int(red["min"]),
                kmax_bytes=int(red["max"]),
                pmax_percent=round(float(red.get("probability", 0)) * 100),
                limit_bytes=int(red["limit"]),
            )
        for queue, lim in (info.get("nftables") or {}).items():
            burst = int(lim["burst_packets"])
            model.ecn[port, int(queue)] = QueueEcn(
                "nftables", kmin_bytes=burst * avpkt, drain_pps=int(lim["rate_pps"]), burst_packets=burst
            )
    model.dscp = {
        (family, int(q)): tuple(sorted(int(d) for d in ds))
        for family, queues in (ecn.get("dscp") or {}).items()
        for q, ds in queues.items()
    }
    return model


# --- the intended host script --------------------------------------------------------------------------------
_SYSCTL = re.compile(r"\b(?:must_sysctl|sysctl_set) (net\.[\w.]+) (\S+?)(?=[;\s|)]|$)")
_SET_PORT = re.compile(r"^set_port (\S+) (\d+)\s*$", re.M)
_ECN_PORTS = re.compile(r'^ECN_PORTS="([^"]*)"', re.M)
_AVPKT = re.compile(r'AVPKT="\$\{NETFAB_ECN_AVPKT:-(\d+)\}"')
_DRAIN = re.compile(r"pps\(\) \{ echo \$\(\(\$\{SHAPE_MBIT:-\$1\} \* 1000000 \* (\d+) / 100 / 8 / AVPKT\)\); \}")
_NFT_LIMIT = re.compile(r"limit pq(\d+)_(\S+) \{ rate over \$\(pps (\d+)\)/second burst \$\(pkts (\d+)\) packets \}")
# One rule per family and queue; it counts only if it CE-marks that same family.
_NFT_DSCP = re.compile(r"\b(ip6?) dscp \{ ([\d, ]+) \} .*?@pq(\d+) \1 ecn set ce\b")
_NFT_FAMILY: dict[str, Family] = {"ip": "ipv4", "ip6": "ipv6"}
_RED = re.compile(r"set -- red limit (\d+) min (\d+) max (\d+) .*?\s+probability (\S+)")


@dataclass(frozen=True)
class ScriptEcn:
    """What the script would install, per port and queue, in each mode."""

    ports: dict[str, int]  # port -> speed Mbit/s
    avpkt: int
    drain_percent: int
    nft: dict[tuple[str, int], int]  # (port, queue) -> Kmin bytes
    dscp: dict[tuple[Family, int], tuple[int, ...]]
    red: tuple[int, int, int, float] | None  # limit, min, max, probability


def parse_script(text: str) -> tuple[dict[str, int], dict[str, int], ScriptEcn]:
    """(sysctls, port MTUs, ECN) as the script sets them."""
    joined = text.replace("\\\n", " ")
    sysctls: dict[str, int] = {}
    for name, value in _SYSCTL.findall(joined):
        try:
            sysctls[name] = int(value, 0)
        except ValueError:
            continue
    mtu = {port: int(m) for port, m in _SET_PORT.findall(joined)}
    ports: dict[str, int] = {}
    if m := _ECN_PORTS.search(joined):
        for spec in m.group(1).split():
            name, speed, *_ = spec.split(":")
            ports[name] = int(speed)
    avpkt = int(a.group(1)) if (a := _AVPKT.search(joined)) else DEFAULT_AVPKT
    drain = int(d.group(1)) if (d := _DRAIN.search(joined)) else int(_DATA.get("phantom_drain_percent", 95))
    nft = {(port, int(q)): int(kmin) for q, port, _speed, kmin in _NFT_LIMIT.findall(joined)}
    dscp = {
        (_NFT_FAMILY[fam], int(q)): tuple(sorted(int(x) for x in ds.replace(",", " ").split()))
        for fam, ds, q in _NFT_DSCP.findall(joined)
    }
    red = None
    if r := _RED.search(joined):
        red = (int(r.group(1)), int(r.group(2)), int(r.group(3)), float(r.group(4)))
    return sysctls, mtu, ScriptEcn(ports, avpkt, drain, nft, dscp, red)


def model_from_script(text: str, observed: Mapping[str, Any]) -> KernelModel:
    """The kernel the script would leave, in the marking mode each port is observed in, measured the way
    that mode can be measured (see the module docstring)."""
    sysctls, mtu, ecn = parse_script(text)
    model = KernelModel()
    collected = (observed.get("sysctl") or {}).keys()
    model.sysctl = {k: v for k, v in sysctls.items() if k in collected}  # never-collected knobs: not compared
    model.mtu = dict(mtu) if "links" in observed else {}
    avpkt = _avpkt(observed, ecn.avpkt)
    shape = (observed.get("env") or {}).get("NETFAB_SHAPE_MBIT")
    modes = port_modes(observed)
    red_queues = {q for _, q in ecn.nft} if ecn.red else set()
    for (port, queue), kmin in ecn.nft.items():
        mode = modes.get(port, "off")
        if mode == "red" and ecn.red is not None and queue in red_queues:
            limit, rmin, rmax, prob = ecn.red
            model.ecn[port, queue] = QueueEcn("red", rmin, rmax, round(prob * 100), limit)
        elif mode == "nftables":
            speed = int(shape) if shape else ecn.ports.get(port, 0)
            pps = speed * 1_000_000 * ecn.drain_percent // 100 // 8 // avpkt
            burst = -(-kmin // avpkt)
            model.ecn[port, queue] = QueueEcn("nftables", burst * avpkt, drain_pps=pps, burst_packets=burst)
        else:
            model.ecn[port, queue] = QueueEcn("intended", kmin_bytes=kmin)
    if any(m == "nftables" for m in modes.values()):
        model.dscp = dict(ecn.dscp)
    return model


def align_red(actual: KernelModel, intended: KernelModel) -> None:
    """Give each port's RED qdisc the queue the script configured it for (RED itself knows no queues)."""
    for port, queue in list(actual.ecn):
        if queue != "all":
            continue
        target = next((iq for (ip, iq), e in intended.ecn.items() if ip == port and e.mode == "red"), None)
        if target is not None:
            actual.ecn[port, target] = actual.ecn.pop((port, queue))


# --- facts ---------------------------------------------------------------------------------------------------
_FIELD_BITS: dict[str, int] = {k: int(v) for k, v in _DATA["hash_field_bits"].items()}
_V6_ONLY = int(_DATA["ipv6_only_hash_bits"])
_BUILTIN = {
    family: {int(b["policy"]): ",".join(sorted(b["fields"])) for b in policies}
    for family, policies in _DATA["hash_builtin_policies"].items()
}


def hash_fields(family: str, policy: int | None, mask: int | None) -> str | None:
    """What the kernel hashes on: a built-in policy's fixed set, or (policy 3) the field mask."""
    if policy is None:
        return None
    if policy in _BUILTIN.get(family, {}):
        return _BUILTIN[family][policy]
    if policy == 2:
        return "dst_ip,src_ip (inner when encapsulated)"
    if policy == 3 and mask is not None:
        bits = {name for name, bit in _FIELD_BITS.items() if mask & bit and (family == "ipv6" or bit != _V6_ONLY)}
        return ",".join(sorted(bits)) or "none"
    return f"policy {policy}"


def facts(model: KernelModel) -> Facts:
    out: Facts = {}
    for family in ("ipv4", "ipv6"):
        policy = model.sysctl.get(f"net.{family}.fib_multipath_hash_policy")
        fields = hash_fields(family, policy, model.sysctl.get(f"net.{family}.fib_multipath_hash_fields"))
        if fields is not None:
            out[f"hash.fields[{family}]"] = fields
    seed = model.sysctl.get("net.ipv4.fib_multipath_hash_seed")
    if seed is not None:
        out["hash.seed"] = seed
    for name, value in model.sysctl.items():
        if name not in HASH_SYSCTLS:
            out[f"sysctl[{name}]"] = value
    for port, mtu in model.mtu.items():
        out[f"interface[{port}].mtu"] = mtu
    for (port, queue), q in model.ecn.items():
        base = f"interface[{port}].queue[{queue}].ecn"
        out[base] = PRESENT
        for name in ("kmin_bytes", "kmax_bytes", "pmax_percent", "limit_bytes", "drain_pps"):
            value = getattr(q, name)
            if value is not None:
                out[f"{base}.{name}"] = value
    for (family, queue), dscps in model.dscp.items():
        out[f"queue[{queue}].ecn.dscp[{family}]"] = ",".join(str(d) for d in dscps)
    return out


def mode_note(state: Mapping[str, Any]) -> str | None:
    modes = set(port_modes(state).values())
    if modes == {"nftables"}:
        return (
            "ECN marking is the nftables phantom queue (no RED on this kernel): Kmin is compared as the "
            "burst in packets x avpkt, and the drain rate; Kmax and Pmax do not exist in this mode"
        )
    if modes == {"red"}:
        return "ECN marking is tc RED: Kmin, Kmax, Pmax and the limit are compared exactly"
    return None


# --- the kernel's own words, for the raw diff ---------------------------------------------------------------
def _ecn_native(port: str, queue: int | str, q: QueueEcn | None) -> str:
    if q is None or q.mode == "intended":
        return "no marking"
    if q.mode == "red":
        return f"tc qdisc red limit {q.limit_bytes} min {q.kmin_bytes} max {q.kmax_bytes} ({q.pmax_percent} %)"
    return f"nft limit pq{queue}_{port}: rate over {q.drain_pps}/second burst {q.burst_packets} packets"


def native_diff(actual: KernelModel, intended: KernelModel) -> list[str]:
    """What differs, as sysctl/ip/tc/nft would show it: "kernel: X; host script: Y"."""
    out: list[str] = []
    for name in sorted(actual.sysctl.keys() | intended.sysctl.keys()):
        a, i = actual.sysctl.get(name), intended.sysctl.get(name)
        if a != i and i is not None:
            out.append(f"sysctl {name} = {'unset' if a is None else a}; host script: {i}")
    for port in sorted(intended.mtu):
        if actual.mtu.get(port) != intended.mtu[port]:
            out.append(f"ip link {port} mtu {actual.mtu.get(port, 'absent')}; host script: {intended.mtu[port]}")
    for port, queue in sorted(actual.ecn.keys() | intended.ecn.keys(), key=str):
        a_q, i_q = actual.ecn.get((port, queue)), intended.ecn.get((port, queue))
        a_text, i_text = _ecn_native(port, queue, a_q), _ecn_native(port, queue, i_q)
        if i_q is not None and i_q.mode == "intended":
            i_text = f"marking from Kmin {i_q.kmin_bytes} B"
        if a_text != i_text:
            out.append(f"{port} queue {queue}: {a_text}; host script: {i_text}")
    for family, queue in sorted(actual.dscp.keys() | intended.dscp.keys(), key=lambda k: (k[1], FAMILIES.index(k[0]))):
        a_d, i_d = actual.dscp.get((family, queue)), intended.dscp.get((family, queue))
        if a_d != i_d:
            what = "no rule" if a_d is None else f"marks DSCP {','.join(map(str, a_d))}"
            want = "no rule" if i_d is None else f"marks DSCP {','.join(map(str, i_d))}"
            nft = "ip" if family == "ipv4" else "ip6"
            out.append(f"nft {nft} rule for queue {queue}: {what}; host script: {want}")
    return out
