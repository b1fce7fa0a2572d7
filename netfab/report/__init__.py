"""Render one result list for people (text, markdown) and machines (JSON, JUnit XML, SARIF 2.1.0).

Every reporting verb (lint, verify, audit, analyze) hands the same things to `render`: its Findings and a
ReportContext naming the verb, its rules and what it checked. Every renderer is a pure function of those, so
a CI job that reads SARIF sees exactly what an operator reads in the terminal, and a script needs one parser
for every verb (the JSON envelope, docs/report.schema.json). Paths in every format are made relative to
``ReportContext.root`` (the repository root) so reports are stable across checkouts and machines.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from netfab.core.findings import Finding, Location, RuleInfo, Severity, Status, sorted_findings


class ReportFormat(StrEnum):
    """The one --format vocabulary of every reporting verb (text is a rendering of the same data)."""

    TEXT = "text"
    JSON = "json"
    JUNIT = "junit"
    SARIF = "sarif"
    MARKDOWN = "markdown"


FORMATS = tuple(f.value for f in ReportFormat)
VERBS = ("lint", "verify", "audit", "analyze", "diff", "health", "sot")


@dataclass(frozen=True)
class ReportContext:
    """Everything a renderer needs besides the findings themselves."""

    tool_version: str = ""
    root: Path = field(default_factory=Path.cwd)
    rules: Sequence[RuleInfo] = ()
    files: Sequence[Path | str] = ()  # every file that was checked (JUnit reports passing cases for them too)
    information_uri: str = ""  # the project's home page, for SARIF's tool.driver.informationUri
    verb: str = "lint"
    subjects: Sequence[str] = ()  # every device that was checked (JUnit passing cases, like files)
    details: Mapping[str, Any] | None = None  # the verb's own document: the JSON envelope's "details"
    preamble: str = ""  # the verb's own overview, printed before the finding lines (analyze's tables...)
    markdown: str = ""  # the verb's own markdown document, when it has one (audit)
    text_limit: int | None = None  # at most this many finding lines in text (a fleet can drift everywhere)

    def relpath(self, file: str | Path) -> str:
        """`file` relative to the root with forward slashes; unchanged (but posix) when outside the root."""
        relative = self.under_root(file)
        return relative if relative is not None else Path(file).as_posix()

    def under_root(self, file: str | Path) -> str | None:
        """`file` relative to the root with forward slashes, or None when it lies outside the root."""
        # abspath first: keeps a symlinked checkout's own names; realpath catches root given via a symlink.
        for resolve in (os.path.abspath, os.path.realpath):
            try:
                return Path(resolve(file)).relative_to(resolve(self.root)).as_posix()
            except ValueError:
                continue
        return None

    def at(self, location: Location) -> str:
        """``file:line:col`` with the file relative to the root; empty when the location names no file."""
        if not location.file:
            return ""
        return str(Location(self.relpath(location.file), location.line, location.column))

    def where(self, finding: Finding) -> str:
        """Where a person looks: the device for a finding about a device, else the file position."""
        return finding.subject or self.at(finding.location) or "-"

    def place(self, finding: Finding) -> str:
        """What a finding is about, for grouping and for people: the device if any, else the file."""
        if finding.subject:
            return finding.subject
        return self.relpath(finding.location.file) if finding.location.file else ""


@dataclass(frozen=True, slots=True)
class Summary:
    """Counts every renderer agrees on. errors/warnings/infos count problems (fail or error) by severity."""

    errors: int
    warnings: int
    infos: int
    files: int  # files with at least one problem
    subjects: int = 0  # devices with at least one problem
    statuses: Mapping[Status, int] = field(default_factory=dict)

    @classmethod
    def of(cls, findings: Sequence[Finding]) -> Summary:
        counts = dict.fromkeys(Severity, 0)
        problems = [f for f in findings if f.is_problem]
        for f in problems:
            counts[f.severity] += 1
        files = len({f.location.file for f in problems if f.location.file})
        subjects = len({f.subject for f in problems if f.subject})
        statuses = Counter(f.status for f in findings)
        return cls(
            counts[Severity.ERROR],
            counts[Severity.WARNING],
            counts[Severity.INFO],
            files,
            subjects,
            {s: statuses[s] for s in Status},
        )

    @property
    def ran_checks(self) -> bool:
        """The verb reported passing or skipped checks too (verify), not only what is wrong (lint, audit)."""
        return bool(self.statuses.get(Status.PASS) or self.statuses.get(Status.SKIP))

    def as_dict(self) -> dict[str, int]:
        counts = {"errors": self.errors, "warnings": self.warnings, "infos": self.infos}
        by_status = {s.value: self.statuses.get(s, 0) for s in Status}
        return {**counts, "files": self.files, "subjects": self.subjects, **by_status, "total": sum(by_status.values())}

    def sentence(self, checked_files: int = 0, checked_subjects: int = 0) -> str:
        """``3 errors, 1 warning in 2 files``: the last line of the text report, for every verb."""
        if not (self.errors or self.warnings or self.infos):
            if checked_subjects:
                text = f"no problems found on {_plural(checked_subjects, 'device')}"
            elif checked_files:
                text = f"no problems found in {_plural(checked_files, 'file')}"
            else:
                text = "no problems found"
        else:
            parts = [_plural(self.errors, "error"), _plural(self.warnings, "warning")]
            if self.infos:
                parts.append(_plural(self.infos, "note"))
            where = _plural(self.subjects, "device") if self.subjects else _plural(self.files, "file")
            text = f"{', '.join(parts)} {'on' if self.subjects else 'in'} {where}"
        if self.ran_checks:
            s = {k: self.statuses.get(k, 0) for k in Status}
            text += (
                f"; {_plural(sum(s.values()), 'check')}: {s[Status.PASS]} passed, {s[Status.FAIL]} failed, "
                f"{s[Status.SKIP]} skipped, {s[Status.ERROR]} could not run"
            )
        return text


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def fingerprints(findings: Sequence[Finding], context: ReportContext) -> dict[int, str]:
    """A stable id per finding (by position in `findings`): the same in the JSON envelope and SARIF.

    Rule, file, device and field path (or message) identify a finding independently of line shifts, so CI can
    track it across runs and commits; a counter keeps identical ones (two tabs in one file) apart.
    """
    seen: Counter[str] = Counter()
    out: dict[int, str] = {}
    for i, f in enumerate(findings):
        parts = [f.rule_id, context.relpath(f.location.file) if f.location.file else "", f.path or f.message]
        if f.subject:  # lint findings have none: their ids stay what SARIF consumers already track
            parts.append(f.subject)
        digest = hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]
        seen[digest] += 1
        out[i] = f"{digest}:{seen[digest]}"
    return out


def with_unknown_rules(findings: Sequence[Finding], rules: Sequence[RuleInfo]) -> list[RuleInfo]:
    """`rules` plus minimal metadata for ids nobody described, so every result can point at a rule."""
    out = list(rules)
    known = {rule.id for rule in out}
    for rule_id in sorted({f.rule_id for f in findings} - known):
        severity = max((f.severity for f in findings if f.rule_id == rule_id), key=lambda s: s.rank)
        out.append(RuleInfo(rule_id, rule_id, severity, ""))
    return out


def render(fmt: str, findings: Sequence[Finding], context: ReportContext) -> str:
    """Dispatch on a ``--format`` value. Raises ValueError for an unknown format (a usage error)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return _renderer(ReportFormat(fmt))(sorted_findings(list(findings)), context)


def _renderer(fmt: ReportFormat) -> Callable[[Sequence[Finding], ReportContext], str]:
    # Imported here, and only the one asked for: the renderer modules import ReportContext from this package,
    # and JUnit pulls in junitparser and lxml (13-50 ms per run) that a text or JSON report never needs.
    if fmt is ReportFormat.JSON:
        from netfab.report.json_report import render_json

        return render_json
    if fmt is ReportFormat.JUNIT:
        from netfab.report.junit import render_junit

        return render_junit
    if fmt is ReportFormat.SARIF:
        from netfab.report.sarif import render_sarif

        return render_sarif
    if fmt is ReportFormat.MARKDOWN:
        from netfab.report.markdown import render_markdown

        return render_markdown
    from netfab.report.text import render_text

    return render_text


__all__ = ["FORMATS", "VERBS", "ReportContext", "ReportFormat", "Summary", "fingerprints", "render"]
