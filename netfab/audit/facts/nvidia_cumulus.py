"""NVIDIA Cumulus NVUE (startup.yaml / `nv config show -o yaml`) -> facts.

The document is a list of `set`/`unset` operations; it is folded into one tree first (later entries win,
`unset` removes), so key order and how a config was split across entries never matter.
Covered semantically: hostname, ECMP hash fields and seed, interfaces (description, MTU, addresses,
PFC watchdog, adaptive routing), DSCP -> switch priority and trust, PFC priorities and cable length, the PFC
watchdog (polling, robustness), per-TC ECN (enable, Kmin, Kmax, probability) and scheduling (mode, share),
BGP (ASN, router-id, neighbors, networks, ECMP). Other leaves of what netfab renders: catch-all facts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from netfab.audit.facts.clitree import Acc
from netfab.audit.facts.jsontree import JsonShape, PointerRule, Segments, as_int, prule
from netfab.audit.model import PRESENT, FactValue
from netfab.load.document import load_data
from netfab.render.environment import platform_data

_DATA = platform_data("nvidia_cumulus")
_HASH_NAME = {v: k for k, v in _DATA["ecmp_hash_fields"].items()}
_GLOBAL = "default-global"
_VRF_BGP = "/vrf/default/router/bgp"


# A feature switch is `enable: on|off` up to CL 5.14 and `state: enabled|disabled` from 5.15 (the platform
# record's release_data): both read as the same fact, so a device upgraded in place shows no drift.
_ON = frozenset({"on", "enabled"})


def _switch(value: Any) -> FactValue:
    return "on" if str(value) in _ON else "off"


def _profiled(profile: str, fact: str) -> str:
    return fact if profile == _GLOBAL else f"profile[{profile}].{fact}"


def _iface(field: str, fact: str, convert: Callable[[Any], FactValue] = str) -> PointerRule:
    return prule(
        f"/interface/*/{field}",
        lambda c, v: [(f"interface[{c[0]}]", PRESENT), (f"interface[{c[0]}].{fact}", convert(v))],
    )


def _tc(field: str, fact: str, convert: Callable[[Any], FactValue] = as_int) -> PointerRule:
    return prule(
        f"/qos/congestion-control/*/traffic-class/*/{field}",
        lambda c, v: [(_profiled(c[0], f"queue[{int(c[1])}].ecn.{fact}"), convert(v))],
    )


RULES = (
    prule("/system/hostname", lambda c, v: [("hostname", v)]),
    prule("/system/forwarding/ecmp-hash/*",
          lambda c, v: [("hash.fields", Acc(_HASH_NAME.get(c[0], c[0])))] if v in _ON else []),
    prule("/system/forwarding/hash-seed", lambda c, v: [("hash.seed", as_int(v))]),
    _iface("description", "description"),
    _iface("link/mtu", "mtu", as_int),
    _iface("qos/pfc-watchdog/state", "pfc_watchdog"),
    _iface("router/adaptive-routing/enable", "adaptive_routing", _switch),
    _iface("router/adaptive-routing/state", "adaptive_routing", _switch),
    *(prule(f"/interface/*/{ip}/address/*", lambda c, v: [(f"interface[{c[0]}]", PRESENT),
                                                          (f"interface[{c[0]}].address", Acc(c[1]))])
      for ip in ("ip", "ipv4")),
    prule("/qos/mapping/*/trust", lambda c, v: [(_profiled(c[0], "trust"), v)]),
    prule("/qos/mapping/*/dscp/*/switch-priority", lambda c, v: [(_profiled(c[0], f"dscp_map[{int(c[1])}]"),
                                                                  as_int(v))]),
    prule("/qos/pfc/*/switch-priority/*", lambda c, v: [(_profiled(c[0], "pfc.priorities"), Acc(int(c[1])))]),
    prule("/qos/pfc/*/cable-length", lambda c, v: [(_profiled(c[0], "pfc.cable_length_m"), as_int(v))]),
    prule("/qos/pfc-watchdog/polling-interval", lambda c, v: [("watchdog.polling_ms", as_int(v))]),
    prule("/qos/pfc-watchdog/robustness", lambda c, v: [("watchdog.robustness", as_int(v))]),
    _tc("ecn", "enabled", str),
    _tc("min-threshold", "kmin_bytes"),
    _tc("max-threshold", "kmax_bytes"),
    _tc("probability", "pmax_percent"),
    _tc("red", "red", str),
    prule("/qos/egress-scheduler/*/traffic-class/*/mode",
          lambda c, v: [(_profiled(c[0], f"queue[{int(c[1])}].scheduling"), v)]),
    prule("/qos/egress-scheduler/*/traffic-class/*/bw-percent",
          lambda c, v: [(_profiled(c[0], f"queue[{int(c[1])}].weight"), as_int(v))]),
    prule("/router/bgp/autonomous-system", lambda c, v: [("bgp.asn", as_int(v))]),
    prule("/router/bgp/router-id", lambda c, v: [("bgp.router_id", v)]),
    prule(f"{_VRF_BGP}/neighbor/*/remote-as", lambda c, v: [(f"bgp.neighbor[{c[0]}]", PRESENT),
                                                             (f"bgp.neighbor[{c[0]}].remote_as", as_int(v))]),
    prule(f"{_VRF_BGP}/neighbor/*/description", lambda c, v: [(f"bgp.neighbor[{c[0]}].description", v)]),
    prule(f"{_VRF_BGP}/neighbor/*/type", lambda c, v: [(f"bgp.neighbor[{c[0]}].type", v)]),
    prule(f"{_VRF_BGP}/address-family/ipv4-unicast/network/*", lambda c, v: [(f"bgp.network[{c[0]}]", PRESENT)]),
    prule(f"{_VRF_BGP}/address-family/ipv4-unicast/multipaths/ebgp", lambda c, v: [("bgp.max_paths", as_int(v))]),
)  # fmt: skip


def port_of(segs: Segments) -> str | None:
    return segs[1] if len(segs) >= 2 and segs[0] == "interface" else None


SHAPE = JsonShape(RULES, port_of)
SHARED_ROOTS = {"system": 2}
"""`system` holds device-owned settings (AAA, timezone...) beside hostname and forwarding: netfab owns only
the second-level branches it renders there."""


def parse(text: str) -> Any:
    """Fold the NVUE operation list into one tree."""
    # Bounded like every YAML netfab reads: a config saved for `audit --from-dir` is user input (a 30,000-deep
    # document crashed yaml's composer).
    doc = load_data(text, "NVUE config", "NVUE config")
    if isinstance(doc, dict):
        doc = [doc]
    if not isinstance(doc, list):
        raise ValueError("NVUE config is not a list of set/unset operations")
    tree: dict[str, Any] = {}
    for entry in doc:
        if not isinstance(entry, dict):
            raise ValueError("NVUE config entries must be mappings")
        if isinstance(entry.get("set"), dict):
            _merge(tree, entry["set"])
        if isinstance(entry.get("unset"), dict):
            _unset(tree, entry["unset"])
    return tree


def _merge(base: dict[str, Any], over: dict[str, Any]) -> None:
    for key, value in over.items():
        key = str(key)
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = _copy(value)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _copy(v) for k, v in value.items()}
    return value


def _unset(base: dict[str, Any], what: dict[str, Any]) -> None:
    for key, value in what.items():
        key = str(key)
        if isinstance(value, dict) and value and isinstance(base.get(key), dict):
            _unset(base[key], value)
        else:
            base.pop(key, None)
