"""`netfab verify`: the running fabric against the plan."""

from __future__ import annotations

import sys
from fnmatch import fnmatchcase
from pathlib import Path

import typer

from netfab.cli.fleet import nornir_for
from netfab.cli.options import DEFAULT_BUILD, BuildRoot, Intent, Inventory, LabTarget, Limit, Strict, Workers
from netfab.core.exitcodes import ExitCode
from netfab.core.validate import output_file, typer_callback


def verify(
    intent: Intent,
    lab: LabTarget = None,
    inventory: Inventory = None,
    build_root: BuildRoot = DEFAULT_BUILD,
    limit: Limit = None,
    output_format: str = typer.Option("text", "--format", help="text, json or junit."),
    output: Path | None = typer.Option(
        None,
        "--output",
        callback=typer_callback(output_file, "--output"),
        help="Write the report here instead of stdout.",
    ),
    workers: Workers = 16,
    strict: Strict = False,
) -> None:
    """Check the running fabric against the plan: BGP peers, ECMP width, interfaces, cabling, QoS."""
    from netfab.cli.pipeline import err_console, load_plan
    from netfab.core.fs import atomic_write_text
    from netfab.deploy.target import build_root_for, resolve_target
    from netfab.render.build import build as run_build
    from netfab.verify.results import failed, render_json, render_junit, render_text
    from netfab.verify.run import verify_fabric

    if output_format not in ("text", "json", "junit"):
        err_console.print(f"netfab verify: unknown format {output_format!r}")
        raise typer.Exit(ExitCode.USAGE)
    loaded = load_plan(intent, strict=strict, lab=lab is not None)
    plan = loaded.plan
    build_root = build_root_for(build_root, lab)
    run_build(plan, build_root)  # an inventory that matches this intent, never a stale one
    target = resolve_target(plan, build_root, lab, inventory or [])
    nr = nornir_for(plan, target, workers=workers)
    names = [d for d in plan.devices if limit is None or fnmatchcase(d, limit)]
    results = verify_fabric(nr, plan, names)
    text = {"text": render_text, "json": render_json, "junit": render_junit}[output_format](results)
    if output:
        atomic_write_text(output, text)
    else:
        sys.stdout.write(text)
    raise typer.Exit(ExitCode.FINDINGS if failed(results) else ExitCode.OK)


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)
