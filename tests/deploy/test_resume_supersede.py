"""An interrupted run blocks the fabric until a resumed run actually answers for it: `--resume` supersedes it
only once the new run's journal exists and the run changes devices. A resume that stopped before that (a
--limit matching nothing, an inventory error) or that is only a dry run left the fabric unblocked while the
interrupted run's devices still had live confirm timers (found by a fault review)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer

from netfab.cli import deploy_cmd
from netfab.cli.pipeline import load_plan
from netfab.deploy.credentials import Credentials
from netfab.deploy.journal import DeviceRecord, Journal, RunRecord, interrupted_runs
from netfab.deploy.playbook import load_playbook

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "intent" / "lab.yaml"


def _interrupted(runs: Path, fabric: str) -> Journal:
    """A run killed after committing leaf1 (its process gone, its device timer still running)."""
    record = RunRecord(
        run_id="run0", fabric=fabric, intent=[str(LAB)], playbook="deploy.yaml", dry_run=False,
        waves=[{"name": "all", "devices": ["leaf1"]}], devices={"leaf1": DeviceRecord("leaf1", "all")},
    )  # fmt: skip
    journal = Journal(runs, record, [])
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    journal.record.pid = int(dead.stdout)
    journal.device_state("leaf1", "committed")
    journal.save()
    return journal


@pytest.mark.parametrize("how", ["dry-run", "limit-matches-nothing", "inventory-error", "rollout"])
def test_a_resume_supersedes_the_interrupted_run_only_when_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    loaded = load_plan([LAB], bgp=False)
    runs = tmp_path / "runs"
    _interrupted(runs, loaded.plan.name)
    rolled_out: list[str] = []
    monkeypatch.setattr("netfab.render.build.build", lambda *a, **k: None)
    target = SimpleNamespace(credentials=Credentials(username="netops", password="pw-resume"))
    monkeypatch.setattr("netfab.deploy.target.resolve_target", lambda *a, **k: target)

    def nornir_for(*a: Any, **k: Any) -> object:
        if how == "inventory-error":
            raise typer.Exit(2)
        return object()

    monkeypatch.setattr(deploy_cmd, "nornir_for", nornir_for)
    monkeypatch.setattr(deploy_cmd, "_rollout", lambda journal, *a, **k: rolled_out.append(journal.record.run_id))
    lock = SimpleNamespace(set_run=lambda run_id: None)
    args: dict[str, Any] = dict(
        loaded=loaded, book=load_playbook(ROOT / "playbooks" / "deploy.yaml"), book_path=Path("deploy.yaml"),
        lock=lock, intent=[LAB], dry_run=how == "dry-run", limit="nothing*" if how == "limit-matches-nothing" else None,
        confirm_timeout=None, lab=None, inventory=None, build_root=tmp_path / "build", runs=runs, resume=True,
        show_diff=False, events=None,
    )  # fmt: skip
    try:
        deploy_cmd._deploy_locked(**args)
    except typer.Exit:
        assert how in ("limit-matches-nothing", "inventory-error")
    still = [j.record.run_id for j in interrupted_runs(runs, loaded.plan.name)]
    if how == "rollout":
        assert len(rolled_out) == 1 and still == []
    else:
        assert still == ["run0"], how  # still blocking: nothing answered for its devices yet
