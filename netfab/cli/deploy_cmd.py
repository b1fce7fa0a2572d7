"""`netfab deploy`: staged, commit-confirmed rollout with a run journal."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import typer

from netfab.cli.fleet import nornir_for
from netfab.cli.options import (
    DEFAULT_BUILD,
    DEFAULT_RUNS,
    BuildRoot,
    Intent,
    Inventory,
    LabTarget,
    Limit,
    RunsRoot,
    Strict,
)
from netfab.core.exitcodes import ExitCode
from netfab.core.fs import output_error

if TYPE_CHECKING:
    from netfab.deploy.journal import RunState


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
    from netfab.deploy.engine import Deployer
    from netfab.deploy.journal import DeviceRecord, Journal, RunRecord, interrupted_runs, new_run_id
    from netfab.deploy.playbook import load_playbook
    from netfab.deploy.target import build_root_for, device_artifacts, resolve_target
    from netfab.deploy.waves import plan_waves
    from netfab.render.build import build as run_build

    if events is not None and str(events) != "-":
        # Checked before anything is contacted or journaled: an unwritable FILE is exit 2 with nothing begun.
        try:
            events.open("a", encoding="utf-8").close()
        except OSError as exc:
            raise output_error(events, exc) from None
    show_diff = show_diff and str(events) != "-"  # stdout carries the JSON lines then, and nothing else
    loaded = load_plan(intent, strict=strict, lab=lab is not None)
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
    stale = interrupted_runs(runs, plan.name)
    if stale and not resume:
        for j in stale:
            pending = [d.name for d in j.record.devices.values() if d.state == "committed"]
            err_console.print(
                f"run {j.record.run_id} was interrupted (pid {j.record.pid} is gone). "
                f"Devices committed but never confirmed: {', '.join(pending) or 'none'}; devices with a confirm "
                "timer revert by themselves, devices committed without one (playbook confirm: client) keep the "
                "change. Re-run with --resume to re-diff and continue, "
                f"or `netfab rollback {j.record.run_id}` to undo it."
            )
        raise typer.Exit(ExitCode.FINDINGS)
    for j in stale:
        j.finish("interrupted", "superseded by a resumed run")
    run_build(plan, build_root)  # the inventory and configs this run deploys, on disk for review
    target = resolve_target(plan, build_root, lab, inventory or [])
    devices = [d for d in plan.devices.values() if limit is None or fnmatchcase(d.name, limit)]
    if not devices:
        err_console.print(f"netfab deploy: --limit {limit!r} matches no device")
        raise typer.Exit(ExitCode.USAGE)
    waves = plan_waves(book, devices)
    record = RunRecord(
        run_id=new_run_id(),
        fabric=plan.name,
        intent=[str(p) for p in intent],
        playbook=str(book_path),
        dry_run=dry_run,
        waves=[{"name": w.name, "devices": list(w.devices)} for w in waves],
        devices={d: DeviceRecord(d, w.name) for w in waves for d in w.devices},
    )
    journal = Journal(runs, record, target.credentials.secrets())
    timeout = confirm_timeout if confirm_timeout is not None else book.confirm_timeout // 1_000_000
    nr = nornir_for(plan, target, workers=max(w.parallelism for w in waves))
    err_console.print(
        f"run {record.run_id}: {len(devices)} devices in {len(waves)} waves"
        f"{' (dry run)' if dry_run else ''}, confirm timer {timeout} s; journal in {journal.dir}"
    )

    from netfab.cli.progress import DeployProgress, progress_bar
    from netfab.core.events import Fanout, JsonEvents

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
