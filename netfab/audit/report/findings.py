"""Drift as netfab Findings (rule id, status, severity, message, device, file): every format renders these.

Rule ids name the domain area that drifted; the location is the file the running config came from (saved
copy) or, online, the intended config in the build, so a CI annotation lands on that device's file. A
device that could not be read is an AUDIT-UNREADABLE finding with status error: its drift is unknown.
"""

from __future__ import annotations

import re

from netfab.audit import describe
from netfab.audit.facts.paths import device_keys
from netfab.audit.model import AuditReport, DeviceAudit, Drift
from netfab.core.findings import Finding, Location, RuleInfo, Severity, Status

UNREADABLE = "AUDIT-UNREADABLE"
_FIX = (
    "`netfab audit --remediate` pushes the intended config (commit-confirmed), or fix the intent if the device is right"
)
RULES = (
    RuleInfo("AUDIT-ECN", "ECN marking drift", Severity.ERROR, "ECN/WRED thresholds or marking differ.", hint=_FIX),
    RuleInfo(
        "AUDIT-PFC",
        "PFC drift",
        Severity.ERROR,
        "PFC priorities or the PFC watchdog differ from the intent.",
        hint=_FIX,
    ),
    RuleInfo("AUDIT-QOS", "QoS drift", Severity.ERROR, "DSCP mapping, trust, queues or scheduling differ.", hint=_FIX),
    RuleInfo(
        "AUDIT-HASH", "ECMP hash drift", Severity.ERROR, "ECMP hash fields or seed differ from the intent.", hint=_FIX
    ),
    RuleInfo("AUDIT-BGP", "BGP drift", Severity.ERROR, "BGP ASN, neighbors, networks or paths differ.", hint=_FIX),
    RuleInfo(
        "AUDIT-INTERFACE", "interface drift", Severity.ERROR, "An interface or its MTU/address differs.", hint=_FIX
    ),
    RuleInfo(
        "AUDIT-CONFIG", "config drift", Severity.ERROR, "Configuration netfab renders differs (other lines).", hint=_FIX
    ),
    RuleInfo(
        UNREADABLE,
        "not audited",
        Severity.ERROR,
        "The running config could not be read or parsed, so the device's drift is unknown (the audit is "
        "incomplete and exits 2).",
        hint="check the device is reachable (or the saved file exists) and that its config parses",
    ),
)

_AREAS = (
    ("AUDIT-ECN", re.compile(r"\.ecn\b|\becn\.")),
    ("AUDIT-PFC", re.compile(r"\bpfc|watchdog")),
    ("AUDIT-HASH", re.compile(r"^hash\.")),
    ("AUDIT-QOS", re.compile(r"dscp_map|trust|queue\[|scheduler|class|classify|profile\[")),
    ("AUDIT-BGP", re.compile(r"(^|\.)bgp\.")),
    ("AUDIT-INTERFACE", re.compile(r"^interface\[[^\]]*\](\.(mtu|address|description))?$")),
)


def area(path: str) -> str:
    for rule_id, pattern in _AREAS:
        if pattern.search(path):
            return rule_id
    return "AUDIT-CONFIG"


def _message(dev: DeviceAudit, d: Drift) -> str:
    # The device is the finding's subject (every format shows it); the message names the part of it.
    keys = device_keys(d.path)
    where = f"{keys[-1]}: " if keys else ""
    label = describe.label(d.path)
    detail = f" [{', '.join(d.detail)}]" if d.detail else ""
    return (
        f"{where}{label} is {describe.value(d.path, d.actual)}; the intent says "
        f"{describe.value(d.path, d.intended)} ({d.path}){detail}"
    )


def to_findings(report: AuditReport, locations: dict[str, str]) -> list[Finding]:
    out: list[Finding] = []
    for dev in sorted(report.devices, key=lambda x: x.device):
        where = Location(locations.get(dev.device, dev.origin or dev.device))
        if dev.status == "unreadable":
            message = f"could not be audited: {dev.error}"
            out.append(Finding(UNREADABLE, Severity.ERROR, message, where, status=Status.ERROR, subject=dev.device))
        for d in dev.drifts:
            message = _message(dev, d)
            out.append(
                Finding(
                    area(d.path),
                    Severity.ERROR,
                    message,
                    where,
                    path=f"{dev.device}:{d.path}",
                    subject=dev.device,
                    expected=d.intended,
                    actual=d.actual,
                )
            )
    return out
