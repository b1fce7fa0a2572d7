"""Findings: what every checking stage (load, schema, lint, verify, audit) reports.

A Finding is plain data with a location in the user's own file. Text, JSON, JUnit and SARIF are renderings
of the same list (see netfab.report), so nothing a machine reads is lost in the human view.
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


@dataclass(frozen=True, slots=True, order=True)
class Location:
    """A position in a user's file. Lines and columns are 1-based, as editors and SARIF count them."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if not self.line:
            return self.file
        if not self.column:
            return f"{self.file}:{self.line}"
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: a stable rule id, a severity, what is wrong, how to fix it, and where.

    `path` is the dotted field path inside the intent (e.g. ``qos.classes[1].dscp``) when there is one;
    `location` points at the exact YAML node so CI annotations land on the right line.
    """

    rule_id: str
    severity: Severity
    message: str
    location: Location
    hint: str = ""
    path: str = ""
    related: tuple[Location, ...] = field(default=())

    def sort_key(self) -> tuple[str, int, int, str, str]:
        loc = self.location
        return (loc.file, loc.line, loc.column, self.rule_id, self.message)


def sorted_findings(findings: list[Finding]) -> list[Finding]:
    """Findings in file/line order: stable output makes golden tests and CI diffs meaningful."""
    return sorted(findings, key=Finding.sort_key)


def has_errors(findings: list[Finding], strict: bool = False) -> bool:
    threshold = Severity.WARNING if strict else Severity.ERROR
    return any(f.severity.rank >= threshold.rank for f in findings)
