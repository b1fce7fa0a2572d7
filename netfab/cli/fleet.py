"""Helpers the deploy, rollback and verify verbs share: the Nornir they connect with."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from netfab.core.exitcodes import ExitCode

if TYPE_CHECKING:
    from nornir.core import Nornir

    from netfab.deploy.journal import Journal
    from netfab.deploy.lock import FabricLock
    from netfab.deploy.target import Target
    from netfab.design import FabricPlan


def nornir_for(plan: FabricPlan, target: Target, workers: int) -> Nornir:
    from netfab.cli.pipeline import err_console
    from netfab.deploy.inventory import InventoryError, build_nornir, load_inventory_data

    try:
        hosts, groups = load_inventory_data(target.generated_inventory, target.overrides)
    except InventoryError as exc:
        err_console.print(f"netfab: {exc}")
        raise typer.Exit(ExitCode.USAGE) from None
    return build_nornir(hosts, groups, target.credentials, workers=workers)


def lock_fabric(runs: Path, fabric: str, verb: str) -> FabricLock:
    """Take the fabric's writer lock (deploy/lock.py) or exit: 1 when another run holds it, 2 when the runs
    directory cannot hold a lock. Also names every unreadable journal (without letting it block this run)."""
    from netfab.cli.pipeline import err_console
    from netfab.deploy.lock import FabricLocked, LockUnavailable, acquire, stale_message

    try:
        lock = acquire(runs, fabric, verb)
    except FabricLocked as exc:
        err_console.print(f"netfab {verb}: {exc}", markup=False, highlight=False)
        raise typer.Exit(ExitCode.FINDINGS) from None
    except LockUnavailable as exc:
        err_console.print(f"netfab {verb}: {exc.strerror}", markup=False, highlight=False)
        raise typer.Exit(ExitCode.USAGE) from None
    if lock.stale is not None:
        err_console.print(f"netfab {verb}: {stale_message(lock.stale)}", markup=False, highlight=False)
    return lock


def refuse_if_interrupted(runs: Path, fabric: str, verb: str, resume: bool = False) -> list[Journal]:
    """The interrupted runs of `fabric` (to supersede when resuming); exits 1 with a per-device account of
    each when not resuming. Unreadable journals are named and skipped: one bad file must not block the
    fabric (and any commit such a run left pending is rolled back by the next run's prepare stage)."""
    from netfab.cli.pipeline import err_console
    from netfab.deploy.journal import scan_runs
    from netfab.deploy.recovery import refusal

    scan = scan_runs(runs, fabric)
    for bad in scan.unreadable:
        err_console.print(
            f"netfab {verb}: warning: ignoring an unreadable run journal: {bad}. If that run was interrupted, "
            "this run rolls back any commit it left pending before changing a device.",
            markup=False,
            highlight=False,
        )
    if scan.interrupted and not resume:
        for journal in scan.interrupted:
            err_console.print(refusal(journal), markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(ExitCode.FINDINGS)
    return scan.interrupted
