"""`netfab lint PATH...`: check intent files before anything is rendered; the CI gate.

Exit codes: 0 clean (warnings allowed unless --strict), 1 findings, 2 unreadable input or bad usage,
3 internal error (a rule crashed: reported as LINT-INTERNAL, the other rules still ran).
Imports stay inside the command: `netfab lint` must start fast in CI, so no jinja2/nornir on this path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from netfab.cli.options import Strict
from netfab.cli.report_options import FormatOption, OutputOption
from netfab.core.exitcodes import ExitCode
from netfab.report import ReportFormat

if TYPE_CHECKING:
    from netfab.core.findings import Finding, RuleInfo
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
    cache: bool = typer.Option(
        True,
        "--cache/--no-cache",
        help="Answer an unchanged intent (same bytes, same netfab) from the lint cache (netfab.cli.lint_cache).",
    ),
) -> None:
    """Check intent files: YAML hazards, schema, fabric rules (QoS, PFC, ECN, NIC, ECMP, topology, pools) and,
    unless --no-plan, the expanded plan (port use, MTU and PFC along paths, hashing per hop, duplicates)."""
    from netfab.cli import teardown
    from netfab.cli.report_options import emit_report, report_context

    if not each:  # --each designs one plan per file: those must be freed as it goes, not kept to the exit
        teardown.memory_only()
    result = _lint_each(paths, strict, plan, cache) if each else _lint(paths, strict, plan, cache)
    # Text never shows rule metadata; not importing the rules keeps a cached lint from loading them at all.
    rules = () if fmt is ReportFormat.TEXT else _rule_infos()
    context = report_context("lint", rules=rules, files=result.files or paths)
    emit_report(fmt, result.findings, context, output)
    raise typer.Exit(int(result.exit_code))


@dataclass
class _Outcome:
    findings: list[Finding]
    exit_code: ExitCode
    files: list[Path]
    skipped: list[str]

    @classmethod
    def of(cls, result: LintResult) -> _Outcome:
        return cls(result.findings, result.exit_code, result.files, result.skipped)


def _rule_infos() -> list[RuleInfo]:
    from netfab.lint import rule_infos

    return list(rule_infos())


def _lint(paths: list[Path], strict: bool, plan: bool, cache: bool = True) -> _Outcome:
    from netfab.load import load_intent_source

    source = load_intent_source(paths)
    key = None
    read = source.read_as_parsed()
    if cache and not source.unreadable and read is not None:
        from netfab.cli import lint_cache

        key = lint_cache.lint_key(paths, read, f"strict={strict} plan={plan}")
        hit = lint_cache.load(key, strict=strict)
        if hit is not None:
            findings, code, skipped = hit
            return _Outcome(findings, code, list(source.files), skipped)
    from netfab.lint import lint_source

    result = lint_source(source, strict=strict)
    if plan and not source.unreadable:
        from netfab.cli.plan_lint import with_plan

        result = with_plan(result, source, strict)
    if key is not None and result.exit_code != ExitCode.INTERNAL:  # a crashed rule is not an answer to keep
        lint_cache.store(key, result.findings, result.skipped)
    return _Outcome.of(result)


def _lint_each(paths: list[Path], strict: bool, plan: bool, cache: bool = True) -> _Outcome:
    """One report over every file, each linted as its own intent; the worst exit code wins."""
    from dataclasses import replace

    from netfab.core.findings import sorted_findings
    from netfab.load import expand_paths

    files, problems = expand_paths(paths)
    if problems:  # a missing path: reported like any unreadable input
        return _lint(paths, strict, plan, cache)
    results = [_lint([f], strict, plan, cache) for f in files]
    return replace(
        results[0],
        findings=sorted_findings([f for r in results for f in r.findings]),
        exit_code=max(r.exit_code for r in results),
        files=files,
        skipped=sorted({s for r in results for s in r.skipped}),
    )
