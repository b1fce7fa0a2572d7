"""The frr platform's kernel-state contract: what the host script (`<name>.sh`) sets, as the kernel has it now.

One home for the three pieces that must agree: the shell command the driver runs on the device (`COMMAND`),
the parser of its output (`parse`), and the typed shape both the driver (FRRDriver.get_kernel_state) and the
audit (audit/facts/linux.py, online or from a saved <device>.state.json: `load`) use (`KernelState`).

Address families are kept apart wherever the kernel keeps them apart: the hash sysctls exist per family, and
each ECN-marking nft rule matches one family (`ip` or `ip6`). A kernel whose IPv4 rule was deleted while the
IPv6 one stayed marks no RoCEv2-over-IPv4 packet, and must not look like one that marks both.

No I/O here: the module is pure so the audit can use it without a device.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict, cast

FAMILIES: tuple[Literal["ipv4"], Literal["ipv6"]] = ("ipv4", "ipv6")
Family = Literal["ipv4", "ipv6"]
EcnMode = Literal["red", "nftables", "off", "mixed"]
_NFT_FAMILY: dict[str, Family] = {"ip": "ipv4", "ip6": "ipv6"}


class RedQdisc(TypedDict):
    """tc RED as root qdisc (bytes; probability as a fraction)."""

    limit: int
    min: int
    max: int
    probability: float
    ecn: bool


class PhantomQueue(TypedDict):
    """One nftables phantom-queue limit: drain rate and burst, in packets."""

    rate_pps: int
    burst_packets: int


class PortEcn(TypedDict, total=False):
    red: RedQdisc
    nftables: dict[str, PhantomQueue]
    """queue (as a string, JSON keys) -> its limit on this port"""


class Link(TypedDict):
    mtu: int
    kind: str | None


class EcnState(TypedDict):
    mode: EcnMode
    ports: dict[str, PortEcn]
    dscp: dict[Family, dict[str, list[int]]]
    """per address family: queue -> the DSCPs that family's nft rule CE-marks (nftables mode)"""


class KernelState(TypedDict):
    sysctl: dict[str, int]
    """knobs this kernel has (hash policy/fields/seed per family, forwarding, rp_filter)"""
    links: dict[str, Link]
    ecn: EcnState
    env: dict[str, str]
    """the environment the driver runs host scripts with (NETFAB_ECN_AVPKT, NETFAB_SHAPE_MBIT)"""
    version: NotRequired[int]


VERSION = 2
"""2: `ecn.dscp` per address family (1, unversioned, merged the ip and ip6 rules)."""

SYSCTLS: tuple[str, ...] = (
    *(f"net.{fam}.fib_multipath_hash_{knob}" for fam in FAMILIES for knob in ("policy", "fields", "seed")),
    "net.ipv4.ip_forward",
    "net.ipv6.conf.all.forwarding",
    "net.ipv4.conf.all.rp_filter",
    "net.ipv4.conf.default.rp_filter",
)
NFT_TABLE = "inet netfab_ecn"

# One round trip: /proc/sys, `ip -j -d link`, `tc -d -j qdisc`, `nft -j list table`, split by @@ markers.
_SCRIPT = (
    f"for k in {' '.join(SYSCTLS)}; do f=/proc/sys/$(echo $k | tr . /); "
    '[ -r "$f" ] && echo "$k $(cat "$f")"; done; '
    "echo @@links; ip -j -d link show; echo; echo @@tc; tc -d -j qdisc show 2>/dev/null; echo; "
    f"echo @@nft; nft -j list table {NFT_TABLE} 2>/dev/null; echo"
)
COMMAND = f"sh -c {shlex.quote(_SCRIPT)}"
"""Run as root on the device (the driver adds sudo where the platform needs it)."""

_PER_SECOND = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800}
_DSCP_NAMES: dict[str, int] = {
    **{f"cs{n}": n * 8 for n in range(8)},
    **{f"af{c}{d}": c * 8 + d * 2 for c in (1, 2, 3, 4) for d in (1, 2, 3)},
    "df": 0,
    "be": 0,
    "lephb": 1,
    "va": 44,
    "ef": 46,
}


def parse(output: str, env: Mapping[str, object] | None = None) -> KernelState:
    """COMMAND's output -> KernelState. `env`: the host-script environment the driver uses."""
    sections: dict[str, str] = {"sysctl": ""}
    current = "sysctl"
    for line in output.splitlines():
        if line.startswith("@@"):
            current = line[2:].strip()
            sections[current] = ""
        else:
            sections[current] += line + "\n"

    def load_json(name: str) -> Any:
        text = sections.get(name, "").strip()
        return json.loads(text) if text else None

    sysctl: dict[str, int] = {}
    for line in sections["sysctl"].splitlines():
        key, _, value = line.partition(" ")
        if value.strip().lstrip("-").isdigit():
            sysctl[key] = int(value.strip())
    links: dict[str, Link] = {
        str(link["ifname"]): {"mtu": int(link.get("mtu", 0)), "kind": (link.get("linkinfo") or {}).get("info_kind")}
        for link in load_json("links") or []
        if link.get("ifname") and link.get("ifname") != "lo"
    }
    ports: dict[str, PortEcn] = {}
    for qdisc in load_json("tc") or []:
        if qdisc.get("kind") == "red" and qdisc.get("dev"):
            opts = qdisc.get("options") or {}
            ports.setdefault(str(qdisc["dev"]), {})["red"] = {
                "limit": int(opts.get("limit", 0)),
                "min": int(opts.get("min", 0)),
                "max": int(opts.get("max", 0)),
                "probability": float(opts.get("probability", 0.0)),
                "ecn": bool(opts.get("ecn", False)),
            }
    dscp = _nft_into(load_json("nft") or {}, ports)
    kinds = {k for info in ports.values() for k in info}
    mode: EcnMode = "off" if not kinds else cast(EcnMode, kinds.pop()) if len(kinds) == 1 else "mixed"
    return {
        "sysctl": sysctl,
        "links": links,
        "ecn": {"mode": mode, "ports": ports, "dscp": dscp},
        "env": {str(k): str(v) for k, v in dict(env or {}).items()},
        "version": VERSION,
    }


def _nft_into(table: Mapping[str, Any], ports: dict[str, PortEcn]) -> dict[Family, dict[str, list[int]]]:
    """The phantom queue: map pq<queue> = {port: limit name}, limit objects hold rate and burst; each rule
    that CE-marks one family's packets through a pq map names the DSCPs of that family and queue."""
    limits: dict[str, dict[str, Any]] = {}
    maps: dict[str, list[Any]] = {}
    dscp: dict[Family, dict[str, list[int]]] = {}
    for item in table.get("nftables", []):
        if "limit" in item:
            limits[item["limit"]["name"]] = item["limit"]
        elif "map" in item and str(item["map"].get("name", "")).startswith("pq"):
            maps[item["map"]["name"][2:]] = item["map"].get("elem") or []
        elif "rule" in item:
            for family, queue, values in _marking_rule(item["rule"].get("expr") or []):
                marked = dscp.setdefault(family, {}).setdefault(queue, [])
                marked.extend(v for v in values if v not in marked)
    for queue, elems in maps.items():
        for port, limit_name in elems:
            lim = limits.get(limit_name) or {}
            if not lim or lim.get("rate_unit", "packets") != "packets":
                continue
            rate = int(lim.get("rate", 0)) // _PER_SECOND.get(str(lim.get("per", "second")), 1)
            ports.setdefault(str(port), {}).setdefault("nftables", {})[queue] = {
                "rate_pps": rate,
                "burst_packets": int(lim.get("burst", 0)),
            }
    return {fam: {q: sorted(ds) for q, ds in queues.items()} for fam, queues in dscp.items()}


def _marking_rule(exprs: list[dict[str, Any]]) -> list[tuple[Family, str, list[int]]]:
    """(family, queue, DSCPs) of a rule that matches DSCPs of one family, goes through a pq map and sets CE
    in the same family; [] for any other rule (a rule that matches but no longer marks does not count)."""
    queue = next(
        (str(e["limit"]["map"]["data"]).lstrip("@")[2:] for e in exprs if "map" in (e.get("limit") or {})),
        None,
    )
    if queue is None:
        return []
    marks = {
        _NFT_FAMILY.get(str(((e.get("mangle") or {}).get("key") or {}).get("payload", {}).get("protocol")))
        for e in exprs
        if (e.get("mangle") or {}).get("value") == "ce"
    }
    out: list[tuple[Family, str, list[int]]] = []
    for e in exprs:
        match = e.get("match") or {}
        payload = (match.get("left") or {}).get("payload", {})
        family = _NFT_FAMILY.get(str(payload.get("protocol")))
        if payload.get("field") != "dscp" or family is None or family not in marks:
            continue
        right = match.get("right")
        values = right["set"] if isinstance(right, dict) and "set" in right else [right]
        numbers = [v if isinstance(v, int) else _DSCP_NAMES.get(str(v)) for v in values]
        out.append((family, queue, [n for n in numbers if n is not None]))
    return out


class StateError(ValueError):
    """A saved or collected kernel state that does not have the KernelState shape."""


def load(data: object) -> KernelState:
    """Check a kernel state read from JSON (<device>.state.json, or a driver's answer) against the contract."""
    if not isinstance(data, dict):
        raise StateError(f"kernel state must be a JSON object, not {type(data).__name__}")
    for key, kind in (("sysctl", dict), ("links", dict), ("ecn", dict)):
        if not isinstance(data.get(key), kind):
            raise StateError(f"kernel state: {key!r} missing or not an object")
    ecn = data["ecn"]
    dscp = ecn.get("dscp") or {}
    if not isinstance(dscp, dict) or any(fam not in FAMILIES or not isinstance(q, dict) for fam, q in dscp.items()):
        raise StateError(
            "kernel state: ecn.dscp must be per address family ({'ipv4': {queue: [dscp...]}, 'ipv6': ...}); "
            "a state saved by an older netfab merged the families: save it again with this version"
        )
    if not isinstance(ecn.get("ports", {}), dict):
        raise StateError("kernel state: ecn.ports must be an object")
    return cast(KernelState, data)
