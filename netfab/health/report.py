"""The health report through the shared findings model: one Finding per port and problem (subject = device,
path = device:port), the fleet-grouped sentences and the tail tables as the text preamble and the JSON details.

Grouping is audit's (netfab.audit.group.summarise): "PFC pause storm on priority 3 on 5 leaves (rail 2, pod 1);
root leaf2 swp3", so a pattern (one rail? one pod?) shows before the port list does.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from netfab.audit.group import summarise
from netfab.audit.model import DeviceMeta
from netfab.core.findings import Finding, RuleInfo, Severity, Status
from netfab.health.analysis import SLOW_SIGNALS, HealthReport, Issue
from netfab.health.model import PortMeta

_CHECK = "compare the port with its peers in the JSON report (details.ports); `netfab health --watch` follows it"
RULES = (
    RuleInfo(
        "HEALTH-SLOW-LINK",
        "slow but up",
        Severity.ERROR,
        "A link is up and error-free yet slow: a time-integral signal (shaper overlimits, time paused by PFC, queue "
        "watermark, busy time against peak rate) is an outlier against its peers. In a collective every GPU waits "
        "for the slowest path, so one such link sets the step time of the whole job.",
        hint="check the link's optics, FEC and speed, and the NIC behind it; drain it from the job if it stays slow",
    ),
    RuleInfo("HEALTH-PFC-STORM", "PFC pause storm", Severity.ERROR,
             "Ports are held by PFC pauses on a lossless priority most of the window; the root is where they start.",
             hint="look at the root port's receiver (a slow NIC, a stuck queue); the PFC watchdog should break it"),
    RuleInfo("HEALTH-PFCWD", "PFC watchdog event", Severity.ERROR,
             "The PFC watchdog detected a storm or deadlock on a queue in the window.", hint=_CHECK),
    RuleInfo("HEALTH-ECN", "ECN and DCQCN disagree", Severity.WARNING,
             "ECN marks with DCQCN off (nothing reacts), congestion with DCQCN on but no marks (ECN thresholds or "
             "marking broken), or CE-marked packets at a NIC that sends no CNPs.",
             hint="compare the ECN profile and the NIC's DCQCN settings with the intent (`netfab audit`)"),
    RuleInfo("HEALTH-LOSSLESS-DROP", "drops on a lossless class", Severity.ERROR,
             "A lossless (PFC) queue dropped packets: headroom too small, PFC off on one side, or a watchdog drop.",
             hint="`netfab analyze` sizes the headroom; `netfab audit` checks PFC on both ends"),
    RuleInfo("HEALTH-ERRORS", "link errors", Severity.ERROR,
             "Receive/transmit errors, FCS errors or uncorrectable FEC blocks in the window.",
             hint="clean or replace the optic/cable; compare both ends' error counters"),
    RuleInfo("HEALTH-FLAP", "link flaps", Severity.WARNING, "The link changed state during the window.",
             hint="check the optic and the peer's logs"),
    RuleInfo("HEALTH-LINK-DOWN", "link down", Severity.ERROR, "A link the plan has is operationally down.",
             hint="check cabling and both ends' admin state"),
    RuleInfo("HEALTH-OPTICS", "optics outlier", Severity.WARNING,
             "Receive power well below, temperature well above, or pre-FEC BER many times that of the port's peers.",
             hint="clean the connector or replace the optic before it errors"),
    RuleInfo("HEALTH-TX-RX", "tx and peer rx disagree", Severity.ERROR,
             "What one end of a link sent and what the other end received differ by more than the counters' read "
             "skew explains: frames lost on the link, or a miscounting counter.",
             hint="compare both ends' error and discard counters; a clean receiver points at the counters"),
    RuleInfo("HEALTH-UNREADABLE", "not read", Severity.ERROR,
             "The device's counters could not be read or parsed: its health is unknown.",
             hint="check reachability and that the platform's health commands run on it"),
)  # fmt: skip
_TITLES = {r.id: r.title for r in RULES}
_KINDS = {sg.name: sg.label for sg in SLOW_SIGNALS} | {"busy_low_peak": "busy long at a low peak"}


def device_meta(report: HealthReport) -> dict[str, DeviceMeta]:
    meta: dict[str, DeviceMeta] = {}
    for m in report.ports.metas:
        if m.device not in meta:
            meta[m.device] = DeviceMeta(m.device, m.role, "", m.rail if m.role == "leaf" else None, m.pod, m.plane)
    return meta


def to_findings(report: HealthReport) -> list[Finding]:
    out = [
        Finding("HEALTH-UNREADABLE", Severity.ERROR, f"counters not read: {why}", status=Status.ERROR, subject=dev)
        for dev, why in report.unreadable.items()
    ]
    severity = {r.id: r.severity for r in RULES}
    for issue in report.issues:
        m = issue.meta
        out.append(
            Finding(
                issue.rule,
                severity[issue.rule],
                issue.message,
                path=f"{m.device}:{m.port}",
                subject=m.device,
                actual=_plain(issue.actual),
                expected=issue.expected,
            )
        )
    for storm in report.storms:
        for m in storm.ports:
            root = f"; root {storm.root.device} {storm.root.port}" if storm.root else ""
            prio = f" on priority {storm.priority}" if storm.priority is not None else ""
            out.append(Finding("HEALTH-PFC-STORM", Severity.ERROR, f"{m.port}: held by PFC pauses{prio}{root}",
                               path=f"{m.device}:{m.port}", subject=m.device))  # fmt: skip
    return out


def _plain(value: object) -> object:
    if isinstance(value, dict):
        return {k: (None if isinstance(v, float) and v != v else v) for k, v in value.items()}
    return value


def _ports(ports: list[PortMeta], limit: int = 5) -> str:
    names = [f"{m.device} {m.port}" for m in ports[:limit]]
    more = f" and {len(ports) - limit} more" if len(ports) > limit else ""
    return ", ".join(names) + more


def group_sentences(report: HealthReport) -> list[str]:
    """One sentence per (rule, kind) across the fleet, largest first."""
    meta = device_meta(report)
    groups: dict[tuple[str, str], list[Issue]] = defaultdict(list)
    for issue in report.issues:
        groups[(issue.rule, issue.group)].append(issue)
    lines = []
    for storm in report.storms:
        devices = sorted({m.device for m in storm.ports})
        prio = f" on priority {storm.priority}" if storm.priority is not None else ""
        root = f"; root {storm.root.device} {storm.root.port}" if storm.root else ""
        path = f" (spreading from {' -> '.join(storm.spread)})" if len(storm.spread) > 1 else ""
        lines.append(f"PFC pause storms{prio} on {summarise(devices, meta)}{root}{path}")
    for (rule, kind), issues in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        ports = [i.meta for i in issues]
        devices = sorted({m.device for m in ports})
        what = _TITLES[rule] + (f" ({_KINDS.get(kind, kind.replace('_', ' '))})" if kind else "")
        lines.append(
            f"{what}: {len(ports)} port{'s' if len(ports) != 1 else ''} on {summarise(devices, meta)}: {_ports(ports)}"
        )
    return lines


def preamble(report: HealthReport) -> str:
    lines = [
        f"health of {len(report.devices)} devices over {report.window_s:.2f} s ({report.samples} samples)"
        + (f"; {len(report.unreadable)} not read" if report.unreadable else "")
    ]
    lines += [f"  {s}" for s in group_sentences(report)]
    lines.append("  tail per tier (p50 / p99 / max):")
    for tier, table in report.tiers.items():
        score, util = table["score"], table["util"]
        lines.append(
            f"    {tier:<16} score {_q(score)}   utilisation {_q(util, pct=True)}   "
            f"time paused {_q(table['pause_share'], pct=True)}"
        )
    st = report.straggler
    if st:
        odds = ", ".join(f"{n} GPUs {p:.1%}" for n, p in st["p_slow_step"].items())  # type: ignore[attr-defined]
        lines.append(f"  straggler odds: {st['slow_access_links']} of {st['access_links']} GPU access links slow "
                     f"(p = {st['p_link']}); P(slow step) = 1-(1-p)^N: {odds}")  # fmt: skip
    lines += [f"  note: {n}" for n in report.notes]
    return "\n".join(lines)


def _q(table: dict[str, float | None], pct: bool = False) -> str:
    def one(v: float | None) -> str:
        if v is None:
            return "-"
        return f"{v:.1%}" if pct else f"{v:.1f}"

    return " / ".join(one(table[k]) for k in ("p50", "p99", "max"))


def details(report: HealthReport, top: int = 50) -> dict[str, Any]:
    ranked = report.ports.top(top)
    return {
        "samples": report.samples,
        "window_s": round(report.window_s, 6),
        "devices": len(report.devices),
        "unreadable": report.unreadable,
        "groups": group_sentences(report),
        "slow_links": [
            {
                "device": p.meta.device,
                "port": p.meta.port,
                "peer": f"{p.meta.peer_device} {p.meta.peer_port}",
                "tier": p.meta.tier,
                "signal": p.slow_by,
                "score": round(p.score, 3),
            }
            for p in report.slow_links
        ],
        "pause_storms": [
            {
                "priority": s.priority,
                "ports": [f"{m.device} {m.port}" for m in s.ports],
                "root": f"{s.root.device} {s.root.port}" if s.root else None,
                "spread": s.spread,
            }
            for s in report.storms
        ],
        "tiers": report.tiers,
        "straggler": report.straggler,
        "ports": [p.as_dict() for p in ranked[:top]],
        "notes": report.notes,
    }
