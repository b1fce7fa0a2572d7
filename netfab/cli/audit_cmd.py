"""`netfab audit`: running vs intended, structurally, with fleet-grouped drift and per-device remediation.

Exit codes: 0 in sync (or every drifted device remediated and re-audited clean with --remediate),
1 drift, 2 unreadable input or usage (a device that could not be read counts: the audit is incomplete),
3 internal error.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from netfab.cli.options import (
    DEFAULT_BUILD,
    DEFAULT_RUNS,
    BuildRoot,
    Intent,
    Inventory,
    LabTarget,
    Limit,
    NetworkSelect,
    OptionalWorkers,
    RunsRoot,
    Strict,
)
from netfab.cli.report_options import FormatOption, OutputOption
from netfab.core import gcfreeze
from netfab.core.exitcodes import ExitCode
from netfab.core.fs import OutputError
from netfab.core.validate import output_root
from netfab.report import ReportFormat

if TYPE_CHECKING:  # heavy modules load inside the verb (CLI start-up stays fast)
    from netfab.audit.model import AuditReport, Collected
    from netfab.audit.rules import AuditRules
    from netfab.deploy.lock import FabricLock
    from netfab.design.plan import FabricPlan


def _fail(message: str) -> typer.Exit:
    from netfab.cli.pipeline import err_console

    err_console.print(f"netfab audit: {message}", markup=False, highlight=False)
    return typer.Exit(ExitCode.USAGE)


def _default_playbook(name: str, given: Path | None) -> Path:
    from netfab.core.paths import playbooks_dir

    if given is not None:
        return given
    local = Path("playbooks") / name
    return local if local.is_file() else playbooks_dir() / name


def _progress() -> Any:
    """A transient bar on stderr; nothing when stderr is not a terminal (CI logs stay clean)."""
    from netfab.cli.pipeline import err_console
    from netfab.cli.progress import progress_bar

    return progress_bar(err_console, transient=True)


def audit(
    intent: Intent,
    from_dir: Path | None = typer.Option(
        None, "--from-dir", help="Audit saved running configs DIR/<device>.<ext> (and <device>.state.json for frr)."
    ),
    lab: LabTarget = None,
    inventory: Inventory = None,
    fmt: FormatOption = ReportFormat.TEXT,
    output: OutputOption = None,
    remediate: bool = typer.Option(False, "--remediate", help="Deploy the intended config to drifted devices."),
    playbook: Path | None = typer.Option(
        None, "--playbook", help="Audit runbook: unmanaged sections, JSON excludes (default playbooks/audit.yaml)."
    ),
    deploy_playbook: Path | None = typer.Option(
        None, "--deploy-playbook", help="Staging playbook for --remediate (default playbooks/deploy.yaml)."
    ),
    out_dir: Path | None = typer.Option(
        None, "--out", help="Audit dir for diffs and remediation (build/<fabric>.audit)."
    ),
    build_root: BuildRoot = DEFAULT_BUILD,
    runs: RunsRoot = DEFAULT_RUNS,
    limit: Limit = None,
    workers: OptionalWorkers = None,
    jobs: int | None = typer.Option(
        None, "--jobs", "-j", min=1, metavar="N", help="CPU processes comparing configs (default: all cores)."
    ),
    strict: Strict = False,
    network: NetworkSelect = None,
    confirm_timeout: int | None = typer.Option(
        None, "--confirm-timeout", min=1, help="Remediation confirm timer, seconds."
    ),
) -> None:
    """Compare what runs with what the intent renders: drift grouped across the fleet, the platform's own diff
    per device, remediation files; --remediate pushes the intended config to drifted devices (commit-confirmed)."""
    if from_dir is not None and (lab is not None or remediate):
        raise _fail("--from-dir audits saved files: it cannot be combined with --lab or --remediate")
    if from_dir is not None and not from_dir.is_dir():
        raise _fail(f"--from-dir {from_dir}: not a directory")
    if out_dir is not None:
        from netfab.render.writer import check_replaceable

        # Checked before any device is contacted: the audit dir replaces its target whole.
        output_root(out_dir.parent, "--out")
        check_replaceable(out_dir)
    from pydantic import ValidationError
    from yaml import YAMLError

    from netfab.audit.rules import AuditRules, load_audit_playbook

    book_path = _default_playbook("audit.yaml", playbook)
    try:
        book = load_audit_playbook(book_path)
        rules = AuditRules.from_playbook(book)
    except (OSError, YAMLError, ValidationError, ValueError) as exc:
        raise _fail(f"cannot use audit runbook {book_path}: {exc}") from None

    from netfab.cli.pipeline import err_console, load_plan

    # The plan lives until the process exits and holds no garbage: built with the cyclic GC off and then frozen
    # out of it, so no later collection (unpickling 10,000 device results, building the report) walks it again
    # (as the analyze verb does; 2 M allocations after a 10,155-switch load_plan: ~2.0 s CPU -> ~0.85 s).
    gc.disable()
    try:
        # Without BGP sessions, as `netfab build` digests the plan: a switch whose digest is the build's is read
        # from the build, and rendering derives the sessions for any other (netfab.render.device).
        plan = load_plan(intent, strict=strict, lab=lab is not None, network=network, bgp=False).plan
    finally:
        gcfreeze.for_good()
        gc.enable()
    names = [d for d in plan.devices if limit is None or fnmatchcase(d, limit)]
    if not names:
        raise _fail(f"--limit {limit!r} matches no device")
    from netfab.deploy.target import build_root_for

    where = _Where(lab, list(inventory or []), build_root_for(build_root, lab), workers or book.parallelism, jobs)
    # --remediate is a writer: it takes the fabric lock (deploy/lock.py) before it reads a device, so it never
    # audits a fabric another run is changing, and a deploy running now makes it exit 1 at once.
    from netfab.cli.fleet import lock_fabric

    lock = lock_fabric(runs, plan.name, "audit --remediate") if remediate else None
    try:
        started = time.perf_counter()
        report = _run(plan, names, rules, from_dir, where)
        report.seconds = time.perf_counter() - started  # collection included: what an operator waits for
        if lock is not None and report.drifted:
            # a runbook names its staging playbook relative to itself
            staging = deploy_playbook or (book_path.parent / book.deploy_playbook if book.deploy_playbook else None)
            playbook_path = _default_playbook("deploy.yaml", staging)
            _remediate(report, plan, rules, where, playbook_path, runs, intent, confirm_timeout, lock)
    finally:
        if lock is not None:
            lock.release()

    from netfab.audit.output import write_audit_dir
    from netfab.audit.report import context
    from netfab.audit.report.findings import to_findings
    from netfab.cli.report_options import emit_rendered, emit_report, rich_output
    from netfab.core.fs import verb_dir

    # Beside build/<fabric>/, not inside it: every build (and so every deploy) replaces that tree wholesale.
    written = write_audit_dir(report, out_dir or verb_dir(where.build_root, plan.name, "audit"))
    for name in written.refused:
        err_console.print(f"netfab audit: {name!r} cannot be a directory name; its files were not written")
    rendered = written.reports.get(fmt.value)
    if rendered is not None and not rich_output(fmt, output):
        emit_rendered(rendered, output)  # the audit dir's copy: the same render of the same report
    else:
        emit_report(fmt, to_findings(report, report.locations), context(report, fmt.value), output)
    raise typer.Exit(_exit_code(report))


def _exit_code(report: AuditReport) -> ExitCode:
    if report.unreadable:
        return ExitCode.USAGE
    outcome = report.remediation_outcome
    if report.drifted and not (outcome and outcome.get("ok") and not outcome.get("still_drifted")):
        return ExitCode.FINDINGS
    return ExitCode.OK


@dataclass(frozen=True)
class _Where:
    """How to reach the devices (online) and where the build lives."""

    lab: str | None
    inventory: list[Path]
    build_root: Path
    parallelism: int
    """Devices contacted at once (--workers, else the runbook's parallelism)."""
    jobs: int | None
    """CPU processes comparing configs (--jobs; None: all cores)."""


def _run(plan: FabricPlan, names: list[str], rules: AuditRules, from_dir: Path | None, where: _Where) -> AuditReport:
    from netfab.audit.engine import Source, run_audit
    from netfab.audit.facts import primary_suffix
    from netfab.audit.intended import BuiltConfigs
    from netfab.deploy.credentials import Credentials

    if from_dir is not None:
        source = Source(saved_dir=from_dir, secrets=Credentials.from_env().secrets())
        description = f"saved configs in {from_dir}"
    else:
        collected, secrets = _collect(plan, names, where)
        source = Source(collected=collected, secrets=secrets)
        description = f"lab {where.lab} over SSH" if where.lab else "the devices over SSH"
    with _progress() as progress:
        bar = progress.add_task("comparing", total=len(names))
        # After collection: an online audit has just built that tree (_nornir), so its configs are current.
        built = BuiltConfigs.at(where.build_root, plan.name)
        report = run_audit(
            plan, names, source, rules, description, where.jobs, lambda n: progress.advance(bar, n), built
        )
    for dev in report.devices:
        if from_dir is not None and dev.origin:
            report.locations[dev.device] = dev.origin
        else:
            suffix = primary_suffix(plan.devices[dev.device].platform)
            report.locations[dev.device] = str(where.build_root / plan.name / "configs" / f"{dev.device}{suffix}")
    return report


def _nornir(plan: FabricPlan, where: _Where) -> tuple[Any, tuple[str, ...]]:
    from netfab.deploy.inventory import InventoryError, build_nornir, load_inventory_data
    from netfab.deploy.target import resolve_target
    from netfab.render.build import build as run_build

    run_build(plan, where.build_root)  # an inventory that matches this intent, never a stale one
    target = resolve_target(plan, where.build_root, where.lab, where.inventory)
    try:
        hosts, groups = load_inventory_data(target.generated_inventory, target.overrides)
    except InventoryError as exc:
        raise _fail(str(exc)) from None
    nr = build_nornir(hosts, groups, target.credentials, workers=where.parallelism)
    return nr, target.credentials.secrets()


def _collect(plan: FabricPlan, names: list[str], where: _Where) -> tuple[dict[str, Collected], tuple[str, ...]]:
    from netfab.audit.collect import collect_online

    nr, secrets = _nornir(plan, where)
    with _progress() as progress:
        bar = progress.add_task("collecting", total=len(names))
        collected = collect_online(nr, plan, names, secrets, on_device=lambda _: progress.advance(bar))
    return collected, secrets


def _remediate(
    report: AuditReport,
    plan: FabricPlan,
    rules: AuditRules,
    where: _Where,
    staging: Path,
    runs: Path,
    intent: list[Path],
    confirm_timeout: int | None,
    lock: FabricLock,
) -> None:
    from netfab.audit.apply import remediate
    from netfab.audit.collect import collect_online
    from netfab.audit.engine import Source, audit_devices
    from netfab.cli.fleet import refuse_if_interrupted
    from netfab.cli.pipeline import err_console
    from netfab.cli.progress import print_event
    from netfab.core.events import DeployEvent, EventKind

    # the same refusal as `netfab deploy`: devices of a killed run may still be reverting by their timers
    refuse_if_interrupted(runs, plan.name, "audit --remediate")

    drifted = [d.device for d in report.drifted]
    nr, secrets = _nornir(plan, where)
    err_console.print(f"remediating {len(drifted)} drifted devices through the staged deploy ({staging})")

    def on_event(event: DeployEvent) -> None:
        if event.kind not in (EventKind.DIFF, EventKind.TASK_DONE):
            print_event(err_console, event)

    try:
        run = remediate(
            report,
            plan,
            nr,
            staging,
            runs,
            [str(p) for p in intent],
            secrets,
            confirm_timeout,
            on_event,
            on_run=lock.set_run,
            lab=where.lab,
        )
    except OutputError:
        raise  # a full or read-only journal disk: exit 2 naming that path, not the playbook's fault
    except (OSError, ValueError) as exc:  # an unreadable staging playbook is a usage error
        raise _fail(f"cannot remediate with {staging}: {exc}") from None
    outcome = run.as_dict()
    # Prove it: collect and audit the remediated devices again.
    nr, secrets = _nornir(plan, where)
    again = collect_online(nr, plan, drifted, secrets)
    rechecked = audit_devices([plan.devices[n] for n in drifted], Source(collected=again), rules, where.jobs)
    outcome["still_drifted"] = sorted(d.device for d in rechecked if d.status != "in_sync")
    if outcome["still_drifted"]:
        outcome["message"] += f"; still drifted after remediation: {', '.join(outcome['still_drifted'])}"
    else:
        outcome["message"] += f"; re-audit: all {len(drifted)} remediated devices in sync"
    report.remediation_outcome = outcome


def register(app: typer.Typer) -> None:
    app.command("audit")(audit)
