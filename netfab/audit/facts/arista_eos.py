"""Arista EOS running/intended config -> facts (hier_config tree, EOS grammar of templates/arista_eos/).

Covered semantically: hostname, ECMP hash fields, DSCP -> traffic class, PFC watchdog timers and action,
qos profiles (trust, per-queue scheduling/weight/ECN Kmin-Kmax-Pmax-weight, PFC priorities and watchdog),
interfaces (description, MTU, address, qos profile), BGP (ASN, router-id, max paths, neighbors with peer
group/remote AS/description, networks). Every other line is compared as a catch-all fact.
"""

from __future__ import annotations

from hier_config import HConfig

from netfab.audit.facts.cli import Defaults
from netfab.audit.facts.clitree import Acc, Emitted, Tree, extract, rule, scope, to_bytes
from netfab.audit.model import PRESENT, Facts
from netfab.render.environment import platform_data

_DATA = platform_data("arista_eos")
_HASH_FIELD = {kw: name for name, kw in {**_DATA["trident_fields"], **_DATA["trident_ipv6_only"]}.items()}
_WATCHDOG_ACTION = {v["global"]: k for k, v in _DATA["watchdog_action"].items() if "global" in v}
_QUEUE = r"(?:uc-)?tx-queue (\d+)"
_BGP = r"router bgp \d+"


def _asn(text: str) -> int | str:
    return int(text) if text.isdigit() else text


def _hash(g: tuple[str, ...]) -> Emitted:
    family = "ipv4" if g[0] == "ip" else "ipv6"
    fields = sorted(_HASH_FIELD.get(kw, kw) for kw in g[1].split())
    return [(f"hash.fields[{family}]", ",".join(fields))]


def _ecn(g: tuple[str, ...]) -> Emitted:
    profile, queue, kmin, kmin_unit, kmax, kmax_unit, pmax, weight = g
    base = f"profile[{profile}].queue[{queue}].ecn"
    out = [
        (f"{base}.kmin_bytes", to_bytes(kmin, kmin_unit)),
        (f"{base}.kmax_bytes", to_bytes(kmax, kmax_unit)),
        (f"{base}.pmax_percent", int(pmax)),
    ]
    if weight is not None:
        out.append((f"{base}.weight", int(weight)))
    return out


def _seconds_ms(text: str) -> int:
    return round(float(text) * 1000)


RULES = (
    rule([r"hostname (\S+)"], lambda g: [("hostname", g[0])]),
    rule([r"ip load-sharing trident fields (ip|ipv6) (.+)"], _hash),
    rule(
        [r"qos map dscp ([\d ]+) to traffic-class (\d+)"],
        lambda g: [(f"dscp_map[{int(d)}]", int(g[1])) for d in g[0].split()],
    ),
    rule([r"priority-flow-control pause watchdog default timeout (\S+)"],
         lambda g: [("watchdog.detect_ms", _seconds_ms(g[0]))]),
    rule([r"priority-flow-control pause watchdog default recovery-time (\S+)"],
         lambda g: [("watchdog.restore_ms", _seconds_ms(g[0]))]),
    rule([r"priority-flow-control pause watchdog default polling-interval (\S+)"],
         lambda g: [("watchdog.polling_ms", _seconds_ms(g[0]))]),
    rule([r"priority-flow-control pause watchdog action (\S+)"],
         lambda g: [("watchdog.action", _WATCHDOG_ACTION.get(g[0], g[0]))]),
    # qos profiles
    rule([r"qos profile (\S+)"], lambda g: [(f"profile[{g[0]}]", PRESENT)]),
    rule([r"qos profile (\S+)", r"qos trust (\S+)"], lambda g: [(f"profile[{g[0]}].trust", g[1])]),
    rule([r"qos profile (\S+)", r"((?:uc-)?tx-queue) (\d+)"],
         lambda g: [(f"profile[{g[0]}].queue[{g[2]}]", PRESENT), (f"profile[{g[0]}].queue[{g[2]}].keyword", g[1])]),
    rule([r"qos profile (\S+)", _QUEUE, r"priority strict"],
         lambda g: [(f"profile[{g[0]}].queue[{g[1]}].scheduling", "strict")]),
    rule([r"qos profile (\S+)", _QUEUE, r"no priority"],
         lambda g: [(f"profile[{g[0]}].queue[{g[1]}].scheduling", "dwrr")]),
    rule([r"qos profile (\S+)", _QUEUE, r"bandwidth percent (\d+)"],
         lambda g: [(f"profile[{g[0]}].queue[{g[1]}].weight", int(g[2]))]),
    rule(
        [r"qos profile (\S+)", _QUEUE,
         r"random-detect ecn minimum-threshold (\d+) (\w+) maximum-threshold (\d+) (\w+)"
         r" max-mark-probability (\d+)(?: weight (\d+))?"],
        _ecn,
    ),
    rule([r"qos profile (\S+)", r"priority-flow-control on"], lambda g: [(f"profile[{g[0]}].pfc.enabled", True)]),
    rule([r"qos profile (\S+)", r"no priority-flow-control"], lambda g: [(f"profile[{g[0]}].pfc.enabled", False)]),
    rule([r"qos profile (\S+)", r"priority-flow-control priority (\d+) no-drop"],
         lambda g: [(f"profile[{g[0]}].pfc.priorities", Acc(int(g[1])))]),
    rule([r"qos profile (\S+)", r"priority-flow-control pause watchdog"],
         lambda g: [(f"profile[{g[0]}].pfc.watchdog", True)]),
    rule([r"qos profile (\S+)", r"priority-flow-control pause watchdog port action (\S+)"],
         lambda g: [(f"profile[{g[0]}].pfc.watchdog_action", g[1])]),
    # interfaces
    rule([r"interface (\S+)"], lambda g: [(f"interface[{g[0]}]", PRESENT)]),
    rule([r"interface (\S+)", r"description (.*)"], lambda g: [(f"interface[{g[0]}].description", g[1])]),
    rule([r"interface (\S+)", r"mtu (\d+)"], lambda g: [(f"interface[{g[0]}].mtu", int(g[1]))]),
    rule([r"interface (\S+)", r"ip address (\S+)"], lambda g: [(f"interface[{g[0]}].address", g[1])]),
    rule([r"interface (\S+)", r"service-profile (\S+)"], lambda g: [(f"interface[{g[0]}].qos_profile", g[1])]),
    # BGP
    rule([r"router bgp (\d+)"], lambda g: [("bgp.asn", int(g[0]))]),
    rule([_BGP, r"router-id (\S+)"], lambda g: [("bgp.router_id", g[0])]),
    rule([_BGP, r"maximum-paths (\d+)(?: ecmp (\d+))?"],
         lambda g: [("bgp.max_paths", int(g[0])), *([("bgp.max_ecmp", int(g[1]))] if g[1] else [])]),
    rule([_BGP, r"neighbor (\S+) peer group"], lambda g: [(f"bgp.peer_group[{g[0]}]", PRESENT)]),
    rule([_BGP, r"neighbor (\S+) peer group (\S+)"],
         lambda g: [(f"bgp.neighbor[{g[0]}]", PRESENT), (f"bgp.neighbor[{g[0]}].peer_group", g[1])]),
    rule([_BGP, r"neighbor (\S+) remote-as (\S+)"], lambda g: [(f"bgp.neighbor[{g[0]}].remote_as", _asn(g[1]))]),
    rule([_BGP, r"neighbor (\S+) description (.*)"], lambda g: [(f"bgp.neighbor[{g[0]}].description", g[1])]),
    rule(
        [_BGP, r"neighbor interface (\S+) peer-group (\S+) remote-as (\S+)"],
        lambda g: [
            (f"bgp.neighbor[{g[0]}]", PRESENT),
            (f"bgp.neighbor[{g[0]}].peer_group", g[1]),
            (f"bgp.neighbor[{g[0]}].remote_as", _asn(g[2])),
        ],
    ),
    rule([_BGP, r"address-family \S+", r"network (\S+)"], lambda g: [(f"bgp.network[{g[0]}]", PRESENT)]),
)  # fmt: skip

SCOPES = (
    scope(r"interface (\S+)", "interface[{0}]"),
    scope(_BGP, "bgp"),
    scope(r"qos profile (\S+)", "profile[{0}]"),
)

# What EOS leaves out of `show running-config` because it is the default (default lines such as an
# interface's `no shutdown` are dropped while cleaning: textconfig.EOS).
DEFAULTS = Defaults.of({r"profile\[[^\]]*\]\.queue\[\d+\]\.ecn\.weight": 0})  # `weight 0` may be omitted


SECTION_LOCAL = True
"""Every EOS fact comes from inside one top-level section: facts of the sections that differ suffice."""


def facts(tree: Tree | HConfig, only: frozenset[str] | None = None) -> Facts:
    return extract(tree, RULES, SCOPES, only)
