"""A device's backup is durable before that device is changed (issue 11), with the group commit.

The journal writes backups without fsync and makes them durable with one filesystem sync per batch. These
tests record, for every sync, which backups (with their checksums) were complete on disk when it ran, and
for every commit whether a sync that covered the device's backup had already returned. Removing the sync
before the commit stage, or the per-device wait in the commit task, fails them.
"""

from __future__ import annotations

import enum
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from netfab.core.events import EventKind
from netfab.deploy import journal as journal_mod
from netfab.deploy.journal import DeviceRecord, Journal, JournalCorrupt, JournalError, RunRecord, checksum, load_run
from tests.deploy.test_engine_flow import DEVICES, FakeDriver, Rig, rig, two_waves  # noqa: F401

_ORDER = threading.Lock()


def _backed_up(run_dir: Path) -> set[str]:
    """Devices whose before.conf and its checksum line are both complete on disk now."""
    sums = run_dir / "devices.sha256"
    lines = sums.read_text().splitlines() if sums.exists() else []
    logged = {line.rsplit(" ", 1)[-1].split("/")[0] for line in lines if line.endswith("/before.conf")}
    return {d for d in logged if (run_dir / "devices" / d / "before.conf").is_file()}


@pytest.fixture
def syncs(monkeypatch: pytest.MonkeyPatch) -> list[set[str]]:
    """Each sync_filesystem call, as the set of devices whose backup it covered (stands in for syncfs)."""
    done: list[set[str]] = []

    def fake_sync(directory: Path) -> None:
        covered = _backed_up(directory)
        time.sleep(0.01)  # a real flush takes time: devices arriving meanwhile must wait for the next one
        with _ORDER:
            done.append(covered)

    monkeypatch.setattr(journal_mod, "sync_filesystem", fake_sync)
    monkeypatch.setattr(journal_mod, "SYNC_EVERY_S", 1e9)  # no background syncs unless a test asks
    return done


def test_every_commit_comes_after_a_sync_that_covered_its_backup(
    rig: Rig,  # noqa: F811
    syncs: list[set[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    durable_at_commit: dict[str, bool] = {}
    real_commit = FakeDriver.commit_config

    def commit(self: FakeDriver, message: str = "", revert_in: int | None = None) -> None:
        with _ORDER:
            durable_at_commit[self.dev.name] = any(self.dev.name in covered for covered in syncs)
        real_commit(self, message, revert_in)

    monkeypatch.setattr(FakeDriver, "commit_config", commit)
    out = rig.deployer(two_waves()).run(two_waves())
    assert out.ok, out.message
    assert durable_at_commit == dict.fromkeys(rig.names, True)
    # A group commit: one sync per wave, not one (or four fsyncs) per device.
    assert len(syncs) == 2


def test_a_device_whose_backup_did_not_reach_the_disk_is_not_committed(
    rig: Rig,  # noqa: F811
    syncs: list[set[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_write = journal_mod.atomic_write_text

    def write(path: Path, text: str, **kwargs: bool) -> None:
        if path.name == "before.conf" and path.parent.name == "leaf2":
            raise OSError(28, "No space left on device")
        real_write(path, text, **kwargs)

    monkeypatch.setattr(journal_mod, "atomic_write_text", write)
    deployer = rig.deployer(two_waves())
    with pytest.raises(JournalError, match="No space left"):
        deployer.run(two_waves())
    assert not any("commit_config" in DEVICES[n].calls for n in rig.names)  # the wave stopped before any commit
    # The error was reported (and cleared) once; leaf2 itself still never passes the durability gate.
    with pytest.raises(JournalError, match="backup of leaf2"):
        deployer.journal.durable_backup("leaf2")
    deployer.journal.durable_backup("leaf1")


def test_durable_backup_returns_only_after_a_sync_that_covered_the_written_backup(
    tmp_path: Path, syncs: list[set[str]]
) -> None:
    names = [f"leaf{i}" for i in range(40)]
    record = RunRecord("run1", "fab", [], "deploy.yaml", False, devices={n: DeviceRecord(n, "w") for n in names})
    journal = Journal(tmp_path, record)
    for n in names:
        journal.device_file(n, "diff.txt", "x\n" * 1000)  # queued first, written after every backup
        journal.device_file(n, "before.conf", f"hostname {n}\n")
    covered_on_return: dict[str, bool] = {}

    def wait(name: str) -> None:
        journal.durable_backup(name)
        with _ORDER:
            covered_on_return[name] = any(name in covered for covered in syncs)

    threads = [threading.Thread(target=wait, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert covered_on_return == dict.fromkeys(names, True)
    before = len(syncs)
    journal.durable_backup("leaf0")  # already covered: no new sync
    assert len(syncs) == before
    journal.flush()
    assert (journal.dir / "devices" / "leaf7" / "before.conf").read_text() == "hostname leaf7\n"


def test_checksums_come_from_the_log_or_from_an_older_journals_sidecar_file(tmp_path: Path) -> None:
    record = RunRecord("run1", "fab", [], "deploy.yaml", False, devices={"leaf1": DeviceRecord("leaf1", "w")})
    journal = Journal(tmp_path, record)
    journal.device_file("leaf1", "before.conf", "hostname leaf1\n")
    journal.flush()
    devdir = journal.dir / "devices" / "leaf1"
    assert not list(devdir.glob("*.sha256"))  # one log line per file, no file per checksum
    assert load_run(tmp_path, "fab", "run1").read_device_file("leaf1", "before.conf") == "hostname leaf1\n"
    # A journal an older netfab wrote: a <name>.sha256 beside each file, no log.
    sums = journal.dir / "devices.sha256"
    line = sums.read_text()
    sums.unlink()
    (devdir / "before.conf.sha256").write_text(line.split(" leaf1/")[0] + "\n")
    assert load_run(tmp_path, "fab", "run1").read_device_file("leaf1", "before.conf") == "hostname leaf1\n"
    (devdir / "before.conf").write_text("hostname leaf")
    with pytest.raises(JournalCorrupt, match="truncated"):
        load_run(tmp_path, "fab", "run1").read_device_file("leaf1", "before.conf")
    (devdir / "before.conf.sha256").unlink()
    with pytest.raises(JournalCorrupt, match="no checksum for it"):
        load_run(tmp_path, "fab", "run1").read_device_file("leaf1", "before.conf")
    sums.write_text(line.replace(" 15 ", " 1x "))  # a damaged size never passes, nor raises anything else
    with pytest.raises(JournalCorrupt, match="damaged"):
        load_run(tmp_path, "fab", "run1").read_device_file("leaf1", "before.conf")


def test_run_json_is_the_indented_document_with_its_checksum_first(tmp_path: Path) -> None:
    record = RunRecord("run1", "fab", ["i.yaml"], "deploy.yaml", False, devices={"leaf1": DeviceRecord("leaf1", "w")})
    journal = Journal(tmp_path, record)
    data = json.loads((journal.dir / "run.json").read_text())
    digest = data.pop("checksum")
    assert digest == checksum(json.dumps(data, indent=2, sort_keys=True).encode("utf-8"))
    assert (journal.dir / "run.json").read_text() == json.dumps(
        {**data, "checksum": digest}, indent=2, sort_keys=True
    ) + "\n"
    assert load_run(tmp_path, "fab", "run1").record.devices["leaf1"].wave == "w"


def test_writers_sync_backups_in_the_background_and_leave_errors_to_the_gate(
    tmp_path: Path, syncs: list[set[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal_mod, "SYNC_EVERY_S", 0.0)
    record = RunRecord("run1", "fab", [], "deploy.yaml", False, devices={"leaf1": DeviceRecord("leaf1", "w")})
    journal = Journal(tmp_path, record)
    journal.device_file("leaf1", "before.conf", "hostname leaf1\n")
    journal.flush()
    assert syncs == [{"leaf1"}]  # nobody waited: the writer synced it
    journal.sync_backups()
    assert len(syncs) == 1  # already covered


def test_a_failed_background_sync_is_raised_by_the_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal_mod, "SYNC_EVERY_S", 0.0)

    def broken(directory: Path) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(journal_mod, "sync_filesystem", broken)
    record = RunRecord("run1", "fab", [], "deploy.yaml", False, devices={"leaf1": DeviceRecord("leaf1", "w")})
    journal = Journal(tmp_path, record)
    journal.device_file("leaf1", "before.conf", "hostname leaf1\n")
    with pytest.raises(JournalError, match="Input/output error"):
        journal.durable_backup("leaf1")


def test_a_short_append_is_an_error_not_a_recorded_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The disk fills up mid-line: write(2) returns fewer bytes than the line. The backup whose checksum line
    # was cut must not pass the gate, and a state change that was cut must not count as recorded.
    record = RunRecord("run1", "fab", [], "deploy.yaml", False, devices={"leaf1": DeviceRecord("leaf1", "w")})
    journal = Journal(tmp_path, record)
    monkeypatch.setattr(journal_mod, "os", _ShortWrites())  # the journal's os only: pytest's own writes stay whole
    journal.device_file("leaf1", "before.conf", "hostname leaf1\n")
    with pytest.raises(JournalError, match="short write"):
        journal.durable_backup("leaf1")
    with pytest.raises(JournalError, match="short write"):
        journal.device_state("leaf1", "committing")


class _ShortWrites:
    """The os module, but every write(2) stores only the first half of what it is given."""

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    @staticmethod
    def write(fd: int, data: bytes) -> int:
        return os.write(fd, data[: len(data) // 2])


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"a": [], "b": {}, "c": [[], {}], "d": None, "e": True, "f": False, "g": 0, "h": -7, "i": 1.5, "j": 1e300},
        {"z": "ünïcode \u2603 \U0001f600", "y": 'tab\t nl\n quote" back\\ ctl\x01', "x": ("t", 1, [2, {"k": []}])},
        # run.json's devices: a table of records with one key set, then the same with one record different
        {"devices": {f"leaf{i}": {"name": f"leaf{i}", "n": i, "l": ["b", "a"], "e": ""} for i in range(30, 0, -1)}},
        {"devices": {"a": {"k": 1}, "b": {"k": 1, "extra": "x"}}},
        {"devices": {"a": {"k": 1}, "b": "not a record"}},
        {"devices": {"a": {}, "b": {}}},
        # what only json.dumps encodes: a str/int subclass, a non-str key, NaN and infinity
        {"state": EventKind.NOTE, "i": enum.IntEnum("E", "A").A},
        {"d": {1: "int key", 2: "b"}},
        {"f": float("nan"), "g": [float("inf"), float("-inf")]},
    ],
)
def test_run_json_text_is_exactly_what_json_dumps_would_write(data: dict[str, Any]) -> None:
    # The checksum of run.json is checked against json.dumps(indent=2, sort_keys=True) of what it parses to
    # (and by older netfab versions): the fast encoder must write that text to the byte, or fall back.
    assert journal_mod._indented_json(data) == json.dumps(data, indent=2, sort_keys=True)


def test_a_big_run_json_reads_back_through_its_checksum(tmp_path: Path) -> None:
    names = [f"leaf{i}" for i in range(500)]
    record = RunRecord(
        "run1", "fab", ["i.yaml"], "deploy.yaml", False, waves=[{"name": "w", "devices": names}],
        devices={n: DeviceRecord(n, "w", companions=["host.sh"] if n.endswith("7") else []) for n in names},
    )  # fmt: skip
    journal = Journal(tmp_path, record, ("pw",))
    journal.device_state("leaf3", "failed", 'error: pw \u00e9 "quoted"\nsecond line')
    journal.save()
    data = json.loads((journal.dir / "run.json").read_text())
    digest = data.pop("checksum")
    assert (journal.dir / "run.json").read_text() == json.dumps(
        {**data, "checksum": digest}, indent=2, sort_keys=True
    ) + "\n"
    back = load_run(tmp_path, "fab", "run1").record
    assert back.devices["leaf3"].error == journal.record.devices["leaf3"].error and back.devices[
        "leaf17"
    ].companions == ["host.sh"]
