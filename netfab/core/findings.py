"""Findings: the one result type of every checking and reporting verb (load, lint, verify, audit, analyze).

A Finding is plain data: a stable rule id, a status (ANTA's vocabulary: pass, fail, skip, error), a severity,
what is wrong, how to fix it, and where, in the user's own file and/or on a device. Text, JSON, JUnit, SARIF
and markdown are renderings of the same list (netfab.report), so nothing a machine reads is lost in the
human view. RuleInfo says what a rule id means; it lives here, beside Finding, because every stage (load,
lint, verify, audit, analyze) declares rules and the report stage only reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 2, "warning": 1, "info": 0}[self.value]


class Status(StrEnum):
    """What happened to one check. Lint and audit report only what failed; verify reports every check.

    ``error`` means the check itself could not run (a getter raised, a lint rule crashed, a device could
    not be read): the answer is unknown, which is not the same as a failure.
    """

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    ERROR = "error"

    @property
    def is_problem(self) -> bool:
        """Counts against the run (fail or error); pass and skip never do."""
        return self in (Status.FAIL, Status.ERROR)


@dataclass(frozen=True, slots=True, order=True)
class Location:
    """A position in a user's file. Lines and columns are 1-based, as editors and SARIF count them.

    ``Location()`` (no file) is a finding about a device rather than a file, e.g. a verify check that ran
    before netfab knew where the device's config lives.
    """

    file: str = ""
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if not self.line:
            return self.file
        if not self.column:
            return f"{self.file}:{self.line}"
        return f"{self.file}:{self.line}:{self.column}"


NOWHERE = Location()


@dataclass(frozen=True, slots=True)
class Finding:
    """One result: a stable rule id, a severity, what is wrong, how to fix it, and where.

    `path` is the field path of the finding's subject (``qos.classes[1].dscp`` in the intent, or
    ``bgp.max_paths`` in a device's config facts); `location` points at the exact YAML node or device file
    so CI annotations land on the right line; `subject` names the device (verify, audit) when there is one.
    `expected`/`actual` carry a check's two values (verify) for machines; the message says them for people.
    """

    rule_id: str
    severity: Severity
    message: str
    location: Location = NOWHERE
    hint: str = ""
    path: str = ""
    related: tuple[Location, ...] = field(default=())
    status: Status = Status.FAIL
    subject: str = ""
    # Values may be dicts or lists: kept out of the hash so a Finding stays usable in sets.
    expected: object = field(default=None, hash=False)
    actual: object = field(default=None, hash=False)

    @property
    def is_problem(self) -> bool:
        return self.status.is_problem

    def sort_key(self) -> tuple[str, int, int, str, str, str]:
        loc = self.location
        return (loc.file, loc.line, loc.column, self.subject, self.rule_id, self.message)


@dataclass(frozen=True, slots=True)
class RuleInfo:
    """What a rule id means: feeds `netfab rules`, SARIF rule metadata, JUnit test cases and the docs."""

    id: str
    title: str
    severity: Severity
    doc: str  # markdown; the first paragraph doubles as the one-line description
    help_uri: str = ""
    hint: str = ""

    @property
    def summary(self) -> str:
        return self.doc.strip().split("\n\n", 1)[0].replace("\n", " ").strip() or self.title


def sorted_findings(findings: list[Finding]) -> list[Finding]:
    """Findings in file/line order: stable output makes golden tests and CI diffs meaningful."""
    return sorted(findings, key=Finding.sort_key)


def problems(findings: list[Finding]) -> list[Finding]:
    """The findings that count against a run: failures and checks that could not run."""
    return [f for f in findings if f.is_problem]


def has_errors(findings: list[Finding], strict: bool = False) -> bool:
    threshold = Severity.WARNING if strict else Severity.ERROR
    return any(f.is_problem and f.severity.rank >= threshold.rank for f in findings)
