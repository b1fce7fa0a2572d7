"""The SARIF 2.1.0 report, shaped for GitHub code scanning (upload-sarif) and other SARIF viewers.

GitHub's constraints drive the details: artifact URIs relative to %SRCROOT% so annotations land on files in
the checkout, startLine >= 1 always (a finding without a line goes on line 1), and partialFingerprints that
survive unrelated edits (no line numbers in them) so alerts are tracked across commits instead of reopened.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from netfab.core.findings import Finding, Location, Severity, sorted_findings
from netfab.report import ReportContext, RuleInfo

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render_sarif(findings: Sequence[Finding], context: ReportContext) -> str:
    ordered = sorted_findings(list(findings))
    rules = list(context.rules)
    known = {rule.id for rule in rules}
    # Every result must point at a rule in the driver; invent minimal metadata for ids nobody described.
    for rule_id in sorted({f.rule_id for f in ordered} - known):
        severity = max((f.severity for f in ordered if f.rule_id == rule_id), key=lambda s: s.rank)
        rules.append(RuleInfo(rule_id, rule_id, severity, ""))
    index = {rule.id: i for i, rule in enumerate(rules)}

    driver: dict[str, Any] = {"name": "netfab", "version": context.tool_version or "0", "rules": []}
    if context.information_uri:
        driver["informationUri"] = context.information_uri
    driver["rules"] = [_rule(rule) for rule in rules]
    seen: Counter[str] = Counter()
    results = [_result(f, index[f.rule_id], context, seen) for f in ordered]
    run = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {SRCROOT: {"uri": _directory_uri(context.root)}},
        "columnKind": "unicodeCodePoints",  # our columns count characters, as the YAML parser does
        "results": results,
    }
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


def _result(finding: Finding, rule_index: int, context: ReportContext, seen: Counter[str]) -> dict[str, Any]:
    text = f"{finding.message}\nhint: {finding.hint}" if finding.hint else finding.message
    result: dict[str, Any] = {
        "ruleId": finding.rule_id,
        "ruleIndex": rule_index,
        "level": _LEVELS[finding.severity],
        "message": {"text": text},
        "locations": [{"physicalLocation": _physical(finding.location, context)}],
        "partialFingerprints": {"netfabFindingHash/v1": _fingerprint(finding, context, seen)},
    }
    if finding.related:
        result["relatedLocations"] = [
            {"id": i, "physicalLocation": _physical(loc, context), "message": {"text": "related location"}}
            for i, loc in enumerate(finding.related, start=1)
        ]
    return result


def _physical(location: Location, context: ReportContext) -> dict[str, Any]:
    relative = context.under_root(location.file)
    if relative is not None:
        artifact = {"uri": quote(relative, safe="/"), "uriBaseId": SRCROOT}
    else:  # outside the checkout: an absolute URI is the only honest one (GitHub will not annotate it)
        artifact = {"uri": Path(location.file).absolute().as_uri()}
    region = {"startLine": max(1, location.line), "startColumn": max(1, location.column)}
    return {"artifactLocation": artifact, "region": region}


def _fingerprint(finding: Finding, context: ReportContext, seen: Counter[str]) -> str:
    # Rule, file and field path (or message) identify a finding independently of line shifts; a counter
    # keeps identical ones (e.g. two tab findings in one file) distinct, like GitHub's own line hashes.
    what = finding.path or finding.message
    key = "\0".join((finding.rule_id, context.relpath(finding.location.file), what))
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    seen[digest] += 1
    return f"{digest}:{seen[digest]}"


def _directory_uri(root: Path) -> str:
    uri = root.absolute().as_uri()
    return uri if uri.endswith("/") else uri + "/"
