"""Design failures that only show once the fabric is expanded (name clashes, exhausted pools)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from netfab.core.findings import Finding, Location, Severity
from netfab.load.yamlsource import DataPath, dotted


class DesignError(Exception):
    """Raised with the intent field to change; the CLI locates it in the user's file and renders it like lint.

    The field travels as a DataPath tuple, so the CLI never parses the dotted text back.
    """

    def __init__(self, rule_id: str, message: str, field: DataPath, hint: str, source_file: str) -> None:
        super().__init__(message)
        self.field = field
        self.findings = [
            Finding(rule_id, Severity.ERROR, message, Location(source_file), hint=hint, path=dotted(field))
        ]

    def located(self, locate: Callable[[DataPath], Location]) -> list[Finding]:
        """The findings pointed at where `locate` finds the field in the user's file."""
        return [replace(f, location=locate(self.field)) for f in self.findings]
