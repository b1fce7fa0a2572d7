"""Fact paths and values in an engineer's words: "ECN Kmax on queue 3", "1,500 KB", "200 ms".

Labels are looked up by the tail of the (normalised) path, so one table serves every platform: EOS
``profile[P].queue[3].ecn.kmax_bytes``, NVUE ``queue[3].ecn.kmax_bytes`` and the Linux kernel's
``interface[swp1].queue[3].ecn.kmin_bytes`` read the same.
"""

from __future__ import annotations

import re

from netfab.audit.model import PRESENT, FactValue

_LABELS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), t)
    for p, t in (
        (r"queue\[(\d+)\]\.ecn\.kmin_bytes$", "ECN Kmin on queue {0}"),
        (r"queue\[(\d+)\]\.ecn\.kmax_bytes$", "ECN Kmax on queue {0}"),
        (r"queue\[(\d+)\]\.ecn\.pmax_percent$", "ECN max marking probability on queue {0}"),
        (r"queue\[(\d+)\]\.ecn\.weight$", "ECN averaging weight on queue {0}"),
        (r"queue\[(\d+)\]\.ecn\.drain_pps$", "ECN phantom-queue drain rate on queue {0}"),
        (r"queue\[(\d+)\]\.ecn\.limit_bytes$", "RED hard limit on queue {0}"),
        (r"queue\[(\d+)\]\.ecn\.(?:enabled|red)$", "ECN/RED switch on queue {0}"),
        (r"queue\[(\d+)\]\.ecn\.dscp\[(ipv4|ipv6)\]$", "DSCPs ECN-marked on queue {0} ({1})"),
        (r"queue\[(\d+)\]\.ecn$", "ECN marking on queue {0}"),
        (r"\.ecn\.kmin_bytes$", "ECN Kmin"),
        (r"\.ecn\.kmax_bytes$", "ECN Kmax"),
        (r"\.ecn\.kmin_percent$", "ECN Kmin fill level"),
        (r"\.ecn\.kmax_percent$", "ECN Kmax fill level"),
        (r"\.ecn\.pmax_percent$", "ECN max marking probability"),
        (r"\.ecn\.mode$", "ECN mode"),
        (r"queue\[(\d+)\]\.scheduling$", "scheduling of queue {0}"),
        (r"queue\[(\d+)\]\.weight$", "DWRR share of queue {0}"),
        (r"queue\[(\d+)\]\.mtu$", "MTU of queue {0}'s class"),
        (r"queue\[(\d+)\]\.keyword$", "queue keyword of queue {0}"),
        (r"queue\[(\d+)\]\.(scheduler|wred_profile)$", "{1} of queue {0}"),
        (r"queue\[(\d+)\]$", "queue {0}"),
        (r"scheduler\[[^\]]*\]\.scheduling$", "scheduler type"),
        (r"scheduler\[[^\]]*\]\.weight$", "scheduler share"),
        (r"dscp_map\[(\d+)\]$", "DSCP {0} mapping"),
        (r"dscp_map\.default$", "default DSCP mapping"),
        (r"pfc\.priorities$", "PFC priorities"),
        (r"pfc\.enabled$", "PFC"),
        (r"pfc\.watchdog$", "PFC watchdog on the port"),
        (r"watchdog\.detect_ms$", "PFC watchdog detect time"),
        (r"watchdog\.restore_ms$", "PFC watchdog restore time"),
        (r"watchdog\.polling_ms$", "PFC watchdog polling interval"),
        (r"watchdog\.detect_polls$", "PFC watchdog detection (polls)"),
        (r"watchdog\.robustness$", "PFC watchdog robustness"),
        (r"watchdog\.action$", "PFC watchdog action"),
        (r"watchdog\.enabled$", "PFC watchdog"),
        (r"hash\.fields\[(\w+)\]$", "ECMP hash fields ({0})"),
        (r"hash\.fields$", "ECMP hash fields"),
        (r"hash\.seed$", "ECMP hash seed"),
        (r"bgp\.neighbor\[\*\]$", "BGP neighbor"),
        (r"bgp\.neighbor\[\*\]\.remote_as$", "BGP neighbor remote AS"),
        (r"bgp\.neighbor\[\*\]\.(\w+)$", "BGP neighbor {0}"),
        (r"bgp\.network\[\*\]$", "BGP network"),
        (r"bgp\.peer_group\[([^\]]*)\]$", "BGP peer group {0}"),
        (r"bgp\.asn$", "BGP ASN"),
        (r"bgp\.router_id$", "BGP router-id"),
        (r"bgp\.(?:\w+\.)?max_paths$", "BGP maximum-paths"),
        (r"interface\[\*\]$", "interface"),
        (r"interface\[\*\]\.mtu$", "MTU"),
        (r"interface\[\*\]\.(\w+)$", "interface {0}"),
        (r"sysctl\[([^\]]+)\]$", "sysctl {0}"),
        (r"\.?line\[(.*)\]$", "config line '{0}'"),
        (r"\.?config\[(.*)\]$", "setting {0}"),
        (r"^hostname$", "hostname"),
    )
)
_CONTEXT = re.compile(
    r"^(?:frr\.)?(profile|policy|wred_profile|drop_profile|scheduler|classify|class_map|class)\[([^\]]+)\]"
)
_CONTEXT_WORDS = {
    "profile": "qos profile",
    "policy": "policy-map",
    "wred_profile": "WRED profile",
    "drop_profile": "drop profile",
    "scheduler": "scheduler",
    "classify": "qos policy",
    "class_map": "class-map",
    "class": "forwarding class",
}


def label(kind: str) -> str:
    """`kind` is a normalised path (facts.paths.normalise)."""
    for pattern, template in _LABELS:
        if m := pattern.search(kind):
            text = template.format(*m.groups())
            break
    else:
        text = kind
    if m := _CONTEXT.match(kind):
        text += f" ({_CONTEXT_WORDS[m.group(1)]} {m.group(2)})"
    if kind.startswith("frr."):
        text += " (FRR)"
    return text


def value(path: str, v: FactValue | None) -> str:
    if v is None:
        return "absent"
    if v == PRESENT:
        return "present"
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, int) and path.endswith("_bytes"):
        return f"{v // 1000:,} KB" if v % 1000 == 0 else f"{v / 1000:,.1f} KB"
    if isinstance(v, int) and path.endswith("_ms"):
        return f"{v} ms"
    if isinstance(v, int | float) and path.endswith("_percent"):
        return f"{v:g} %"
    if isinstance(v, int) and path.endswith("_pps"):
        return f"{v:,} pkt/s"
    return str(v)
