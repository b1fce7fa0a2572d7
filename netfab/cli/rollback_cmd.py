"""`netfab rollback RUN_ID INTENT...`: undo a run from its journal."""

from __future__ import annotations

from pathlib import Path

import typer

from netfab.cli.fleet import lock_fabric, nornir_for
from netfab.cli.options import (
    DEFAULT_BUILD,
    DEFAULT_RUNS,
    BuildRoot,
    Inventory,
    LabTarget,
    NetworkSelect,
    RunsRoot,
    Strict,
    Workers,
)
from netfab.core.exitcodes import ExitCode
from netfab.core.validate import name, typer_callback


def rollback(
    run_id: str = typer.Argument(
        ..., metavar="RUN_ID", callback=typer_callback(name, "run id"), help="The run to undo (see runs/<fabric>/)."
    ),
    intent_args: list[Path] | None = typer.Argument(
        None, metavar="INTENT", help="The fabric's intent (for the inventory), as every other verb takes it."
    ),
    intent_option: list[Path] | None = typer.Option(
        None, "--intent", metavar="PATH", help="The intent, the older spelling (repeatable)."
    ),
    lab: LabTarget = None,
    inventory: Inventory = None,
    build_root: BuildRoot = DEFAULT_BUILD,
    runs: RunsRoot = DEFAULT_RUNS,
    workers: Workers = 8,
    strict: Strict = False,
    network: NetworkSelect = None,
) -> None:
    """Undo a run: put every device it changed back to the config it backed up, in reverse wave order."""
    from netfab.cli.pipeline import err_console, load_plan
    from netfab.cli.progress import print_event
    from netfab.deploy.journal import JournalCorrupt, load_run
    from netfab.deploy.rollback import rollback_run
    from netfab.deploy.target import build_root_for, resolve_target
    from netfab.render.build import build as run_build

    intent = [*(intent_args or []), *(intent_option or [])]
    if not intent:
        err_console.print("netfab rollback: give the fabric's intent: netfab rollback RUN_ID INTENT...")
        raise typer.Exit(ExitCode.USAGE)
    # Without BGP sessions, as `netfab build` designs it: the tree it writes then reuses that build's files
    # (same digests), and each reader derives a switch's sessions (render_device, verify's sessions_of).
    loaded = load_plan(intent, strict=strict, lab=lab is not None, network=network, bgp=False)
    plan = loaded.plan
    build_root = build_root_for(build_root, lab)
    lock = lock_fabric(runs, plan.name, "rollback")
    try:
        lock.set_run(run_id)
        run_build(plan, build_root)  # the inventory the rollback connects with, as the intent says now
        try:
            journal = load_run(runs, plan.name, run_id)
        except JournalCorrupt as exc:
            err_console.print(f"netfab rollback: {exc}", markup=False, highlight=False)
            raise typer.Exit(ExitCode.USAGE) from None
        except (OSError, ValueError) as exc:
            err_console.print(f"netfab rollback: no readable run {run_id!r} for fabric {plan.name} under {runs}: {exc}")
            raise typer.Exit(ExitCode.USAGE) from None
        target = resolve_target(plan, build_root, lab, inventory or [])
        nr = nornir_for(plan, target, workers=workers)
        outcome = rollback_run(nr, journal, on_event=lambda event: print_event(err_console, event))
    finally:
        lock.release()
    failures = outcome.failures
    err_console.print(f"run {run_id}: {len(outcome.restored)} devices restored and verified, {len(failures)} failed")
    for dev in sorted(outcome.devices, key=lambda d: (d.ok, d.device)):
        # failures first, "<device>: <why>"; then "<device>: ok, <what was done>"
        line = f"  {dev.device}: ok, {dev.message}" if dev.ok else f"  {dev.device}: {dev.message}"
        err_console.print(line, markup=False, highlight=False)
    raise typer.Exit(ExitCode.OK if not failures else ExitCode.FINDINGS)


def register(app: typer.Typer) -> None:
    app.command("rollback")(rollback)
