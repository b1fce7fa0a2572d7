"""The SARIF 2.1.0 report, shaped for GitHub code scanning (upload-sarif) and other SARIF viewers.

GitHub's constraints drive the details: artifact URIs relative to %SRCROOT% so annotations land on files in
the checkout, startLine >= 1 always (a finding without a line goes on line 1), and partialFingerprints that
survive unrelated edits (no line numbers in them) so alerts are tracked across commits instead of reopened.
SARIF is what code scanning turns into alerts, so it carries the problems only (fail, and checks that could
not run); passes and skips are in the JSON and JUnit reports. A device finding without a file has no location.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from netfab.core.findings import Finding, Location, RuleInfo, Severity, Status
from netfab.report import ReportContext, fingerprints, with_unknown_rules

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render_sarif(findings: Sequence[Finding], context: ReportContext) -> str:
    ids = fingerprints(findings, context)
    problems = [(f, ids[i]) for i, f in enumerate(findings) if f.is_problem]
    rules = with_unknown_rules([f for f, _ in problems], context.rules)
    index = {rule.id: i for i, rule in enumerate(rules)}

    driver: dict[str, Any] = {"name": "netfab", "version": context.tool_version or "0", "rules": []}
    if context.information_uri:
        driver["informationUri"] = context.information_uri
    driver["rules"] = [_rule(rule) for rule in rules]
    results = [_result(f, index[f.rule_id], context, fingerprint) for f, fingerprint in problems]
    run = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {SRCROOT: {"uri": _directory_uri(context.root)}},
        "columnKind": "unicodeCodePoints",  # our columns count characters, as the YAML parser does
        "results": results,
    }
    if context.verb != "lint":
        # GitHub keeps one analysis per tool and category: without a category, uploading audit's SARIF would
        # close every lint alert. Lint keeps the default category its alerts were first tracked under.
        run["automationDetails"] = {"id": f"netfab/{context.verb}/"}
    document = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _rule(rule: RuleInfo) -> dict[str, Any]:
    doc = rule.doc.strip() or rule.title
    summary = doc.split("\n\n", 1)[0].strip()
    entry: dict[str, Any] = {
        "id": rule.id,
        "name": camel_case(rule.title or rule.id),
        "shortDescription": {"text": rule.title or rule.id},
        "fullDescription": {"text": summary},
        "help": {"text": doc, "markdown": doc},
        "defaultConfiguration": {"level": _LEVELS[rule.severity]},
    }
    if rule.help_uri:
        entry["helpUri"] = rule.help_uri
    return entry


def camel_case(title: str) -> str:
    """``duplicate YAML key`` -> ``DuplicateYAMLKey`` (SARIF rule names are identifiers, not sentences)."""
    return "".join(word[0].upper() + word[1:] for word in re.findall(r"[A-Za-z0-9]+", title)) or "Rule"


def _result(finding: Finding, rule_index: int, context: ReportContext, fingerprint: str) -> dict[str, Any]:
    text = f"{finding.message}\nhint: {finding.hint}" if finding.hint else finding.message
    result: dict[str, Any] = {
        "ruleId": finding.rule_id,
        "ruleIndex": rule_index,
        "level": _LEVELS[finding.severity],
        "message": {"text": text},
        "partialFingerprints": {"netfabFindingHash/v1": fingerprint},
    }
    if finding.location.file:
        result["locations"] = [{"physicalLocation": _physical(finding.location, context)}]
    if finding.related:
        result["relatedLocations"] = [
            {"id": i, "physicalLocation": _physical(loc, context), "message": {"text": "related location"}}
            for i, loc in enumerate(finding.related, start=1)
        ]
    properties = {"status": finding.status.value} if finding.status is not Status.FAIL else {}
    if finding.subject:
        properties["device"] = finding.subject
    if properties:
        result["properties"] = properties
    return result


def _physical(location: Location, context: ReportContext) -> dict[str, Any]:
    relative = context.under_root(location.file)
    if relative is not None:
        artifact = {"uri": quote(relative, safe="/"), "uriBaseId": SRCROOT}
    else:  # outside the checkout: an absolute URI is the only honest one (GitHub will not annotate it)
        artifact = {"uri": Path(location.file).absolute().as_uri()}
    region = {"startLine": max(1, location.line), "startColumn": max(1, location.column)}
    return {"artifactLocation": artifact, "region": region}


def _directory_uri(root: Path) -> str:
    uri = root.absolute().as_uri()
    return uri if uri.endswith("/") else uri + "/"
