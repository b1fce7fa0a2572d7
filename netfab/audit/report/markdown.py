"""The markdown report: for a pull-request comment or a change ticket."""

from __future__ import annotations

from netfab.audit import describe
from netfab.audit.group import device_index, group_details, notes_by_text, sentence
from netfab.audit.model import AuditReport
from netfab.audit.report.text import MAX_DEVICE_SECTIONS, headline, trimmed


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: AuditReport) -> str:
    out = [f"# Drift audit: {report.fabric}", "", headline(report).split(": ", 1)[1], ""]
    by_device = device_index(report.devices)
    if report.groups:
        out += ["## Drift across the fleet", "", "| # | finding | devices |", "|---|---|---|"]
        for n, g in enumerate(report.groups, start=1):
            devices = ", ".join(g.devices[:8]) + (f" (+{len(g.devices) - 8})" if len(g.devices) > 8 else "")
            out.append(f"| {n} | {_cell(sentence(g, report.meta, group_details(g, by_device)))} | {_cell(devices)} |")
        out.append("")
    if report.unreadable:
        out += ["## Not audited", ""]
        out += [f"- **{d.device}**: {d.error}" for d in report.unreadable]
        out.append("")
    notes = notes_by_text(report.devices)
    if notes:
        out += ["## Notes", ""]
        out += [f"- {note} ({len(devs)} device{'s' if len(devs) > 1 else ''})" for note, devs in notes]
        out.append("")
    drifted = sorted(report.drifted, key=lambda d: d.device)
    if drifted:
        out += ["## Per device", ""]
    for dev in drifted[:MAX_DEVICE_SECTIONS]:
        out += [f"### {dev.device} ({dev.platform})", ""]
        for d in dev.drifts:
            have, want = describe.value(d.path, d.actual), describe.value(d.path, d.intended)
            out.append(f"- `{d.path}`: {have} (intent: {want})")
        for raw in dev.raw:
            if raw.text.strip():
                out += ["", f"{raw.kind} diff:", "", "```", *trimmed(raw.text), "```"]
        if dev.remediation:
            out += ["", f"Remediation files: {', '.join(f'`{n}`' for n in sorted(dev.remediation))}"]
        out.append("")
    if report.remediation_outcome:
        out += ["## Remediation", "", str(report.remediation_outcome.get("message", "")), ""]
    return "\n".join(out).rstrip() + "\n"
