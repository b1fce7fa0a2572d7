"""Cisco NX-OS running/intended config -> facts (hier_config tree, grammar of templates/cisco_nxos/).

Covered semantically: hostname, ECMP hash fields and seed (`ip load-sharing ... universal-id`), the DSCP
classification (class-map `match dscp` + policy `set qos-group`, compared as dscp_map[d] = queue whatever the
class names), network-qos (per-queue MTU, PFC priorities), queuing (per-queue DWRR share, strict level, ECN
Kmin/Kmax/Pmax/weight), the PFC watchdog switch, interfaces (description, MTU, address, PFC mode, watchdog,
shutdown, qos policy), BGP (ASN, router-id, max paths, networks, neighbors). Other lines: catch-all facts.
"""

from __future__ import annotations

import re

from hier_config import HConfig

from netfab.audit.facts.cli import Defaults
from netfab.audit.facts.clitree import Acc, Emitted, Tree, extract, rule, scope, to_bytes
from netfab.audit.model import PRESENT, Facts

_BGP = r"router bgp \d+"
_QUEUING = r"policy-map type queuing (\S+)"
_NQ = r"policy-map type network-qos (\S+)"
_QCLASS = r"class type queuing c-out-8q-q(\d|-default)"
_NQCLASS = r"class type network-qos c-8q-nq(\d|-default)"


def _q(text: str) -> int:
    return 0 if text == "-default" else int(text)


def _dscps(spec: str) -> list[int]:
    """`match dscp 26`, `26,27`, `10-12` -> DSCP numbers (names such as af31 are kept out: none rendered)."""
    out: list[int] = []
    for part in re.split(r"[,\s]+", spec.strip()):
        if "-" in part:
            lo, hi = part.split("-", 1)
            out.extend(range(int(lo), int(hi) + 1))
        elif part.isdigit():
            out.append(int(part))
    return out


def _hash(g: tuple[str, ...]) -> Emitted:
    fields = ["src_ip", "dst_ip", *(["src_port", "dst_port"] if g[0] else [])]
    return [("hash.fields[ipv4]", ",".join(sorted(fields))), ("hash.seed", int(g[1]))]


def _ecn(g: tuple[str, ...]) -> Emitted:
    policy, queue, kmin, kmin_unit, kmax, kmax_unit, pmax, weight = g
    base = f"policy[{policy}].queue[{_q(queue)}].ecn"
    return [
        (f"{base}.kmin_bytes", to_bytes(kmin, kmin_unit)),
        (f"{base}.kmax_bytes", to_bytes(kmax, kmax_unit)),
        (f"{base}.pmax_percent", int(pmax)),
        (f"{base}.weight", int(weight or 0)),
    ]


RULES = (
    rule([r"hostname (\S+)"], lambda g: [("hostname", g[0])]),
    rule([r"ip load-sharing address source-destination( port source-destination)? universal-id (\d+)"], _hash),
    rule([r"priority-flow-control watch-dog-interval (on|off)"], lambda g: [("watchdog.enabled", g[0] == "on")]),
    # classification: class-map DSCPs joined to the policy's qos-group in finish()
    rule([r"class-map type qos match-(?:any|all) (\S+)"], lambda g: [(f"class_map[{g[0]}]", PRESENT)]),
    rule([r"class-map type qos match-(?:any|all) (\S+)", r"match dscp (.+)"],
         lambda g: [(f"class_map[{g[0]}].dscp", Acc(d)) for d in _dscps(g[1])]),
    rule([r"policy-map type qos (\S+)"], lambda g: [(f"classify[{g[0]}]", PRESENT)]),
    rule([r"policy-map type qos (\S+)", r"class (\S+)", r"set qos-group (\d+)"],
         lambda g: [(f"classify[{g[0]}].class[{g[1]}].qos_group", int(g[2]))]),
    # network-qos: MTU per system class, PFC (no-drop) priorities
    rule([_NQ], lambda g: [(f"policy[{g[0]}]", PRESENT)]),
    rule([_NQ, _NQCLASS], lambda g: [(f"policy[{g[0]}].queue[{_q(g[1])}]", PRESENT)]),
    rule([_NQ, _NQCLASS, r"mtu (\d+)"], lambda g: [(f"policy[{g[0]}].queue[{_q(g[1])}].mtu", int(g[2]))]),
    rule([_NQ, _NQCLASS, r"pause pfc-cos ([\d ]+)"],
         lambda g: [(f"policy[{g[0]}].pfc.priorities", Acc(int(p))) for p in g[2].split()]),
    # queuing: DWRR share, strict priority, ECN
    rule([_QUEUING], lambda g: [(f"policy[{g[0]}]", PRESENT)]),
    rule([_QUEUING, _QCLASS], lambda g: [(f"policy[{g[0]}].queue[{_q(g[1])}]", PRESENT)]),
    rule([_QUEUING, _QCLASS, r"bandwidth remaining percent (\d+)"],
         lambda g: [(f"policy[{g[0]}].queue[{_q(g[1])}].scheduling", "dwrr"),
                    (f"policy[{g[0]}].queue[{_q(g[1])}].weight", int(g[2]))]),
    rule([_QUEUING, _QCLASS, r"priority level (\d+)"],
         lambda g: [(f"policy[{g[0]}].queue[{_q(g[1])}].scheduling", f"strict level {g[2]}")]),
    rule([_QUEUING, _QCLASS,
          r"random-detect minimum-threshold (\d+) (\w+) maximum-threshold (\d+) (\w+)"
          r" drop-probability (\d+)(?: weight (\d+))? ecn"], _ecn),
    # interfaces
    rule([r"interface (\S+)"], lambda g: [(f"interface[{g[0]}]", PRESENT)]),
    rule([r"interface (\S+)", r"description (.*)"], lambda g: [(f"interface[{g[0]}].description", g[1])]),
    rule([r"interface (\S+)", r"mtu (\d+)"], lambda g: [(f"interface[{g[0]}].mtu", int(g[1]))]),
    rule([r"interface (\S+)", r"ip address (\S+)"], lambda g: [(f"interface[{g[0]}].address", g[1])]),
    rule([r"interface (\S+)", r"priority-flow-control mode (\S+)"], lambda g: [(f"interface[{g[0]}].pfc", g[1])]),
    rule([r"interface (\S+)", r"priority-flow-control watch-dog-interval (on|off)"],
         lambda g: [(f"interface[{g[0]}].pfc_watchdog", g[1] == "on")]),
    rule([r"interface (\S+)", r"service-policy type qos input (\S+)"],
         lambda g: [(f"interface[{g[0]}].qos_policy", g[1])]),
    rule([r"interface (\S+)", r"(no )?shutdown"], lambda g: [(f"interface[{g[0]}].shutdown", not g[1])]),
    # BGP
    rule([r"router bgp (\d+)"], lambda g: [("bgp.asn", int(g[0]))]),
    rule([_BGP, r"router-id (\S+)"], lambda g: [("bgp.router_id", g[0])]),
    rule([_BGP, r"address-family ipv4 unicast", r"network (\S+)"], lambda g: [(f"bgp.network[{g[0]}]", PRESENT)]),
    rule([_BGP, r"address-family ipv4 unicast", r"maximum-paths (\d+)"], lambda g: [("bgp.max_paths", int(g[0]))]),
    rule([_BGP, r"neighbor (\S+)"], lambda g: [(f"bgp.neighbor[{g[0]}]", PRESENT)]),
    rule([_BGP, r"neighbor (\S+)", r"remote-as (\S+)"],
         lambda g: [(f"bgp.neighbor[{g[0]}].remote_as", int(g[1]) if g[1].isdigit() else g[1])]),
    rule([_BGP, r"neighbor (\S+)", r"description (.*)"], lambda g: [(f"bgp.neighbor[{g[0]}].description", g[1])]),
    rule([_BGP, r"neighbor (\S+)", r"bfd"], lambda g: [(f"bgp.neighbor[{g[0]}].bfd", True)]),
    rule([_BGP, r"neighbor (\S+)", r"address-family (\S+) unicast"],
         lambda g: [(f"bgp.neighbor[{g[0]}].af_{g[1]}", True)]),
)  # fmt: skip

SCOPES = (
    scope(r"interface (\S+)", "interface[{0}]"),
    scope(_BGP, "bgp"),
    scope(r"policy-map type \S+ (\S+)", "policy[{0}]"),
    scope(r"class-map type \S+ \S+ (\S+)", "class_map[{0}]"),
)

# A queuing class with no bandwidth statement is a DWRR class with no share; NX-OS prints no line for it [S].
DEFAULTS = Defaults.of(
    {
        r"policy\[[^\]]*\]\.queue\[\d+\]\.weight": 0,
        r"policy\[[^\]]*\]\.queue\[\d+\]\.scheduling": "dwrr",
    }
)

_CLASS_DSCP = re.compile(r"class_map\[([^\]]*)\]\.dscp")
_CLASS_GROUP = re.compile(r"classify\[[^\]]*\]\.class\[([^\]]*)\]\.qos_group")


SECTION_LOCAL = False
"""The DSCP map joins class-maps and the qos policy-map: facts need the whole config."""


def facts(tree: Tree | HConfig, only: frozenset[str] | None = None) -> Facts:
    out = extract(tree, RULES, SCOPES)
    # DSCP -> queue through the class names: what the switch does, not what the classes are called
    groups = {m.group(1): v for k, v in out.items() if (m := _CLASS_GROUP.fullmatch(k))}
    for key, match in [(k, m) for k in out if (m := _CLASS_DSCP.fullmatch(k))]:
        name = match.group(1)
        dscps = str(out.pop(key))
        if name in groups:
            for d in dscps.split(","):
                out[f"dscp_map[{d}]"] = groups[name]
    if "class-default" in groups:
        out["dscp_map.default"] = groups["class-default"]
    return out
