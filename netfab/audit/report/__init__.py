"""Audit reports: text and markdown for people, JSON, JUnit and SARIF for machines, all from one AuditReport.

The JSON report is the complete record (groups, every device's drift, raw diffs, remediation file names);
the others are renderings of it. Text and markdown show the fleet-wide groups first, then a section per
drifted device with its raw diff, trimmed to a screenful (the whole diff is in the audit dir and the JSON).
"""

from __future__ import annotations

from netfab.audit.model import AuditReport

FORMATS = ("text", "json", "junit", "sarif", "markdown")


def render(fmt: str, report: AuditReport) -> str:
    from netfab.audit.report.json_report import render_json
    from netfab.audit.report.junit import render_junit
    from netfab.audit.report.markdown import render_markdown
    from netfab.audit.report.sarif import render_sarif
    from netfab.audit.report.text import render_text

    renderers = {
        "text": render_text,
        "json": render_json,
        "junit": render_junit,
        "sarif": render_sarif,
        "markdown": render_markdown,
    }
    if fmt not in renderers:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return renderers[fmt](report)
