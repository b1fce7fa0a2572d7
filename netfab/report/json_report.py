"""The JSON report: one envelope for every reporting verb, described by docs/report.schema.json.

``{schema_version, tool{name, version}, verb, summary, findings, details}``: a CI script reads `summary` and
`findings` the same way whichever verb wrote them; `details` is the verb's own document (audit's fleet groups
and per-device record, analyze's capacity/lossless/ECMP figures), null when the verb has none. Keys are sorted
and findings in file/line order: same input, byte-identical report, so CI can diff reports.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from netfab.core.findings import Finding, Location
from netfab.report import ReportContext, Summary, fingerprints

SCHEMA_VERSION = 2
"""2: the shared envelope (audit's own layout was 1; lint, verify and analyze had none)."""


def envelope(findings: Sequence[Finding], context: ReportContext) -> dict[str, Any]:
    ids = fingerprints(findings, context)
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "netfab", "version": context.tool_version},
        "verb": context.verb,
        "summary": Summary.of(findings).as_dict(),
        "findings": [_finding(f, ids[i], context) for i, f in enumerate(findings)],
        "details": dict(context.details) if context.details is not None else None,
    }


def render_json(findings: Sequence[Finding], context: ReportContext) -> str:
    # default=str: details may hold paths or enums; the schema types them as strings
    return json.dumps(envelope(findings, context), sort_keys=True, indent=2, ensure_ascii=False, default=str) + "\n"


def _finding(finding: Finding, finding_id: str, context: ReportContext) -> dict[str, Any]:
    return {
        "id": finding_id,
        "rule_id": finding.rule_id,
        "status": finding.status.value,
        "severity": finding.severity.value,
        "message": finding.message,
        "hint": finding.hint,
        "path": finding.path,
        "subject": finding.subject,
        "location": _location(finding.location, context) if finding.location.file else None,
        "related": [_location(loc, context) for loc in finding.related],
        "expected": finding.expected,
        "actual": finding.actual,
    }


def _location(location: Location, context: ReportContext) -> dict[str, Any]:
    return {"file": context.relpath(location.file), "line": location.line, "column": location.column}
