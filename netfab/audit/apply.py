"""--remediate: the drifted devices go through the deploy pipeline with their intended config as the target.

Same guarantees as `netfab deploy`: staged waves from the staging playbook, a backup per device, a diff,
commit with the device-side confirm timer, post-checks, then confirm or roll the wave back; all journaled
under runs/<fabric>/<run-id>/.

Kernel-side drift on frr (a hash sysctl, an ECN threshold) is invisible to FRR and to the driver's host
script diff, which compares the script with the copy it last applied: if that copy is unchanged, the
deploy would see nothing to do. So for those devices the script is stamped with a comment naming this run
and what drifted; its diff is then non-empty, the driver runs it, and the journal shows why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from netfab.audit.model import AuditReport, DeviceAudit
from netfab.core.events import Listener
from netfab.design.plan import FabricPlan

if TYPE_CHECKING:
    from netfab.deploy.journal import RunState


@dataclass
class RemediationRun:
    run_id: str
    journal_dir: str
    outcome: Any  # netfab.deploy.engine.DeployOutcome

    def as_dict(self) -> dict[str, Any]:
        o = self.outcome
        return {
            "run_id": self.run_id,
            "journal": self.journal_dir,
            "ok": o.ok,
            "message": o.message,
            "changed": sorted(o.changed),
            "rolled_back": sorted(o.rolled_back),
            "failed": dict(sorted(o.failed.items())),
        }


def stamp_host_script(script: str, run_id: str, dev: DeviceAudit) -> str:
    """The same script with a comment that makes it differ from the last applied copy (see module doc)."""
    kernel = sorted({d.path for d in dev.drifts if not d.path.startswith(("bgp.", "frr."))})[:6]
    stamp = f"# netfab audit {run_id}: re-applied to correct kernel drift ({', '.join(kernel) or 'kernel state'})\n"
    head, sep, rest = script.partition("\n")
    return f"{head}\n{stamp}{rest}" if head.startswith("#!") and sep else stamp + script


def remediate(
    report: AuditReport,
    plan: FabricPlan,
    nr: Any,
    staging_playbook: Path,
    runs: Path,
    intent: list[str],
    secrets: tuple[str, ...],
    confirm_timeout_s: int | None = None,
    on_event: Listener | None = None,
    on_run: Callable[[str], None] | None = None,
    lab: str | None = None,
) -> RemediationRun:
    """on_run(run_id) is called once the run exists (the CLI names it in the fabric lock)."""
    from netfab.deploy.engine import Deployer
    from netfab.deploy.journal import DeviceRecord, Journal, RunRecord, new_run_id
    from netfab.deploy.playbook import load_playbook
    from netfab.deploy.target import device_artifacts
    from netfab.deploy.waves import plan_waves

    book = load_playbook(staging_playbook)
    drifted = [d for d in report.drifted]
    names = [d.device for d in drifted]
    waves = plan_waves(book, [plan.devices[n] for n in names])
    timeout = confirm_timeout_s if confirm_timeout_s is not None else book.confirm_timeout // 1_000_000
    record = RunRecord(
        run_id=new_run_id(),
        fabric=plan.name,
        intent=intent,
        playbook=str(staging_playbook),
        dry_run=False,
        waves=[{"name": w.name, "devices": list(w.devices)} for w in waves],
        devices={d: DeviceRecord(d, w.name) for w in waves for d in w.devices},
        verb="audit --remediate",
        lab=lab,
        confirm_timeout_s=timeout,
        confirm_mode=book.confirm,
    )
    journal = Journal(runs, record, secrets)
    if on_run is not None:
        on_run(record.run_id)
    artifacts = device_artifacts(plan, names)
    for dev in drifted:
        if dev.kernel_drift:
            key = f"{dev.device}.sh"
            art = artifacts[dev.device]
            if key in art.companions:
                art.companions[key] = stamp_host_script(art.companions[key], record.run_id, dev)
    deployer = Deployer(
        nr,
        plan,
        artifacts,
        journal,
        timeout,
        book.settle_timeout // 1_000_000,
        dry_run=False,
        on_event=on_event,
        confirm_mode=book.confirm,  # the staging playbook decides, as for netfab deploy
    )
    outcome = deployer.run(waves)
    state: RunState = (
        "completed" if outcome.ok else ("rolled_back" if outcome.rolled_back and not outcome.changed else "failed")
    )
    journal.finish(state, f"audit remediation: {outcome.message}")
    return RemediationRun(record.run_id, str(journal.dir), outcome)
