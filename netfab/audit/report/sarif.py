"""SARIF 2.1.0 for code scanning: the drift as findings, rendered by netfab's lint SARIF renderer."""

from __future__ import annotations

from pathlib import Path

from netfab import __version__
from netfab.audit.model import AuditReport
from netfab.audit.report.findings import RULES, to_findings
from netfab.report import ReportContext
from netfab.report.sarif import render_sarif as _render


def render_sarif(report: AuditReport) -> str:
    context = ReportContext(tool_version=__version__, root=Path.cwd(), rules=RULES)
    return _render(to_findings(report, report.locations), context)
