"""The output tree: atomic replacement, containment, partial rebuilds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from netfab.render.writer import AtomicTree, UnsafePath, relative_key, safe_relpath


@pytest.mark.parametrize("bad", ["../x", "configs/../../x", "/etc/passwd", "", "a\\..\\b", "configs/.."])
def test_paths_that_would_escape_are_refused(bad: str) -> None:
    with pytest.raises(UnsafePath):
        safe_relpath(bad)


def test_failed_build_leaves_previous_tree_untouched(tmp_path: Path) -> None:
    target = tmp_path / "lab"
    with AtomicTree(target) as tree:
        tree.write("configs/leaf1.conf", "old\n")
    with pytest.raises(RuntimeError), AtomicTree(target) as tree:
        tree.write("configs/leaf1.conf", "new\n")
        raise RuntimeError("template failed half-way")
    assert (target / "configs/leaf1.conf").read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["lab"], "staging directory left behind"


def test_rebuild_replaces_whole_tree(tmp_path: Path) -> None:
    target = tmp_path / "lab"
    with AtomicTree(target) as tree:
        tree.write("configs/gone.conf", "x")
    with AtomicTree(target) as tree:
        tree.write("configs/leaf1.conf", "y")
    assert sorted(p.name for p in (target / "configs").iterdir()) == ["leaf1.conf"]


def test_partial_rebuild_keeps_other_files_and_never_writes_through_links(tmp_path: Path) -> None:
    target = tmp_path / "lab"
    with AtomicTree(target) as tree:
        tree.write("configs/leaf1.conf", "one")
        tree.write("configs/leaf2.conf", "two")
    before = (target / "configs/leaf1.conf").stat().st_ino
    keep = target / "configs/leaf1.conf"
    held = keep.open()  # a reader holding the old file must keep seeing the old bytes
    with AtomicTree(target) as tree:
        tree.seed_from_target()
        tree.write("configs/leaf1.conf", "ONE")
    assert held.read() == "one"
    held.close()
    assert (target / "configs/leaf1.conf").read_text() == "ONE"
    assert (target / "configs/leaf2.conf").read_text() == "two"
    assert (target / "configs/leaf1.conf").stat().st_ino != before


def test_the_new_tree_is_flushed_to_disk_before_it_is_swapped_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A power loss after the swap must not leave the new tree with files whose data never reached the disk:
    the filesystem is synced while the tree is still staged, and the directory holding the swap after it."""
    from netfab.render import writer

    events: list[str] = []
    real_exchange = writer._exchange
    monkeypatch.setattr(writer, "_sync_filesystem", lambda d: events.append(f"sync {d.name.startswith('.out.tmp-')}"))
    monkeypatch.setattr(writer, "_exchange", lambda a, b: events.append("exchange") or real_exchange(a, b))
    monkeypatch.setattr(writer, "fsync_dir", lambda d: events.append(f"fsync {d == tmp_path}"))
    for text in ("old", "new"):
        with AtomicTree(tmp_path / "out") as tree:
            tree.write("configs/leaf1.cfg", text)
    assert (tmp_path / "out" / "configs" / "leaf1.cfg").read_text() == "new"
    assert events == ["sync True", "fsync True", "sync True", "exchange", "fsync True"]


@pytest.mark.parametrize(
    "relpath",
    ["configs/leaf1.conf", "hosts/a.b-c_d.sh", "a", "a//b", "a/./b", "./a", "a/", "/abs", "a/../b", "..", ".", ""]
    + ["a\\b", "configs/x\\..\\y"],
)
def test_relative_key_is_the_safe_relpath(relpath: str) -> None:
    try:
        expected = str(safe_relpath(relpath))
    except UnsafePath:
        with pytest.raises(UnsafePath):
            relative_key(relpath)
        return
    assert relative_key(relpath) == expected


def test_writing_back_flushes_while_the_block_runs_and_leaves_no_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flusher syncs the staging tree's filesystem periodically during the block, ignores a failing
    flush (commit()'s own sync reports errors), and is gone once the block ends, even by an exception."""
    import threading
    import time

    from netfab.render import writer

    flushed: list[Path] = []

    def flaky(directory: Path) -> None:
        flushed.append(directory)
        if len(flushed) == 1:
            raise OSError(5, "Input/output error")

    monkeypatch.setattr(writer, "sync_filesystem", flaky)
    threads = threading.active_count()
    with pytest.raises(RuntimeError), writer.writing_back(tmp_path, every_s=0.01):
        deadline = time.monotonic() + 5
        while len(flushed) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        raise RuntimeError("a render worker failed")
    assert len(flushed) >= 3, "no periodic flush while the block ran (the first one failed: the flusher must go on)"
    assert set(flushed) == {tmp_path}
    assert threading.active_count() == threads, "the flusher outlived its block"
    after = len(flushed)
    time.sleep(0.05)
    assert len(flushed) == after, "flushes after the block ended"


def _tree_of(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("exchange", [True, False])
def test_a_swap_that_fails_leaves_the_old_tree_and_no_staging_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool
) -> None:
    """commit() raising (EIO on the rename, Ctrl-C in it) once left its staging tree behind for good; without
    renameat2 (two renames) a failed second rename left no tree at all where the old one was."""
    from netfab.render import writer

    target = tmp_path / "fab"
    with AtomicTree(target) as tree:
        tree.write("configs/a.conf", "old\n")
    before = _tree_of(target)

    def broken(*_: object) -> bool:
        raise OSError(5, "Input/output error")

    if exchange:
        monkeypatch.setattr(writer, "_exchange", broken)
    else:
        monkeypatch.setattr(writer, "_exchange", lambda *_: False)
        real = writer.os.replace

        def replace(src: object, dst: object) -> None:
            if ".tmp-" in str(src):  # the new tree into place: the second of the two renames
                raise OSError(5, "Input/output error")
            real(src, dst)  # type: ignore[arg-type]

        monkeypatch.setattr(writer.os, "replace", replace)
    with pytest.raises(OSError), AtomicTree(target) as tree:
        tree.write("configs/a.conf", "new\n")
    monkeypatch.undo()
    assert _tree_of(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fab"]


def test_a_killed_builds_trees_are_removed_and_no_one_elses(tmp_path: Path) -> None:
    """A build killed outright (SIGKILL) leaves its staging tree, full of hard links to an old tree's files;
    the next build of that target removes the ones whose process is gone, and nothing else."""
    import subprocess
    import sys

    from netfab.render.writer import MARKER

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = int(dead.stdout)  # a pid that ran and ended (reused by then only by a freak of scheduling)
    live = os.getppid()
    left = {
        f".fab.tmp-{gone}-abc123": True,  # staging of a dead build: removed
        f".fab.old-{gone}": True,  # the replaced tree of a dead build (no renameat2): removed
        f".fab.tmp-{live}-def456": False,  # a running process's: kept
        f".other.tmp-{gone}-abc123": False,  # another target's: its own build decides
    }
    for name in left:
        (tmp_path / name / "configs").mkdir(parents=True)
        (tmp_path / name / MARKER).write_text("x\n")
    notes = tmp_path / f".fab.tmp-{gone}-notes"  # not a tree netfab wrote (no marker): kept
    notes.mkdir()
    (notes / "mine.txt").write_text("keep\n")
    with AtomicTree(tmp_path / "fab") as tree:
        tree.write("configs/a.conf", "x\n")
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {"fab", notes.name, *(n for n, removed in left.items() if not removed)}


def test_a_tree_left_between_two_renames_is_put_back(tmp_path: Path) -> None:
    """Without renameat2 a build renames the old tree aside, then the new one in. Killed between the two, it
    left no tree at the target; the old one, under .<fabric>.old-<pid>, goes back in place, not away."""
    import subprocess
    import sys

    from netfab.render.writer import MARKER, remove_abandoned

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    aside = tmp_path / f".fab.old-{int(dead.stdout)}"
    (aside / "configs").mkdir(parents=True)
    (aside / MARKER).write_text("x\n")
    (aside / "configs" / "a.conf").write_text("old\n")
    staging = tmp_path / f".fab.tmp-{int(dead.stdout)}-abc123"
    staging.mkdir()
    (staging / MARKER).write_text("x\n")
    remove_abandoned(tmp_path / "fab")
    assert (tmp_path / "fab" / "configs" / "a.conf").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fab"]
