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
    from netfab.lint.api import LintResult
    from netfab.lint.registry import RuleRegistry
    from netfab.load import IntentSource

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
    network: str = "backend"


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


def load_plan(
    paths: list[Path], strict: bool = False, lab: bool = False, network: str | None = None, bgp: bool = True
) -> Loaded:
    """Lint the intent, expand one of its networks (the back end unless `network` names another), and lint
    the plan. Exits 2 on unreadable input or an unknown network, 1 on errors.
    lab=True designs the lab variant (every switch FRR, scaled by the intent's lab section). bgp=False is
    for a caller that reads no BGP session (netfab.design.design's bgp: ~20 % of a large design)."""
    return load_plans(paths, strict=strict, lab=lab, networks=[network] if network else None, bgp=bgp)[0]


def load_plans(
    paths: list[Path],
    strict: bool = False,
    lab: bool = False,
    networks: list[str] | None = None,
    bgp: bool = True,
    linted: tuple[IntentSource, LintResult] | None = None,
) -> list[Loaded]:
    """load_plan for several networks of one intent (every network when `networks` is None), linting the
    intent once; `linted` is the intent at `paths` loaded and linted with `strict` already."""
    from netfab.lint.api import lint_source
    from netfab.lint.registry import RuleRegistry, default_registry
    from netfab.load import load_intent_source

    if linted is None:
        source = load_intent_source(paths)
        result = lint_source(source, strict=strict)
    else:
        source, result = linted
    if result.exit_code != ExitCode.OK or result.intent is None:
        print_findings(result.findings, source.files)
        raise typer.Exit(result.exit_code)
    root = result.intent
    known = root.network_names()
    wanted = networks if networks is not None else known
    unknown = [n for n in wanted if n not in known]
    if unknown:
        err_console.print(f"netfab: unknown network {unknown[0]!r}; this intent has {', '.join(known)}")
        raise typer.Exit(ExitCode.USAGE)
    if lab and wanted != [known[0]]:
        err_console.print("netfab: the lab builds the back end only; drop --network (or select backend)")
        raise typer.Exit(ExitCode.USAGE)
    source_file = str(source.files[0]) if source.files else "<intent>"
    plan_rules = RuleRegistry(r for r in default_registry() if r.needs_plan)
    loaded: list[Loaded] = []
    for i, name in enumerate(wanted):
        # The intent's own findings (warnings: errors stopped above) are reported once, with the first network.
        intent_findings = result.findings if i == 0 else []
        loaded.append(_load_network(root, name, source, source_file, intent_findings, plan_rules, strict, lab, bgp))
    return loaded


def _load_network(
    root: Intent,
    network: str,
    source: IntentSource,
    source_file: str,
    lint_findings: list[Finding],
    plan_rules: RuleRegistry,
    strict: bool,
    lab: bool,
    bgp: bool = True,
) -> Loaded:
    from netfab.cli import teardown
    from netfab.design import DesignError, design
    from netfab.lint.api import run_rules
    from netfab.lint.context import LintContext

    view = root.network_view(network)
    intent = root
    lab_notes: list[str] = []
    if lab:
        from netfab.lab.fromplan import lab_variant

        intent, lab_notes = lab_variant(intent)
        for note in lab_notes:
            err_console.print(f"lab: {note}")
    try:
        # For a verb that ends with the process: no GC pass over the plan, no freeing it (teardown.outliving).
        plan = teardown.outliving(design, intent, source_file, network, bgp)
    except DesignError as exc:
        ctx = LintContext.build(view.intent, source, prefix=view.path, root=root)
        print_findings(exc.located(lambda path: ctx.at(*path)), source.files)
        raise typer.Exit(ExitCode.FINDINGS) from None
    net_intent = intent.network_view(network).intent
    plan_findings, _ = run_rules(plan_rules, LintContext.build(net_intent, source, plan, prefix=view.path, root=intent))
    findings = sorted_findings([*lint_findings, *plan_findings])
    if has_errors(findings, strict):
        print_findings(findings, source.files)
        raise typer.Exit(ExitCode.FINDINGS)
    if findings:
        print_findings(findings, source.files)
    return Loaded(net_intent, plan, findings, source_file, lab_notes, network)
