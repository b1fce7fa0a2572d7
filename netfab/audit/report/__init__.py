"""Audit reports: the drift as netfab Findings, rendered by netfab.report like every verb's report.

The JSON envelope's `details` is the complete audit record (groups, every device's drift, raw diffs,
remediation file names); text and markdown open with the fleet picture (grouped drift first, then a section
per drifted device with its raw diff, trimmed to a screenful) and end, like every verb, with one line per
finding and the summary line. JUnit has a case per (drift area, device), SARIF a result per drifted fact.
"""

from __future__ import annotations

from pathlib import Path

from netfab import __version__
from netfab.audit.model import AuditReport
from netfab.report import FORMATS, ReportContext
from netfab.report import render as render_findings

__all__ = ["FORMATS", "context", "render"]

TEXT_FINDINGS = 500
"""Drift lines in the text report; a template error drifts every device alike, and the fleet groups above
already say it once. The JSON report has every finding."""


def context(report: AuditReport, fmt: str = "json") -> ReportContext:
    from netfab.audit.report.findings import RULES
    from netfab.audit.report.json_report import as_dict
    from netfab.audit.report.markdown import render_markdown
    from netfab.audit.report.text import render_overview

    # Only the rendering asked for is built: the overview and markdown walk every drifted device.
    return ReportContext(
        tool_version=__version__,
        root=Path.cwd(),
        rules=RULES,
        verb="audit",
        subjects=sorted(d.device for d in report.devices),
        details=as_dict(report) if fmt == "json" else None,
        preamble=render_overview(report) if fmt == "text" else "",
        markdown=render_markdown(report) if fmt == "markdown" else "",
        text_limit=TEXT_FINDINGS,
    )


def render(fmt: str, report: AuditReport) -> str:
    """Raises ValueError for an unknown format (a usage error)."""
    from netfab.audit.report.findings import to_findings

    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return render_findings(fmt, to_findings(report, report.locations), context(report, fmt))
