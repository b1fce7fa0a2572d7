"""`netfab lint PATH...`: check intent files before anything is rendered; the CI gate.

Exit codes: 0 clean (warnings allowed unless --strict), 1 findings, 2 unreadable input or bad usage,
3 internal error (a rule crashed: reported as LINT-INTERNAL, the other rules still ran).
Imports stay inside the command: `netfab lint` must start fast in CI, so no jinja2/nornir on this path.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from netfab.cli.options import Strict
from netfab.cli.report_options import FormatOption, OutputOption
from netfab.report import ReportFormat

if TYPE_CHECKING:
    from netfab.lint.api import LintResult


def register(app: typer.Typer) -> None:
    app.command("lint")(lint)


def lint(
    paths: list[Path] = typer.Argument(..., metavar="PATH", help="Intent YAML files or directories (merged)."),
    fmt: FormatOption = ReportFormat.TEXT,
    output: OutputOption = None,
    strict: Strict = False,
    plan: bool = typer.Option(
        True,
        "--plan/--no-plan",
        help="After a clean intent lint, design the fabric and run the rules that read the plan (PLAN*).",
    ),
    each: bool = typer.Option(
        False, "--each", help="Lint every file as a fabric of its own instead of merging them into one intent."
    ),
) -> None:
    """Check intent files: YAML hazards, schema, fabric rules (QoS, PFC, ECN, NIC, ECMP, topology, pools) and,
    unless --no-plan, the expanded plan (port use, MTU and PFC along paths, hashing per hop, duplicates)."""
    from netfab.cli.report_options import emit_report, report_context
    from netfab.lint import rule_infos

    result = _lint_each(paths, strict, plan) if each else _lint(paths, strict, plan)
    context = report_context("lint", rules=rule_infos(), files=result.files or paths)
    emit_report(fmt, result.findings, context, output)
    raise typer.Exit(int(result.exit_code))


def _lint(paths: list[Path], strict: bool, plan: bool) -> LintResult:
    from netfab.lint import lint_source
    from netfab.load import load_intent_source

    source = load_intent_source(paths)
    result = lint_source(source, strict=strict)
    if plan and not source.unreadable:
        from netfab.cli.plan_lint import with_plan

        result = with_plan(result, source, strict)
    return result


def _lint_each(paths: list[Path], strict: bool, plan: bool) -> LintResult:
    """One report over every file, each linted as its own intent; the worst exit code wins."""
    from dataclasses import replace

    from netfab.core.findings import sorted_findings
    from netfab.load import expand_paths

    files, problems = expand_paths(paths)
    if problems:  # a missing path: reported like any unreadable input
        return _lint(paths, strict, plan)
    results = [_lint([f], strict, plan) for f in files]
    return replace(
        results[0],
        findings=sorted_findings([f for r in results for f in r.findings]),
        intent=None,
        exit_code=max(r.exit_code for r in results),
        files=files,
        skipped=sorted({s for r in results for s in r.skipped}),
    )
