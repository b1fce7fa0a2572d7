"""Juniper Junos `set` lines (or `show configuration` braces, converted) -> facts.

Covered semantically: host name, interfaces (description, MTU, address), forwarding classes (queue, no-loss,
PFC priority), the DSCP classifier (dscp_map[d] = forwarding class), PFC (paused code points, priorities,
watchdog poll/detection/recovery/action), ECN drop profiles (Kmin/Kmax fill level in % of the queue buffer,
Pmax), schedulers (share, strict), hash seed, BGP (ASN, router-id, max ECMP, networks, neighbors).
Other lines: catch-all facts. Junos prints what was configured, defaults included, so nothing is hidden.
"""

from __future__ import annotations

import re

from hier_config import HConfig

from netfab.audit.facts.cli import Defaults
from netfab.audit.facts.clitree import Acc, Tree, extract, rule, scope
from netfab.audit.model import PRESENT, Facts

_COS = r"set class-of-service"


def _unquote(text: str) -> str:
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text


RULES = (
    rule([r"set system host-name (\S+)"], lambda g: [("hostname", g[0])]),
    rule([r"set interfaces (\S+) description (.+)"],
         lambda g: [(f"interface[{g[0]}]", PRESENT), (f"interface[{g[0]}].description", _unquote(g[1]))]),
    rule([r"set interfaces (\S+) mtu (\d+)"], lambda g: [(f"interface[{g[0]}]", PRESENT),
                                                       (f"interface[{g[0]}].mtu", int(g[1]))]),
    rule([r"set interfaces (\S+) unit (\d+) family inet address (\S+)"],
         lambda g: [(f"interface[{g[0]}]", PRESENT), (f"interface[{g[0]}].address", g[2])]),
    rule([_COS + r" forwarding-classes class (\S+) queue-num (\d+)"],
         lambda g: [(f"class[{g[0]}]", PRESENT), (f"class[{g[0]}].queue", int(g[1]))]),
    rule([_COS + r" forwarding-classes class (\S+) no-loss"], lambda g: [(f"class[{g[0]}].lossless", True)]),
    rule([_COS + r" forwarding-classes class (\S+) pfc-priority (\d+)"],
         lambda g: [(f"class[{g[0]}].pfc_priority", int(g[1]))]),
    rule([_COS + r" classifiers dscp (\S+) forwarding-class (\S+) loss-priority (\S+) code-points ([01]{6})"],
         lambda g: [(f"dscp_map[{int(g[3], 2)}]", g[1])]),
    rule([_COS + r" congestion-notification-profile (\S+) input dscp code-point ([01]{6}) pfc"],
         lambda g: [(f"pfc_profile[{g[0]}].dscp", Acc(int(g[1], 2)))]),
    rule([_COS + r" congestion-notification-profile (\S+) output ieee-802.1 code-point ([01]{3})"
                 r" flow-control-queue (\d+)"],
         lambda g: [(f"pfc_profile[{g[0]}].priorities", Acc(int(g[1], 2))),
                    (f"pfc_profile[{g[0]}].priority[{int(g[1], 2)}].queue", int(g[2]))]),
    rule([_COS + r" congestion-notification-profile (\S+) pfc-watchdog poll-interval (\d+)"],
         lambda g: [("watchdog.polling_ms", int(g[1]))]),
    rule([_COS + r" congestion-notification-profile (\S+) pfc-watchdog detection (\d+)"],
         lambda g: [("watchdog.detect_polls", int(g[1]))]),
    rule([_COS + r" congestion-notification-profile (\S+) pfc-watchdog recovery (\d+)"],
         lambda g: [("watchdog.restore_ms", int(g[1]))]),
    rule([_COS + r" congestion-notification-profile (\S+) pfc-watchdog watchdog-action (\S+)"],
         lambda g: [("watchdog.action", g[1])]),
    rule([_COS + r" drop-profiles (\S+) interpolate fill-level (\d+)"],
         lambda g: [(f"drop_profile[{g[0]}].fill_levels", Acc(int(g[1])))]),
    rule([_COS + r" drop-profiles (\S+) interpolate drop-probability (\d+)"],
         lambda g: [(f"drop_profile[{g[0]}].probabilities", Acc(int(g[1])))]),
    rule([_COS + r" schedulers (\S+) transmit-rate percent (\d+)"],
         lambda g: [(f"scheduler[{g[0]}].weight", int(g[1]))]),
    rule([_COS + r" schedulers (\S+) priority (\S+)"], lambda g: [(f"scheduler[{g[0]}].priority", g[1])]),
    rule([r"set forwarding-options enhanced-hash-key hash-seed (\d+)"], lambda g: [("hash.seed", int(g[0]))]),
    rule([r"set routing-options router-id (\S+)"], lambda g: [("bgp.router_id", g[0])]),
    rule([r"set routing-options autonomous-system (\d+)"], lambda g: [("bgp.asn", int(g[0]))]),
    rule([r"set chassis maximum-ecmp (\d+)"], lambda g: [("bgp.max_paths", int(g[0]))]),
    rule([r"set policy-options prefix-list NETFAB-NETWORKS (\S+)"], lambda g: [(f"bgp.network[{g[0]}]", PRESENT)]),
    rule([r"set protocols bgp group (\S+) neighbor (\S+) peer-as (\d+)"],
         lambda g: [(f"bgp.neighbor[{g[1]}]", PRESENT), (f"bgp.neighbor[{g[1]}].remote_as", int(g[2])),
                    (f"bgp.neighbor[{g[1]}].peer_group", g[0])]),
    rule([r"set protocols bgp group (\S+) neighbor (\S+) description (.+)"],
         lambda g: [(f"bgp.neighbor[{g[1]}].description", _unquote(g[2]))]),
)  # fmt: skip

SCOPES = (
    scope(r"set interfaces (\S+) (.+)", "interface[{0}].line[{1}]"),
    scope(r"set class-of-service interfaces (\S+) (.+)", "interface[{0}].line[class-of-service {1}]"),
    scope(r"set protocols bgp group (\S+) (.+)", "bgp.group[{0}].line[{1}]"),
    scope(r"set (.+)", "line[{0}]"),
)

DEFAULTS = Defaults()

_FILL = re.compile(r"drop_profile\[([^\]]*)\]\.(fill_levels|probabilities)")


SECTION_LOCAL = False
"""Set-valued facts (PFC code points, fill levels) gather many lines: facts need the whole config."""


def facts(tree: Tree | HConfig, only: frozenset[str] | None = None) -> Facts:
    out = extract(tree, RULES, SCOPES)
    # interpolate: fill levels (Kmin, Kmax in % of the queue buffer) and drop probabilities (0 -> Pmax)
    for key in [k for k in out if _FILL.fullmatch(k)]:
        m = _FILL.fullmatch(key)
        assert m is not None
        values = [int(v) for v in str(out.pop(key)).split(",")]
        base = f"drop_profile[{m.group(1)}].ecn"
        if m.group(2) == "fill_levels":
            out[f"{base}.kmin_percent"], out[f"{base}.kmax_percent"] = min(values), max(values)
        else:
            out[f"{base}.pmax_percent"] = max(values)
    return out
