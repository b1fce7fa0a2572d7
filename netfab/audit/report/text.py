"""The audit's text overview: the fleet picture first (grouped drift, notes), then a section per drifted device
with the platform's own diff. netfab.report.text follows it with one line per finding and the summary line,
the style every verb shares, so the drifted facts themselves are listed once, as findings."""

from __future__ import annotations

from netfab.audit.group import device_index, group_details, notes_by_text, sentence
from netfab.audit.model import AuditReport, DeviceAudit
from netfab.audit.report.json_report import summary

RAW_LINES = 40  # per device in text/markdown; the audit dir and the JSON report hold the whole diff
MAX_DEVICE_SECTIONS = 50


def headline(report: AuditReport) -> str:
    s = summary(report)
    state = "in sync" if not s["drift"] and not s["unreadable"] else "DRIFT" if s["drift"] else "INCOMPLETE"
    return (
        f"netfab audit {report.fabric}: {state} - {s['devices']} devices from {report.source} in "
        f"{report.seconds:.1f} s: {s['in_sync']} in sync, {s['drift']} drifted ({s['findings']} findings in "
        f"{s['groups']} groups), {s['unreadable']} unreadable"
    )


def _where(dev: DeviceAudit, report: AuditReport) -> str:
    meta = report.meta.get(dev.device)
    if meta is None:
        return dev.platform
    bits = [meta.platform, meta.role]
    bits += [f"{k} {v}" for k, v in (("pod", meta.pod), ("rail", meta.rail), ("plane", meta.plane)) if v is not None]
    return ", ".join(bits)


def trimmed(text: str, limit: int = RAW_LINES) -> list[str]:
    lines = text.splitlines()
    if len(lines) <= limit:
        return lines
    return [*lines[:limit], f"... {len(lines) - limit} more lines (see the audit dir)"]


def device_lines(dev: DeviceAudit, report: AuditReport, indent: str = "  ") -> list[str]:
    out = []
    for raw in dev.raw:
        if raw.text.strip():
            out.append(f"{indent}{raw.kind} diff:")
            out += [f"{indent}  {line}" for line in trimmed(raw.text)]
    if dev.remediation and report.out_dir:
        files = ", ".join(sorted(dev.remediation))
        out.append(f"{indent}remediation: {report.out_dir}/devices/{dev.device}/ ({files})")
    return out


def render_overview(report: AuditReport) -> str:
    out = [headline(report)]
    by_device = device_index(report.devices)
    if report.groups:
        out += ["", "Drift across the fleet (most devices first):"]
        for n, g in enumerate(report.groups, start=1):
            out.append(f"  {n}. {sentence(g, report.meta, group_details(g, by_device))}")
    notes = notes_by_text(report.devices)
    if notes:
        out += ["", "Notes:"]
        for note, devices in notes:
            who = devices[0] if len(devices) == 1 else f"{len(devices)} devices"
            out.append(f"  - {note} ({who})")
    drifted = sorted(report.drifted, key=lambda d: d.device)
    if drifted:
        out += ["", "Per device:"]
        for dev in drifted[:MAX_DEVICE_SECTIONS]:
            out.append(f"--- {dev.device} ({_where(dev, report)}): {len(dev.drifts)} drifted facts")
            out += device_lines(dev, report)
        if len(drifted) > MAX_DEVICE_SECTIONS:
            out.append(f"... {len(drifted) - MAX_DEVICE_SECTIONS} more drifted devices: see the JSON report")
    if report.remediation_outcome:
        out += ["", "Remediation: " + str(report.remediation_outcome.get("message", ""))]
        for key in ("changed", "rolled_back"):
            if report.remediation_outcome.get(key):
                out.append(f"  {key.replace('_', ' ')}: {', '.join(report.remediation_outcome[key])}")
        for host, err in sorted((report.remediation_outcome.get("failed") or {}).items()):
            out.append(f"  failed: {host}: {err}")
    if report.out_dir:
        out += ["", f"Diffs and remediation: {report.out_dir}"]
    return "\n".join(out) + "\n"
