"""`netfab verify`: the running fabric against the plan."""

from __future__ import annotations

from fnmatch import fnmatchcase

import typer

from netfab.cli.fleet import nornir_for
from netfab.cli.options import (
    DEFAULT_BUILD,
    BuildRoot,
    Intent,
    Inventory,
    LabTarget,
    Limit,
    NetworkSelect,
    Strict,
    Workers,
)
from netfab.cli.report_options import FormatOption, OutputOption
from netfab.core.exitcodes import ExitCode
from netfab.report import ReportFormat


def verify(
    intent: Intent,
    lab: LabTarget = None,
    inventory: Inventory = None,
    build_root: BuildRoot = DEFAULT_BUILD,
    limit: Limit = None,
    fmt: FormatOption = ReportFormat.TEXT,
    output: OutputOption = None,
    workers: Workers = 16,
    strict: Strict = False,
    network: NetworkSelect = None,
) -> None:
    """Check the running fabric against the plan: BGP peers, ECMP width, interfaces, cabling, QoS."""
    from netfab.cli.pipeline import load_plan
    from netfab.cli.report_options import at_device_configs, built_configs, emit_report, report_context
    from netfab.deploy.target import build_root_for, resolve_target
    from netfab.render.build import build as run_build
    from netfab.verify.checks import RULES
    from netfab.verify.results import failed
    from netfab.verify.run import verify_fabric

    # Without BGP sessions, as `netfab build` designs it: the tree it writes then reuses that build's files
    # (same digests), and each reader derives a switch's sessions (render_device, verify's sessions_of).
    loaded = load_plan(intent, strict=strict, lab=lab is not None, network=network, bgp=False)
    plan = loaded.plan
    build_root = build_root_for(build_root, lab)
    run_build(plan, build_root)  # an inventory that matches this intent, never a stale one
    target = resolve_target(plan, build_root, lab, inventory or [])
    nr = nornir_for(plan, target, workers=workers)
    names = [d for d in plan.devices if limit is None or fnmatchcase(d, limit)]
    results = at_device_configs(verify_fabric(nr, plan, names), built_configs(plan, build_root))
    emit_report(fmt, results, report_context("verify", rules=RULES), output)
    raise typer.Exit(ExitCode.FINDINGS if failed(results) else ExitCode.OK)


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)
