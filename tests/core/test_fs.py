"""core.fs: the one atomic write (permissions, durability, errors an operator can act on) and verb_dir."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest
from cli_helpers import ROOT, netfab

from netfab.core import fs
from netfab.core.fs import OutputError, atomic_write_text, verb_dir, write_files


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_writes_replaces_and_leaves_no_temp_file(tmp_path: Path) -> None:
    out = tmp_path / "report.sarif"
    atomic_write_text(out, "{}")
    first = out.stat().st_ino
    atomic_write_text(out, "line\r\nkept\n")
    assert out.read_bytes() == b"line\r\nkept\n"  # line endings untouched
    assert out.stat().st_ino != first  # replaced by rename, never written through
    assert [p.name for p in tmp_path.iterdir()] == ["report.sarif"]


@pytest.mark.parametrize("mode", [0o644, 0o600, 0o640])
def test_permissions_are_explicit_whatever_the_umask(tmp_path: Path, mode: int) -> None:
    old = os.umask(0o077)
    try:
        atomic_write_text(tmp_path / "a", "x", mode=mode)
    finally:
        os.umask(old)
    assert _mode(tmp_path / "a") == mode
    # An existing file with other permissions gets the requested ones too.
    (tmp_path / "b").write_text("old")
    (tmp_path / "b").chmod(0o666)
    atomic_write_text(tmp_path / "b", "new", mode=mode)
    assert _mode(tmp_path / "b") == mode


def test_missing_parents_are_created(tmp_path: Path) -> None:
    atomic_write_text(tmp_path / "a" / "b" / "c.json", "{}")
    assert (tmp_path / "a" / "b" / "c.json").read_text() == "{}"


def test_a_stale_temp_file_of_a_killed_process_is_not_an_obstacle(tmp_path: Path) -> None:
    import threading

    stale = tmp_path / f".run.json.{os.getpid()}.{threading.get_ident()}.tmp"
    stale.write_text("half")
    atomic_write_text(tmp_path / "run.json", "{}")
    assert (tmp_path / "run.json").read_text() == "{}" and not stale.exists()


def test_durable_fsyncs_the_file_and_its_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[bool] = []
    real = os.fsync

    def counting(fd: int) -> None:
        synced.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        real(fd)

    monkeypatch.setattr(fs.os, "fsync", counting)
    atomic_write_text(tmp_path / "before.conf", "x")
    assert synced == [False, True]
    synced.clear()
    atomic_write_text(tmp_path / "diff.txt", "x", durable=False)
    assert synced == []


def test_disk_full_is_an_output_error_with_a_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "report.json").write_text("previous")

    def full(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fs.os, "write", full)
    with pytest.raises(OutputError) as info:
        atomic_write_text(tmp_path / "report.json", "{}")
    assert info.value.path == tmp_path / "report.json"
    assert info.value.errno == errno.ENOSPC
    assert str(info.value) == (
        f"cannot write {tmp_path / 'report.json'}: No space left on device "
        "(the disk is full: free space or choose another output directory)"
    )
    monkeypatch.undo()
    assert (tmp_path / "report.json").read_text() == "previous"  # the old file is intact
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_file_where_a_directory_should_be_and_a_directory_as_target(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    with pytest.raises(OutputError, match="a parent of this path is a file"):
        atomic_write_text(tmp_path / "afile" / "report.json", "{}")
    (tmp_path / "adir").mkdir()
    with pytest.raises(OutputError, match="this path is a directory"):
        atomic_write_text(tmp_path / "adir", "{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "afile"]
    assert isinstance(OutputError(tmp_path, "r", "h"), OSError)  # old `except OSError` handlers still catch it


def test_write_files_refuses_names_that_leave_the_directory(tmp_path: Path) -> None:
    out = tmp_path / "out"
    for bad in ("../escape.json", "a/b.json", "..", ""):
        with pytest.raises(OutputError, match="not a plain file name"):
            write_files(out, {"ok.json": "{}", bad: "{}"})
    assert not out.exists()  # refused before anything was written
    assert write_files(out, {"a.json": "1", "b.svg": "2"}) == [out / "a.json", out / "b.svg"]


def test_verb_dir_is_a_sibling_of_the_build(tmp_path: Path) -> None:
    assert verb_dir(tmp_path, "clos3-24k", "analysis") == tmp_path / "clos3-24k.analysis"
    assert verb_dir(tmp_path, "lab", "audit") == tmp_path / "lab.audit"
    for bad in ("..", ".", "", "a/b", "../x"):
        with pytest.raises(ValueError, match="cannot name a directory"):
            verb_dir(tmp_path, bad, "audit")
    with pytest.raises(ValueError, match="no output directory convention"):
        verb_dir(tmp_path, "lab", "build")


@pytest.mark.parametrize(
    ("verb", "said"),
    [
        # reporting verbs check --output before any work (netfab.cli.report_options), like every output option
        (["lint", str(ROOT / "intent" / "lab.yaml")], "{parent} is not a directory (give --output a file path)"),
        (["schema"], "cannot write {target}: Not a directory (a parent of this path is a file"),
    ],
)
def test_an_unwritable_output_is_exit_2_with_the_path_and_a_hint(tmp_path: Path, verb: list[str], said: str) -> None:
    (tmp_path / "afile").write_text("")
    target = tmp_path / "afile" / "report"
    res = netfab(tmp_path, *verb, "--output", str(target))
    assert res.returncode == 2, res.stderr
    assert said.format(target=target, parent=target.parent) in " ".join(res.stderr.split())
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr


def test_an_output_error_wrapped_by_a_verb_is_still_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The journal wraps its write errors (JournalError from OutputError): still the environment, not a bug."""
    from netfab.cli import app as app_module

    def verb(standalone_mode: bool, default_map: dict[str, object]) -> int:
        try:
            raise OutputError(tmp_path / "runs" / "run.json", "Read-only file system", "read-only")
        except OutputError as exc:
            raise RuntimeError("cannot write the run journal") from exc

    # main() runs the command tree cli_command() builds (verbs, help, project defaults): replace that tree.
    monkeypatch.setattr(app_module, "cli_command", lambda only=None: (verb, {}))
    with pytest.raises(SystemExit) as info:
        app_module.main()
    assert info.value.code == 2
    assert f"cannot write {tmp_path / 'runs' / 'run.json'}: Read-only file system" in capsys.readouterr().err


def test_an_unwritable_deploy_events_file_is_exit_2_before_anything_starts(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    res = netfab(tmp_path, "deploy", str(ROOT / "intent" / "lab.yaml"), "--events", "afile/events.jsonl")
    assert res.returncode == 2, res.stderr
    assert "cannot write afile/events.jsonl: Not a directory" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]  # no build, no run journal
