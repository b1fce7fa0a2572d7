"""The front half of every verb that acts on a fabric: load -> lint -> design -> plan lint.

It prints findings the same way `netfab lint` does and exits with the documented code, so `build`,
`deploy`, `lab up` and `audit` all refuse a broken intent before touching anything.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from netfab import __version__
from netfab.core.exitcodes import ExitCode
from netfab.core.findings import Finding, has_errors, sorted_findings

if TYPE_CHECKING:
    from netfab.design import FabricPlan
    from netfab.intent import Intent

# soft_wrap: a long message stays one line (the terminal folds it); rich would otherwise hard-wrap at 80
# columns when stderr is a file or a CI log, splitting sentences ("journal \n in runs/...").
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


@dataclass
class Loaded:
    intent: Intent
    plan: FabricPlan
    findings: list[Finding]
    source_file: str
    lab_notes: list[str]


def print_findings(findings: list[Finding], files: list[Path] | None = None) -> None:
    from netfab.report import ReportContext
    from netfab.report.text import render_rich, render_text

    if not findings:
        return
    ctx = ReportContext(tool_version=__version__, root=Path.cwd(), files=files or [])
    if err_console.is_terminal:
        render_rich(findings, err_console, ctx)
    else:
        sys.stderr.write(render_text(findings, ctx))


def load_plan(paths: list[Path], strict: bool = False, lab: bool = False) -> Loaded:
    """Lint the intent, expand it, and lint the plan. Exits 2 on unreadable input, 1 on errors.
    lab=True designs the lab variant (every switch FRR, scaled by the intent's lab section)."""
    from netfab.design import DesignError, design
    from netfab.lint.api import lint_source, run_rules
    from netfab.lint.context import LintContext
    from netfab.lint.registry import RuleRegistry, default_registry
    from netfab.load import load_intent_source

    source = load_intent_source(paths)
    result = lint_source(source, strict=strict)
    if result.exit_code != ExitCode.OK or result.intent is None:
        print_findings(result.findings, source.files)
        raise typer.Exit(result.exit_code)
    intent = result.intent
    lab_notes: list[str] = []
    if lab:
        from netfab.lab.fromplan import lab_variant

        intent, lab_notes = lab_variant(intent)
        for note in lab_notes:
            err_console.print(f"lab: {note}")
    source_file = str(source.files[0]) if source.files else "<intent>"
    try:
        plan = design(intent, source_file)
    except DesignError as exc:
        ctx = LintContext.build(intent, source)
        print_findings(exc.located(lambda path: ctx.at(*path)), source.files)
        raise typer.Exit(ExitCode.FINDINGS) from None
    plan_rules = RuleRegistry(r for r in default_registry() if r.needs_plan)
    plan_findings, _ = run_rules(plan_rules, LintContext.build(intent, source, plan))
    findings = sorted_findings([*result.findings, *plan_findings])
    if has_errors(findings, strict):
        print_findings(findings, source.files)
        raise typer.Exit(ExitCode.FINDINGS)
    if findings:
        print_findings(findings, source.files)
    return Loaded(intent, plan, findings, source_file, lab_notes)
