"""The human report, one style for every verb: the verb's own overview (if any), then one
``where: severity[RULE] message`` line per problem or skipped check, compiler style, then one summary line.

`where` is ``path:line:col`` for a finding in a file (what editors and terminals turn into links) and the
device name for a finding about a device. Passing checks are counted in the summary, not listed.
`render_text` is plain text (files and pipes); `render_rich` prints the same lines with colour.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from netfab.core.findings import Finding, Severity, Status, sorted_findings
from netfab.report import ReportContext, Summary

if TYPE_CHECKING:
    from rich.console import Console

_STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def render_text(findings: Sequence[Finding], context: ReportContext) -> str:
    lines: list[str] = [context.preamble.rstrip("\n"), ""] if context.preamble else []
    listed, more = _listed(findings, context)
    for finding in listed:
        lines.append(f"{context.where(finding)}: {_label(finding)}[{finding.rule_id}] {finding.message}")
        lines.extend(line for _, line in _detail_lines(finding, context))
    if more:
        lines.append(_more(more))
    lines.append(summary_line(findings, context))
    return "\n".join(lines) + "\n"


def render_rich(findings: Sequence[Finding], console: Console, context: ReportContext | None = None) -> None:
    """Same content as `render_text`, coloured. Built from Text objects: messages may contain [brackets]."""
    from rich.text import Text

    context = context or ReportContext()
    if context.preamble:
        console.print(Text(context.preamble.rstrip("\n") + "\n"), soft_wrap=True, highlight=False)
    listed, more = _listed(findings, context)
    for finding in listed:
        text = Text()
        text.append(f"{context.where(finding)}:", style="bold")
        style = _STYLES[finding.severity] if finding.is_problem else "dim"
        text.append(f" {_label(finding)}", style=style)
        text.append(f"[{finding.rule_id}]", style="dim")
        text.append(f" {finding.message}")
        console.print(text, soft_wrap=True, highlight=False)
        for kind, line in _detail_lines(finding, context):
            console.print(Text(line, style="green" if kind == "hint" else "dim"), soft_wrap=True, highlight=False)
    if more:
        console.print(Text(_more(more), style="dim"), soft_wrap=True, highlight=False)
    summary = Summary.of(findings)
    style = "bold red" if summary.errors else "yellow" if summary.warnings else "green"
    console.print(Text(summary_line(findings, context), style=style), soft_wrap=True, highlight=False)


def summary_line(findings: Sequence[Finding], context: ReportContext) -> str:
    return Summary.of(findings).sentence(len(context.files), len(context.subjects) or _devices(findings))


def _devices(findings: Sequence[Finding]) -> int:
    return len({f.subject for f in findings if f.subject})


def _listed(findings: Sequence[Finding], context: ReportContext) -> tuple[list[Finding], int]:
    """The findings text lists (all but passes), cut at context.text_limit; and how many were left out."""
    listed = [f for f in sorted_findings(list(findings)) if f.status is not Status.PASS]
    limit = context.text_limit
    if limit is None or len(listed) <= limit:
        return listed, 0
    return listed[:limit], len(listed) - limit


def _more(count: int) -> str:
    return f"... {count} more findings: see the JSON report"


def _label(finding: Finding) -> str:
    """The severity of a problem (lint's long-standing ``error[QOS001]``); ``skip`` for a skipped check."""
    return finding.severity.value if finding.is_problem else finding.status.value


def _detail_lines(finding: Finding, context: ReportContext) -> Iterator[tuple[str, str]]:
    if finding.hint:
        yield "hint", f"    hint: {finding.hint}"
    for related in finding.related:
        yield "related", f"    see also: {context.at(related)}"
