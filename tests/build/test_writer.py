"""The output tree: atomic replacement, containment, partial rebuilds."""

from __future__ import annotations

from pathlib import Path

import pytest

from netfab.render.writer import AtomicTree, UnsafePath, safe_relpath


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
