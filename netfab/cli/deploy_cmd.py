"""`netfab deploy`: staged, commit-confirmed rollout with a run journal."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import typer

from netfab.cli.fleet import lock_fabric, nornir_for, refuse_if_interrupted
from netfab.cli.options import (
    DEFAULT_BUILD,
    DEFAULT_RUNS,
    BuildRoot,
    Intent,
    Inventory,
    LabTarget,
    Limit,
    NetworkSelect,
    RunsRoot,
    Strict,
)
from netfab.core.exitcodes import ExitCode
from netfab.core.fs import output_error

if TYPE_CHECKING:
    from netfab.deploy.journal import Journal, RunState
    from netfab.deploy.lock import FabricLock
    from netfab.deploy.playbook import Playbook
    from netfab.deploy.waves import Wave
    from netfab.design.plan import DevicePlan, FabricPlan


def deploy(
    intent: Intent,
    playbook: Path | None = typer.Option(None, "--playbook", help="Staging playbook (default: playbooks/deploy.yaml)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Back up and diff only; change nothing."),
    limit: Limit = None,
    confirm_timeout: int | None = typer.Option(
        None, "--confirm-timeout", min=1, help="Seconds before an unconfirmed commit reverts."
    ),
    lab: LabTarget = None,
    inventory: Inventory = None,
    build_root: BuildRoot = DEFAULT_BUILD,
    runs: RunsRoot = DEFAULT_RUNS,
    strict: Strict = False,
    network: NetworkSelect = None,
    resume: bool = typer.Option(False, "--resume", help="Continue after an interrupted run (re-diffs everything)."),
    show_diff: bool = typer.Option(True, "--diff/--no-diff", help="Print each device's diff."),
    events: Path | None = typer.Option(
        None, "--events", help="Also write every deploy event as JSON Lines to FILE ('-': stdout)."
    ),
) -> None:
    """Staged, commit-confirmed rollout: lint, build, back up, diff, commit with a confirm timer,
    post-check, then confirm, or roll the wave back."""
    from netfab.cli.pipeline import err_console, load_plan
    from netfab.core.paths import playbooks_dir
    from netfab.deploy.playbook import load_playbook
    from netfab.deploy.target import build_root_for

    if events is not None and str(events) != "-":
        # Checked before anything is contacted or journaled: an unwritable FILE is exit 2 with nothing begun.
        try:
            events.open("a", encoding="utf-8").close()
        except OSError as exc:
            raise output_error(events, exc) from None
    show_diff = show_diff and str(events) != "-"  # stdout carries the JSON lines then, and nothing else
    # Without BGP sessions, as `netfab build` designs it: the tree it writes then reuses that build's files
    # (same digests), and each reader derives a switch's sessions (render_device, verify's sessions_of).
    loaded = load_plan(intent, strict=strict, lab=lab is not None, network=network, bgp=False)
    plan = loaded.plan
    build_root = build_root_for(build_root, lab)
    book_path = playbook or (
        Path("playbooks/deploy.yaml") if Path("playbooks/deploy.yaml").is_file() else playbooks_dir() / "deploy.yaml"
    )
    try:
        book = load_playbook(book_path)
    except Exception as exc:  # a playbook is user input: a clear message, not a traceback
        err_console.print(f"netfab deploy: cannot use playbook {book_path}: {exc}")
        raise typer.Exit(ExitCode.USAGE) from None
    lock = lock_fabric(runs, plan.name, "deploy")
    try:
        _deploy_locked(
            loaded,
            book,
            book_path,
            lock,
            intent,
            dry_run,
            limit,
            confirm_timeout,
            lab,
            inventory,
            build_root,
            runs,
            resume,
            show_diff,
            events,
        )
    finally:
        lock.release()


def _deploy_locked(
    loaded: Any,
    book: Playbook,
    book_path: Path,
    lock: FabricLock,
    intent: list[Path],
    dry_run: bool,
    limit: str | None,
    confirm_timeout: int | None,
    lab: str | None,
    inventory: list[Path] | None,
    build_root: Path,
    runs: Path,
    resume: bool,
    show_diff: bool,
    events: Path | None,
) -> None:
    from netfab.cli.pipeline import err_console
    from netfab.deploy.journal import DeviceRecord, Journal, JournalError, RunRecord, new_run_id
    from netfab.deploy.target import resolve_target
    from netfab.deploy.waves import plan_waves
    from netfab.render.build import build as run_build

    plan = loaded.plan
    stale = refuse_if_interrupted(runs, plan.name, "deploy", resume)
    run_build(plan, build_root)  # the inventory and configs this run deploys, on disk for review
    target = resolve_target(plan, build_root, lab, inventory or [])
    devices = [d for d in plan.devices.values() if limit is None or fnmatchcase(d.name, limit)]
    if not devices:
        err_console.print(f"netfab deploy: --limit {limit!r} matches no device")
        raise typer.Exit(ExitCode.USAGE)
    waves = plan_waves(book, devices)
    timeout = confirm_timeout if confirm_timeout is not None else book.confirm_timeout // 1_000_000
    # The inventory is loaded before the journal exists: an inventory error leaves no run behind.
    nr = nornir_for(plan, target, workers=max(w.parallelism for w in waves))
    record = RunRecord(
        run_id=new_run_id(),
        fabric=plan.name,
        intent=[str(p) for p in intent],
        playbook=str(book_path),
        dry_run=dry_run,
        waves=[{"name": w.name, "devices": list(w.devices)} for w in waves],
        devices={d: DeviceRecord(d, w.name) for w in waves for d in w.devices},
        lab=lab,
        confirm_timeout_s=timeout,
        confirm_mode=book.confirm,
    )
    try:
        journal = Journal(runs, record, target.credentials.secrets())
    except JournalError as exc:
        err_console.print(f"netfab deploy: {exc}; nothing was changed. Point --runs at a writable directory.")
        raise typer.Exit(ExitCode.USAGE) from None
    lock.set_run(record.run_id)
    if not dry_run:
        # Only now, with this run's journal on disk to answer for the fabric (its prepare stage rolls back what
        # the interrupted run left pending): a resume that stopped before (a build error, a --limit matching
        # nothing, an inventory error) or that is only a dry run leaves the interrupted run blocking.
        for j in stale:
            j.finish("interrupted", f"superseded by resumed run {record.run_id}")
    try:
        _rollout(journal, nr, plan, book, devices, waves, timeout, dry_run, show_diff, events)
    except JournalError as exc:
        # Disk full or gone mid-run: say what the devices are doing, from the in-memory record.
        from netfab.deploy.recovery import device_positions

        err_console.print(f"netfab deploy: {exc}; rollout stopped. Devices:", markup=False, highlight=False)
        for text, names in device_positions(journal):
            err_console.print(f"  {', '.join(names)}: {text}", markup=False, highlight=False)
        _close_unfinished(journal, exc)
        raise typer.Exit(ExitCode.USAGE) from None
    except BaseException as exc:
        _close_unfinished(journal, exc)
        raise


def _close_unfinished(journal: Journal, exc: BaseException) -> None:
    """A run that ends by an exception: 'failed' while no device was committed (it changed nothing, so it
    must not block the next run); otherwise left 'running', which the next run reports as interrupted with
    each device's position, since its devices may still be reverting on their timers."""
    import contextlib

    from netfab.deploy.journal import JournalError

    if journal.record.state != "running" or isinstance(exc, SystemExit | typer.Exit):
        return
    touched = any(d.state not in ("planned", "backed_up", "in_sync", "failed") for d in journal.record.devices.values())
    with contextlib.suppress(OSError, JournalError):
        if touched:
            journal.close()
        else:
            journal.finish("failed", f"stopped before any commit: {type(exc).__name__}: {exc}")


def _rollout(
    journal: Journal,
    nr: Any,
    plan: FabricPlan,
    book: Playbook,
    devices: list[DevicePlan],
    waves: list[Wave],
    timeout: int,
    dry_run: bool,
    show_diff: bool,
    events: Path | None,
) -> None:
    from netfab.cli.pipeline import err_console
    from netfab.cli.progress import DeployProgress, progress_bar
    from netfab.core.events import Fanout, JsonEvents
    from netfab.deploy.engine import Deployer
    from netfab.deploy.target import device_artifacts

    record = journal.record
    err_console.print(
        f"run {record.run_id}: {len(devices)} devices in {len(waves)} waves"
        f"{' (dry run)' if dry_run else ''}, confirm timer {timeout} s; journal in {journal.dir}"
    )
    started = time.perf_counter()
    deployer_args = (nr, plan, device_artifacts(plan, [d.name for d in devices]), journal, timeout)
    with progress_bar(err_console) as progress, _events_stream(events) as stream:
        bar = progress.add_task("deploying", total=len(devices))
        # One channel: the journal's device states and the engine's events reach the bar and the JSON stream.
        channel = Fanout([DeployProgress(progress, bar, show_diff), JsonEvents(stream) if stream else None])
        journal.listener = channel
        deployer = Deployer(
            *deployer_args,
            book.settle_timeout // 1_000_000,
            dry_run=dry_run,
            on_event=channel,
            confirm_mode=book.confirm,
        )
        outcome = deployer.run(waves)
    state: RunState = "dry_run" if dry_run else ("completed" if outcome.ok else "failed")
    if not outcome.ok and outcome.rolled_back:
        state = "rolled_back" if not outcome.changed else "failed"
    journal.finish(state, outcome.message)
    err_console.print(
        f"{outcome.message}: {len(outcome.changed)} changed, {len(outcome.rolled_back)} rolled back, "
        f"{len(outcome.failed)} failed in {time.perf_counter() - started:.1f} s (run {record.run_id})"
    )
    for host, err in sorted(outcome.failed.items()):
        err_console.print(f"  {host}: {err}")
    # A device that failed within its wave's failure budget never got its config: a partial rollout (exit 1).
    raise typer.Exit(ExitCode.OK if outcome.complete else ExitCode.FINDINGS)


@contextlib.contextmanager
def _events_stream(path: Path | None) -> Iterator[TextIO | None]:
    if path is None:
        yield None
    elif str(path) == "-":
        yield sys.stdout
    else:
        try:
            handle = path.open("w", encoding="utf-8")
        except OSError as exc:
            raise output_error(path, exc) from None
        with handle:
            yield handle


def register(app: typer.Typer) -> None:
    app.command("deploy")(deploy)
