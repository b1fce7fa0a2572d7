"""Render findings for people (text) and machines (JSON, JUnit XML, SARIF 2.1.0).

Every renderer is a pure function ``(findings, ReportContext) -> str`` over the same data, so a CI job that
reads SARIF sees exactly what an operator reads in the terminal. Paths in every format are made relative to
``ReportContext.root`` (the repository root) so reports are stable across checkouts and machines.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from netfab.core.findings import Finding, Severity

FORMATS = ("text", "json", "junit", "sarif")


@dataclass(frozen=True, slots=True)
class RuleInfo:
    """What a rule id means: feeds SARIF rule metadata, JUnit test cases and the docs."""

    id: str
    title: str
    severity: Severity
    doc: str  # markdown; the first paragraph doubles as the one-line description
    help_uri: str = ""


@dataclass(frozen=True)
class ReportContext:
    """Everything a renderer needs besides the findings themselves."""

    tool_version: str = ""
    root: Path = field(default_factory=Path.cwd)
    rules: Sequence[RuleInfo] = ()
    files: Sequence[Path | str] = ()  # every file that was checked (JUnit reports passing cases for them too)

    information_uri: str = ""  # the project's home page, for SARIF's tool.driver.informationUri

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


@dataclass(frozen=True, slots=True)
class Summary:
    errors: int
    warnings: int
    infos: int
    files: int  # files with at least one finding

    @classmethod
    def of(cls, findings: Sequence[Finding]) -> Summary:
        counts = {s: 0 for s in Severity}
        for f in findings:
            counts[f.severity] += 1
        files = len({f.location.file for f in findings})
        return cls(counts[Severity.ERROR], counts[Severity.WARNING], counts[Severity.INFO], files)

    def as_dict(self) -> dict[str, int]:
        counts = {"errors": self.errors, "warnings": self.warnings, "infos": self.infos}
        return {**counts, "files": self.files, "total": sum(counts.values())}

    def sentence(self, checked_files: int = 0) -> str:
        """``3 errors, 1 warning in 2 files``: the last line of the text report."""
        if not (self.errors or self.warnings or self.infos):
            return f"no problems found in {_plural(checked_files, 'file')}" if checked_files else "no problems found"
        parts = [_plural(self.errors, "error"), _plural(self.warnings, "warning")]
        if self.infos:
            parts.append(_plural(self.infos, "note"))
        return f"{', '.join(parts)} in {_plural(self.files, 'file')}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def render(fmt: str, findings: Sequence[Finding], context: ReportContext) -> str:
    """Dispatch on a ``--format`` value. Raises ValueError for an unknown format (a usage error)."""
    # Imported here: the renderer modules import RuleInfo/ReportContext from this package.
    from netfab.report.json_report import render_json
    from netfab.report.junit import render_junit
    from netfab.report.sarif import render_sarif
    from netfab.report.text import render_text

    renderers = {"text": render_text, "json": render_json, "junit": render_junit, "sarif": render_sarif}
    if fmt not in renderers:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return renderers[fmt](findings, context)


__all__ = ["FORMATS", "ReportContext", "RuleInfo", "Summary", "render"]
