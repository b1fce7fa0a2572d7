"""The JUnit XML report: one test case per (rule, checked file), so CI dashboards show what passed too.

A pair with error findings fails; a pair with only warnings or notes passes and carries them in
<system-out>, because CI systems treat any <failure> as red and warnings must not block a merge.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Sequence

from netfab.core.findings import Finding, Location, Severity, sorted_findings
from netfab.report import ReportContext

# Characters XML 1.0 cannot carry at all (ElementTree would write them and produce an unparseable file);
# YAML syntax errors about binary input quote such characters.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def render_junit(findings: Sequence[Finding], context: ReportContext) -> str:
    by_pair: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for finding in sorted_findings(list(findings)):
        by_pair[finding.rule_id, context.relpath(finding.location.file)].append(finding)
    pairs = set(by_pair)
    pairs.update((rule.id, context.relpath(file)) for rule in context.rules for file in context.files)

    suite = ET.Element("testsuite", name="netfab.lint")
    failures = 0
    for rule_id, file in sorted(pairs):
        case = ET.SubElement(suite, "testcase", name=f"{rule_id}: {file}", classname=f"netfab.lint.{rule_id}")
        case.set("file", file)
        found = by_pair.get((rule_id, file), [])
        errors = [f for f in found if f.severity is Severity.ERROR]
        if errors:
            failures += 1
            failure = ET.SubElement(case, "failure", type=rule_id, message=_clean(_headline(errors)))
            failure.text = _clean(_details(found, context))
        elif found:
            ET.SubElement(case, "system-out").text = _clean(_details(found, context))
    counts = {"tests": str(len(pairs)), "failures": str(failures), "errors": "0", "skipped": "0"}
    suite.attrib.update(counts)
    root = ET.Element("testsuites", {"name": "netfab", **counts})
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _headline(errors: list[Finding]) -> str:
    first = errors[0].message
    return first if len(errors) == 1 else f"{first} (and {len(errors) - 1} more)"


def _details(findings: list[Finding], context: ReportContext) -> str:
    lines = []
    for f in findings:
        loc = Location(context.relpath(f.location.file), f.location.line, f.location.column)
        lines.append(f"{loc}: {f.severity.value}[{f.rule_id}] {f.message}")
        if f.hint:
            lines.append(f"    hint: {f.hint}")
    return "\n".join(lines)


def _clean(text: str) -> str:
    return _XML_INVALID.sub("\N{REPLACEMENT CHARACTER}", text)
