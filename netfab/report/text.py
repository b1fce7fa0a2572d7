"""The human report: one ``path:line:col: severity[RULE] message`` line per finding, compiler style.

That shape is what editors and terminals already turn into clickable links. `render_text` is plain text (for
files and pipes); `render_rich` prints the same lines with colour on a rich Console.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from netfab.core.findings import Finding, Location, Severity, sorted_findings
from netfab.report import ReportContext, Summary

if TYPE_CHECKING:
    from rich.console import Console

_STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def render_text(findings: Sequence[Finding], context: ReportContext) -> str:
    lines: list[str] = []
    for finding in sorted_findings(list(findings)):
        where = _where(finding.location, context)
        lines.append(f"{where}: {finding.severity.value}[{finding.rule_id}] {finding.message}")
        lines.extend(line for _, line in _detail_lines(finding, context))
    lines.append(Summary.of(findings).sentence(len(context.files)))
    return "\n".join(lines) + "\n"


def render_rich(findings: Sequence[Finding], console: Console, context: ReportContext | None = None) -> None:
    """Same content as `render_text`, coloured. Built from Text objects: messages may contain [brackets]."""
    from rich.text import Text

    context = context or ReportContext()
    for finding in sorted_findings(list(findings)):
        text = Text()
        text.append(f"{_where(finding.location, context)}:", style="bold")
        text.append(f" {finding.severity.value}", style=_STYLES[finding.severity])
        text.append(f"[{finding.rule_id}]", style="dim")
        text.append(f" {finding.message}")
        console.print(text, soft_wrap=True, highlight=False)
        for kind, line in _detail_lines(finding, context):
            console.print(Text(line, style="green" if kind == "hint" else "dim"), soft_wrap=True, highlight=False)
    summary = Summary.of(findings)
    style = "bold red" if summary.errors else "yellow" if summary.warnings else "green"
    console.print(Text(summary.sentence(len(context.files)), style=style), highlight=False)


def _detail_lines(finding: Finding, context: ReportContext) -> Iterator[tuple[str, str]]:
    if finding.hint:
        yield "hint", f"    hint: {finding.hint}"
    for related in finding.related:
        yield "related", f"    see also: {_where(related, context)}"


def _where(location: Location, context: ReportContext) -> str:
    return str(Location(context.relpath(location.file), location.line, location.column))
