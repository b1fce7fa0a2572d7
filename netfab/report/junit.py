"""The one JUnit XML writer: a test case per (rule, checked file or device), so CI dashboards show what passed.

A case with a failing error-severity finding fails; one whose check could not run is an <error>; one with
only skipped checks is <skipped>; one with only warnings, notes or passes passes and carries them in
<system-out>, because CI systems treat any <failure> as red and warnings must not block a merge. Built with
junitparser, so the document is JUnit-shaped by construction; text is cleaned first because XML 1.0 cannot
carry control characters at all (an ANSI colour in a BGP description would otherwise make it unparseable).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Sequence

from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

from netfab.core.findings import Finding, Severity, Status
from netfab.report import ReportContext

# Characters XML 1.0 cannot carry (tab, newline and carriage return are fine); YAML syntax errors about binary
# input and device output (ANSI escapes) contain them.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def clean(text: str) -> str:
    """`text` with every character XML 1.0 cannot hold replaced by U+FFFD (visible, unlike deletion)."""
    return _XML_INVALID.sub("\N{REPLACEMENT CHARACTER}", text)


def render_junit(findings: Sequence[Finding], context: ReportContext) -> str:
    by_case: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for finding in findings:
        by_case[finding.rule_id, context.place(finding)].append(finding)
    places = [context.relpath(file) for file in context.files] + list(context.subjects)
    cases = set(by_case) | {(rule.id, place) for rule in context.rules for place in places}

    devices = frozenset(context.subjects)
    suite = TestSuite(f"netfab.{context.verb}")
    # One add: add_testcase recounts the whole suite each time, quadratic for a fleet's cases.
    suite.add_testcases(
        [_case(context, devices, rule, place, by_case.get((rule, place), [])) for rule, place in sorted(cases)]
    )
    document = JUnitXml("netfab")
    document.add_testsuite(suite)
    # The totals are the one suite's (JUnitXml.update_statistics would recount every case a second time).
    document.tests, document.failures, document.errors = suite.tests, suite.failures, suite.errors
    document.skipped, document.time = suite.skipped, suite.time
    # junitparser's own pretty printer goes through minidom: seconds for a fleet's 16,000 cases. Re-reading its
    # compact output with ElementTree and indenting that takes milliseconds, with lxml installed or not.
    root = ET.fromstring(document.tostring())  # type: ignore[no-untyped-call]  # junitparser leaves it bare
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _case(context: ReportContext, devices: frozenset[str], rule_id: str, place: str, found: list[Finding]) -> TestCase:
    name = f"{rule_id}: {place}" if place else rule_id
    case = TestCase(clean(name), classname=f"netfab.{context.verb}.{rule_id}")
    files = {context.relpath(f.location.file) for f in found if f.location.file}
    if place and place not in devices and not any(f.subject for f in found):
        files = {place}  # a case about a file (lint); device cases name their file only when it is one
    if len(files) == 1:
        case._elem.set("file", clean(files.pop()))  # GitLab and GitHub test reports link a case to its file
    failed = [f for f in found if f.status is Status.FAIL and f.severity is Severity.ERROR]
    crashed = [f for f in found if f.status is Status.ERROR]
    if crashed or failed:
        case.result = [_outcome(Error if crashed else Failure, crashed or failed, rule_id, found, context)]
    elif found and all(f.status is Status.SKIP for f in found):
        case.result = [Skipped(clean(found[0].message))]
        case.system_out = clean(_details(found, context))
    elif found:
        case.system_out = clean(_details(found, context))
    return case


def _outcome(
    kind: type[Failure] | type[Error], why: list[Finding], rule_id: str, found: list[Finding], context: ReportContext
) -> Failure | Error:
    first = why[0].message
    headline = first if len(why) == 1 else f"{first} (and {len(why) - 1} more)"
    outcome = kind(clean(headline), rule_id)
    outcome.text = clean(_details(found, context))
    return outcome


def _details(findings: list[Finding], context: ReportContext) -> str:
    lines = []
    for f in findings:
        label = f.severity.value if f.is_problem else f.status.value
        lines.append(f"{context.at(f.location) or context.where(f)}: {label}[{f.rule_id}] {f.message}")
        if f.hint:
            lines.append(f"    hint: {f.hint}")
    return "\n".join(lines)
