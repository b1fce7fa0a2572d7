"""Design failures that only show once the fabric is expanded (name clashes, exhausted pools)."""

from __future__ import annotations

from netfab.core.findings import Finding


class DesignError(Exception):
    """Raised with findings located at the intent field to change; the CLI renders them like lint."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__("; ".join(f.message for f in findings))
        self.findings = findings
