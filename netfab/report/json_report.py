"""The JSON report: the findings as plain data, keys sorted and findings in file/line order.

Deterministic output (same input -> byte-identical report) lets CI diff reports and golden tests pin them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from netfab.core.findings import Finding, Location, sorted_findings
from netfab.report import ReportContext, Summary


def render_json(findings: Sequence[Finding], context: ReportContext) -> str:
    document = {
        "version": context.tool_version,
        "summary": Summary.of(findings).as_dict(),
        "findings": [_finding(f, context) for f in sorted_findings(list(findings))],
    }
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def _finding(finding: Finding, context: ReportContext) -> dict[str, Any]:
    return {
        "rule_id": finding.rule_id,
        "severity": finding.severity.value,
        "message": finding.message,
        "hint": finding.hint,
        "path": finding.path,
        "location": _location(finding.location, context),
        "related": [_location(loc, context) for loc in finding.related],
    }


def _location(location: Location, context: ReportContext) -> dict[str, Any]:
    return {"file": context.relpath(location.file), "line": location.line, "column": location.column}
