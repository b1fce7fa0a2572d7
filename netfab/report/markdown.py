"""The markdown report, for a pull-request comment or a change ticket: the summary and a table of problems.

A verb with a richer document of its own (audit: fleet groups, per-device drift and diffs) passes it in
``ReportContext.markdown``; the shared summary line follows it (its per-device lists already hold the rows).
"""

from __future__ import annotations

from collections.abc import Sequence

from netfab.core.findings import Finding, Status
from netfab.report import ReportContext
from netfab.report.text import summary_line


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(findings: Sequence[Finding], context: ReportContext) -> str:
    listed = [f for f in findings if f.is_problem or f.status is Status.SKIP]
    out = [context.markdown.rstrip("\n"), ""] if context.markdown else [f"# netfab {context.verb}", ""]
    out += [f"**{_cell(summary_line(findings, context))}**", ""]
    if listed and not context.markdown:
        out += ["| where | status | rule | message | hint |", "|---|---|---|---|---|"]
        for f in listed:
            where = context.where(f)
            label = f.severity.value if f.is_problem else f.status.value
            out.append(f"| {_cell(where)} | {label} | `{f.rule_id}` | {_cell(f.message)} | {_cell(f.hint)} |")
    return "\n".join(out).rstrip() + "\n"
