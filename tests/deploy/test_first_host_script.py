"""A device that gets its first netfab host script has no earlier one for a revert to re-run: its device timer
or a rollback puts FRR back and the kernel keeps what the new script set. A fault review found the refusal
after a killed deploy saying "its device timer reverts it" of such a device, which then sat half old, half new.
The deploy now says so before the commit, and the journal keeps it for the refusal."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from netfab.deploy.engine import Deployer, DeviceArtifacts
from netfab.deploy.journal import DeviceRecord, Journal, RunRecord, load_run
from netfab.deploy.recovery import refusal


def _journal(root: Path) -> Journal:
    record = RunRecord(
        run_id="run0", fabric="fab", intent=["lab.yaml"], playbook="deploy.yaml", dry_run=False,
        waves=[{"name": "all", "devices": ["leaf1", "leaf2"]}],
        devices={n: DeviceRecord(n, "all") for n in ("leaf1", "leaf2")}, confirm_timeout_s=60,
    )  # fmt: skip
    return Journal(root, record, [])


def test_the_backup_marks_a_first_host_script_and_says_so(tmp_path: Path) -> None:
    journal = _journal(tmp_path)
    notes: list[tuple[str, str]] = []
    deployer = SimpleNamespace(journal=journal, note=lambda device, message: notes.append((device, message)))
    art = DeviceArtifacts(config="hostname leaf1\n", companions={"leaf1.sh": "#!/bin/sh\n"})
    first = SimpleNamespace(get_applied_companions=dict, get_kernel_state=lambda: {"sysctl": {}, "links": {}})
    again = SimpleNamespace(get_applied_companions=lambda: {"host.sh": "#!/bin/sh\n"}, get_kernel_state=dict)
    Deployer._back_up_companions(deployer, "leaf1", first, art)  # type: ignore[arg-type]
    Deployer._back_up_companions(deployer, "leaf2", again, art)  # type: ignore[arg-type]
    assert journal.record.devices["leaf1"].first_host_script
    assert not journal.record.devices["leaf2"].first_host_script
    assert [d for d, _ in notes] == ["leaf1"] and "kernel keeps" in notes[0][1]


def test_the_refusal_after_a_kill_says_the_kernel_stays_new(tmp_path: Path) -> None:
    journal = _journal(tmp_path)
    journal.record.devices["leaf1"].first_host_script = True
    for name in ("leaf1", "leaf2"):
        journal.device_state(name, "committed")
    journal.record.pid = 2**22 + 1  # no such process: the run reads as interrupted
    journal.save()
    text = refusal(load_run(tmp_path, "fab", "run0"))  # the flag survives the journal's round trip
    first = next(line for line in text.splitlines() if "leaf1" in line)
    other = next(line for line in text.splitlines() if "leaf2" in line)
    assert "reverts it" in first and "kernel keeps what it set" in first, text
    assert "kernel keeps" not in other, text
