"""The staged, commit-confirmed rollout.

Per wave: connect -> back up the running config -> load the candidate and diff -> commit with the
device-side confirm timer -> post-checks -> confirm, or roll the wave back. The same connection carries
a device from commit to confirm (closing a NAPALM EOS session aborts a pending commit: INTEGRATION.md
finding 3). A dying deploy leaves each device with a running timer, so it reverts by itself: old or new,
never half. Every step a device is in the middle of is journaled before it starts (committing, confirming,
rolling_back), so an interrupted run's refusal message can say where each device stood (recovery.py).

The backup is everything a rollback must put back: the running config (before.conf), the companion files
the driver last applied (frr: before.host.sh, the host script that set ECN, MTU and hash), and, where the
driver can read it, the kernel state those produced (before.kernel.json), which `netfab rollback` compares
against after restoring.

Drivers without a device-side timer (NAPALM nxos/nxos_ssh raise NotImplementedError for revert_in) are
refused unless the caller opts into confirm_mode="client": netfab then commits plainly and rolls back
itself when the post-checks fail. The risk is stated, not hidden: a deploy that dies between commit and
check leaves such a device with the change applied.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from nornir.core import Nornir
from nornir.core.task import MultiResult, Result, Task
from nornir.plugins.runners import ThreadedRunner

from netfab.core import gcfreeze
from netfab.core.events import DeployEvent, EventKind, HostEvents, Listener
from netfab.core.outcome import Err, host_outcome
from netfab.deploy.connection import CONNECTION_NAME
from netfab.deploy.drivers.protocol import StagesCompanions
from netfab.deploy.journal import Journal
from netfab.deploy.runner import HostPool
from netfab.deploy.waves import Wave
from netfab.design.plan import FabricPlan
from netfab.verify.checks import CheckResult, run_checks
from netfab.verify.results import failed

if TYPE_CHECKING:
    from netfab.report import ReportContext

ConfirmMode = Literal["device", "client"]
"""device: every commit must carry the device's own confirm timer. client: drivers without one are allowed;
netfab confirms by not rolling back (a dead deploy leaves their change applied)."""


@dataclass
class DeviceArtifacts:
    config: str
    """The platform's primary config (frr.conf, startup.yaml, config_db.json, CLI text)."""
    companions: dict[str, str] = field(default_factory=dict)
    """Other files the platform applies next to it (frr: the Linux script; sonic: its frr.conf)."""


@dataclass
class DeployOutcome:
    ok: bool
    message: str
    changed: list[str] = field(default_factory=list)
    rolled_back: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    checks: list[CheckResult] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every device got its config: the rollout went through and nothing failed, not even within a wave's
        failure budget (a budget lets the rollout go on; it does not make a failed device a success)."""
        return self.ok and not self.failed


def _conn(task: Task) -> Any:
    return task.host.get_connection(CONNECTION_NAME, task.nornir.config)


def _has_pending_commit(conn: Any) -> bool:
    try:
        return bool(conn.has_pending_commit())
    except NotImplementedError:
        # NAPALM nxos/nxos_ssh have no commit-confirm at all, so nothing can be pending on them
        # (fix: this used to fail every NX-OS device before its backup).
        return False


class NoConfirmTimer(RuntimeError):
    """The driver cannot commit with a device-side revert timer and client confirm mode is not allowed."""


class Deployer:
    def __init__(
        self,
        nr: Nornir,
        plan: FabricPlan,
        artifacts: dict[str, DeviceArtifacts],
        journal: Journal,
        confirm_timeout_s: int,
        settle_timeout_s: int,
        dry_run: bool = False,
        on_event: Listener | None = None,
        confirm_mode: ConfirmMode = "device",
    ) -> None:
        self.nr = nr
        self.plan = plan
        self.artifacts = artifacts
        self.journal = journal
        self.confirm_timeout_s = confirm_timeout_s
        self.settle_timeout_s = settle_timeout_s
        self.dry_run = dry_run
        self._on_event = on_event
        self.confirm_mode = confirm_mode
        self.diffs: dict[str, str] = {}
        self.before: dict[str, str] = {}
        self._wave_rolled_back = 0
        self._checks_context: ReportContext | None = None
        self.client_confirmed: set[str] = set()
        """Devices committed without a device timer (confirm_mode="client"): nothing to confirm on them."""

    def emit(self, event: DeployEvent) -> None:
        """Report an event. Reporting runs inside device tasks, so a reporting failure (a closed stdout
        pipe, say) must never turn into a failed device or an aborted rollback."""
        if self._on_event is None:
            return
        with contextlib.suppress(Exception):
            # Redacted here too: messages carry device errors, which may echo config lines or the password.
            self._on_event(dataclasses.replace(event, message=self.journal.redact(event.message)))

    def _report_context(self) -> ReportContext:
        # One per run: its default root is os.getcwd(), which cost up to ~0.7 ms per device while the journal
        # writers renamed files (getcwd retries under the kernel's rename lock).
        if self._checks_context is None:
            from netfab import __version__
            from netfab.report import ReportContext
            from netfab.verify.checks import RULES

            self._checks_context = ReportContext(tool_version=__version__, verb="verify", rules=RULES)
        return self._checks_context

    def note(self, device: str, message: str) -> None:
        self.emit(DeployEvent(EventKind.NOTE, device, message))

    # --- per-device tasks (run in Nornir's threads) --------------------------------------------------
    def _prepare(self, task: Task) -> Result:
        name = task.host.name
        conn = _conn(task)
        if _has_pending_commit(conn):
            if self.dry_run:
                # Fix: a dry run changes nothing, not even this; the diff is against what runs right now.
                self.note(name, "has a pending commit (an interrupted run?): left alone in a dry run")
            else:
                # Left over from an interrupted run: put the device back to its pre-commit state first.
                conn.rollback()
                self.note(name, "rolled back a pending commit left by an interrupted run")
        before = conn.get_config(retrieve="running")["running"]
        self.before[name] = before
        self.journal.device_file(name, "before.conf", before)
        art = self.artifacts[name]
        self._back_up_companions(name, conn, art)
        self.journal.device_state(name, "backed_up")
        self.journal.device_file(name, "intended.conf", art.config)
        conn.load_replace_candidate(config=art.config)
        if art.companions and isinstance(conn, StagesCompanions):
            conn.load_companions(art.companions)
        diff = conn.compare_config()
        self.diffs[name] = diff
        self.journal.device_file(name, "diff.txt", diff)
        if diff.strip() and self._on_event is not None:
            # Shown before anything is committed, redacted exactly as the journal stores it (redacted in
            # memory: reading diff.txt back cost a file read per device).
            self.emit(DeployEvent(EventKind.DIFF, name, self.journal.redact(diff)))
        self.journal.record.devices[name].diff_lines = len(diff.splitlines())
        if self.dry_run or not diff.strip():
            conn.discard_config()
            self.journal.device_state(name, "in_sync" if not diff.strip() else "backed_up")
        return Result(host=task.host, result=diff, changed=bool(diff.strip()))

    def _back_up_companions(self, name: str, conn: Any, art: DeviceArtifacts) -> None:
        applied = getattr(conn, "get_applied_companions", None)
        if not art.companions or applied is None:
            return
        saved = dict(applied())
        for key, text in saved.items():
            self.journal.device_file(name, f"before.{key}", text)
        self.journal.record.devices[name].companions = sorted(saved)
        if not saved:
            # Said before the commit, and kept in the journal for the refusal after a kill: a revert of this
            # commit cannot undo its kernel side.
            self.journal.record.devices[name].first_host_script = True
            self.note(
                name,
                "first netfab host script here: a revert (its device timer, a rollback) puts FRR back, but the "
                "kernel keeps what this script sets (MTU, ECN, ECMP hash)",
            )
        kernel = getattr(conn, "get_kernel_state", None)
        if kernel is not None:
            self.journal.device_file(name, "before.kernel.json", json.dumps(comparable_kernel(kernel()), indent=1))

    def _commit(self, task: Task) -> Result:
        name = task.host.name
        conn = _conn(task)
        # The backup a rollback would push must survive a host crash before anything changes (after the
        # wave's sync_backups() this returns at once; it guards the order per device, whatever the stages).
        self.journal.durable_backup(name)
        self.journal.device_state(name, "committing")
        try:
            conn.commit_config(revert_in=self.confirm_timeout_s)
        except NotImplementedError as exc:
            # NAPALM refuses revert_in before touching the device on drivers without a timer (nxos,
            # nxos_ssh): nothing is committed yet, so refusing here is safe.
            if self.confirm_mode != "client":
                raise NoConfirmTimer(
                    f"{type(conn).__name__} has no device-side confirm timer ({exc}); refusing a commit that "
                    "nothing would revert. Allow confirm mode 'client' to let netfab roll back on failed checks "
                    "itself (a deploy that dies after the commit then leaves the change applied)."
                ) from None
            conn.commit_config()
            self.client_confirmed.add(name)
            self.note(name, "committed WITHOUT a device timer (confirm mode client): a dead deploy keeps it")
        self.journal.device_state(name, "committed")
        return Result(host=task.host, changed=True)

    def _confirm(self, task: Task) -> Result:
        name = task.host.name
        conn = _conn(task)
        self.journal.device_state(name, "confirming")
        if name not in self.client_confirmed:  # a plain commit is already final; nxos has no confirm_commit
            conn.confirm_commit()
        after = conn.get_config(retrieve="running")["running"]
        self.journal.device_file(name, "after.conf", after)
        self.journal.device_state(name, "confirmed")
        return Result(host=task.host, changed=True)

    def _rollback(self, task: Task) -> Result:
        name = task.host.name
        conn = _conn(task)
        self.journal.device_state(name, "rolling_back")
        conn.rollback()
        # Prove it: the backup, loaded as a candidate, must diff empty against what is running now.
        conn.load_replace_candidate(config=self.before[name])
        residue = conn.compare_config()
        conn.discard_config()
        if residue.strip():
            self.journal.device_state(name, "rollback_failed", f"running config differs from backup:\n{residue}")
            raise RuntimeError(f"{name}: rollback left a difference from the backup")
        self.journal.device_state(name, "rolled_back")
        return Result(host=task.host, changed=True)

    def _discard(self, task: Task) -> Result:
        _conn(task).discard_config()
        return Result(host=task.host)

    def _check(self, task: Task) -> Result:
        dev = self.plan.devices[task.host.name]
        results = run_checks(dev, _conn(task), self.plan)
        return Result(host=task.host, result=results, failed=bool(failed(results)))

    # --- orchestration -------------------------------------------------------------------------------
    def _run(self, hosts: list[str], fn: Callable[[Task], Result], workers: int) -> dict[str, MultiResult]:
        if not hosts:
            return {}
        names = set(hosts)

        def guarded(task: Task) -> Result:
            # A raised exception makes Nornir log its traceback (device output included, unredacted) to
            # stderr via Python's last-resort handler; a failed Result carries the same error silently.
            try:
                return fn(task)
            except Exception as exc:
                return Result(host=task.host, failed=True, exception=exc)

        sub = self.nr.filter(filter_func=lambda h: h.name in names).with_runner(HostPool(num_workers=workers))
        # emit() drops every event without a listener: then no processor builds them (one per host and task).
        sub = sub.with_processors([HostEvents(self.emit)] if self._on_event is not None else [])
        # Nornir remembers failed hosts and silently skips them on later runs (on_failed=False); a post-check
        # poll that failed once must still be re-polled, and a failed device must still be rolled back.
        self.nr.data.reset_failed_hosts()
        agg = sub.run(task=guarded, name=fn.__name__.strip("_"), raise_on_error=False, on_good=True, on_failed=True)
        # Device states are journaled per device as they change; run.json catches up once per stage
        # (rewriting it per state change was quadratic in the wave size).
        self.journal.save()
        missing = names - set(agg)
        if missing:
            raise RuntimeError(f"internal: task {fn.__name__} did not run on {', '.join(sorted(missing))}")
        return dict(agg.items())

    def _errors(self, results: dict[str, MultiResult]) -> dict[str, str]:
        out = {}
        for host, multi in results.items():
            outcome = host_outcome(multi)
            if isinstance(outcome, Err):
                out[host] = self.journal.redact(outcome.error)  # these reach the terminal and the outcome
        return out

    def _settle(self, hosts: list[str], workers: int) -> tuple[dict[str, list[CheckResult]], dict[str, str]]:
        deadline = time.monotonic() + self.settle_timeout_s
        while True:
            results = self._run(hosts, self._check, workers)
            per_host = {h: _check_results(m) for h, m in results.items()}
            errors = {h: e for h, e in self._errors(results).items() if not per_host.get(h)}
            bad = {h for h, r in per_host.items() if failed(r)} | set(errors)
            if not bad or time.monotonic() >= deadline:
                return per_host, errors
            time.sleep(1.0)

    def run_wave(self, wave: Wave, outcome: DeployOutcome) -> bool:
        self.emit(
            DeployEvent(EventKind.WAVE_STARTED, wave.name, f"{len(wave.devices)} devices, {wave.parallelism} at a time")
        )
        ok = self._run_wave(wave, outcome)
        failed_here = sorted(h for h in wave.devices if h in outcome.failed)
        summary = f"{len(wave.devices) - len(failed_here)} of {len(wave.devices)} devices ok"
        self.emit(
            DeployEvent(
                EventKind.WAVE_FINISHED,
                wave.name,
                summary + (f"; failed: {', '.join(failed_here)}" if failed_here else ""),
                ok=ok,
            )
        )
        return ok

    def _run_wave(self, wave: Wave, outcome: DeployOutcome) -> bool:
        self._wave_rolled_back = 0
        prepared = self._run(list(wave.devices), self._prepare, wave.parallelism)
        failures = self._errors(prepared)
        for host, err in failures.items():
            self.journal.device_state(host, "failed", err)
            self.note(host, f"failed before any change: {err}")
        changing = [h for h in wave.devices if h not in failures and self.diffs.get(h, "").strip()]
        if self.dry_run:
            outcome.failed.update(failures)
            return not failures
        # One sync makes the whole wave's backups durable before its first commit (a group commit).
        self.journal.sync_backups()
        if len(failures) > wave.failure_budget:
            # Nothing was committed in this wave yet. Discard the loaded candidates now: closing an EOS
            # session aborts it, but a Junos candidate would stay in the shared candidate database.
            self._run(changing, self._discard, wave.parallelism)
            outcome.failed.update(failures)
            return False
        committed_results = self._run(changing, self._commit, wave.parallelism)
        commit_errors = self._errors(committed_results)
        committed = [h for h in changing if h not in commit_errors]
        for host, err in commit_errors.items():
            self.journal.device_state(host, "failed", err)
            self.note(host, f"commit failed: {err}")
        # Best effort, errors ignored: leave no half-used candidate (or Junos config lock) behind.
        self._run(list(commit_errors), self._discard, wave.parallelism)
        failures.update(commit_errors)
        checks, check_errors = self._settle(committed, wave.parallelism)
        for host, results in checks.items():
            # Check messages quote device state (a neighbor's config line, say): redacted before they reach
            # the outcome the CLI prints (fix: the summary used to print them raw).
            results = [dataclasses.replace(r, message=self.journal.redact(r.message)) for r in results]
            outcome.checks.extend(results)
            self.journal.device_file(host, "checks.json", _checks_json(results, self._report_context()))
            if failed(results):
                bad = "; ".join(r.message for r in failed(results)[:3])
                failures[host] = f"post-checks failed: {bad}"
                self.emit(DeployEvent(EventKind.CHECK_FAILED, host, failures[host]))
        failures.update(check_errors)
        to_roll_back = [h for h in committed if h in failures]
        if len(failures) > wave.failure_budget:
            to_roll_back = list(committed)
        if to_roll_back:
            rb_errors = self._errors(self._run(to_roll_back, self._rollback, wave.parallelism))
            for host, err in rb_errors.items():
                failures[host] = f"ROLLBACK FAILED: {err}"
            undone = [h for h in to_roll_back if h not in rb_errors]
            outcome.rolled_back.extend(undone)
            self._wave_rolled_back = len(undone)
            # Say what happened, not what was attempted (a failed rollback used to read "rolled back N").
            failed_note = f"; rollback FAILED on {', '.join(sorted(rb_errors))}" if rb_errors else ""
            self.emit(
                DeployEvent(
                    EventKind.ROLLBACK,
                    wave.name,
                    f"rolled back {len(undone)} of {len(to_roll_back)} devices{failed_note}",
                )
            )
        to_confirm = [h for h in committed if h not in to_roll_back]
        confirm_errors = self._errors(self._run(to_confirm, self._confirm, wave.parallelism))
        failures.update(confirm_errors)
        outcome.changed.extend(h for h in to_confirm if h not in confirm_errors)
        outcome.failed.update(failures)
        return len(failures) <= wave.failure_budget and not confirm_errors

    def run(self, waves: list[Wave]) -> DeployOutcome:
        outcome = DeployOutcome(ok=True, message="")
        # Everything alive now (the inventory, the plan, the artifacts) lives through the whole run: frozen, the
        # collector's full passes during the waves skip it. Unfrozen, each pass scanned it all again (~240,000
        # objects at 10,000 devices) with the GIL held and every device thread stopped: 14 passes, 3.1 s of a
        # 58 s wave. Freezing changes no object's life: refcounting frees as before; only a cycle among these
        # objects that became garbage waits for the first pass after run() (a caller's freeze is its own).
        with gcfreeze.block():
            try:
                for wave in waves:
                    if not self.run_wave(wave, outcome):
                        outcome.ok = False
                        outcome.message = (
                            f"dry run: wave {wave.name} could not be diffed"
                            if self.dry_run
                            else f"wave {wave.name} failed: rollout stopped, "
                            + (
                                f"{self._wave_rolled_back} of its devices rolled back"
                                if self._wave_rolled_back
                                else "nothing in that wave was left committed"
                            )
                        )
                        break
                else:
                    if self.dry_run:
                        outcome.message = "dry run: nothing changed"
                    elif outcome.failed:
                        # Within every wave's failure budget, yet some devices never got their config: partial.
                        outcome.message = (
                            f"partial: waves confirmed within their failure budgets, but {len(outcome.failed)} "
                            "devices failed"
                        )
                    elif outcome.changed:
                        outcome.message = "all waves confirmed"
                    else:
                        outcome.message = "in sync: every device already runs its intended config"
            finally:
                closer = self.nr
                if isinstance(closer.runner, ThreadedRunner):  # the same parallelism, without a Future per host
                    closer = closer.with_runner(HostPool(num_workers=closer.runner.num_workers))
                closer.close_connections(on_good=True, on_failed=True)
                self.journal.flush()  # every device file on disk when run() returns
        return outcome


def _check_results(multi: MultiResult) -> list[CheckResult]:
    """The post-check task's results, also when it failed (failed checks are a failed task with results)."""
    value = host_outcome(multi).value
    return value if isinstance(value, list) else []


def comparable_kernel(state: dict[str, Any]) -> dict[str, Any]:
    """The part of a driver's kernel state a host script sets (the driver's own env is not device state)."""
    return {k: v for k, v in state.items() if k != "env"}


def _checks_json(results: list[CheckResult], context: ReportContext) -> str:
    from netfab.report import render

    # The same JSON envelope `netfab verify --format json` writes, so one parser reads both.
    return render("json", results, context)
