"""Paths stay contained (RELIABILITY_TRIAL.md F8-C) and output roots are checked up front.

The trial: `deploy --lab '/../../victim'` built into victim/lab at the project root, deleting the file that was
there; `build --out DIR` replaced DIR/<fabric> even when it was not a netfab build, and followed a symlink
there (the link's target was replaced); `--runs /etc/passwd` and `build --out /etc/passwd` were exit 3.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from netfab.core.validate import InputError, lab_prefix, name, output_root
from netfab.deploy.target import build_root_for
from netfab.render.writer import MARKER, AtomicTree, UnsafePath, check_replaceable


@pytest.mark.parametrize("prefix", ["/../../victim", "../x", "a/b", "", "UPPER", "toolongname", "-rf", "1abc", "a b"])
def test_unsafe_lab_prefixes_are_refused(prefix: str) -> None:
    with pytest.raises(InputError, match="lab prefix"):
        lab_prefix(prefix)


def test_lab_build_root_never_leaves_the_build_root(tmp_path: Path) -> None:
    (tmp_path / "victim" / "lab").mkdir(parents=True)
    (tmp_path / "victim" / "lab" / "important.txt").write_text("x")
    with pytest.raises(InputError):
        build_root_for(tmp_path / "build", "/../../victim")
    assert build_root_for(tmp_path / "build", "rel") == tmp_path / "build" / "lab-rel"
    assert build_root_for(tmp_path / "build", None) == tmp_path / "build"
    assert (tmp_path / "victim" / "lab" / "important.txt").read_text() == "x"


@pytest.mark.parametrize("value", ["../../../etc", "/etc", "a/b", "..", ".", "-x", "", "x" * 64])
def test_run_ids_and_fabric_names_are_one_safe_path_component(value: str) -> None:
    with pytest.raises(InputError):
        name(value, "run id")


def test_good_names_pass() -> None:
    assert name("20261201T113000Z-a1b2c3", "run id") == "20261201T113000Z-a1b2c3"
    assert name("clos3-24k", "fabric name") == "clos3-24k"


def test_a_file_as_output_root_is_refused_with_a_hint(tmp_path: Path) -> None:
    afile = tmp_path / "passwd"
    afile.write_text("root:x:0:0\n")
    with pytest.raises(InputError, match=r"--out .*passwd: .*passwd is not a directory") as err:
        output_root(afile, "--out")
    assert err.value.hint == "give --out a directory"
    with pytest.raises(InputError, match=r"--runs .*passwd/sub: .*passwd is not a directory"):
        output_root(afile / "sub", "--runs")  # a file further up the path: ENOTDIR later, refused now
    assert afile.read_text() == "root:x:0:0\n"


def test_missing_output_root_is_fine_when_its_parent_is_writable(tmp_path: Path) -> None:
    assert output_root(tmp_path / "new" / "deeper", "--out") == tmp_path / "new" / "deeper"
    assert not (tmp_path / "new").exists()  # checking creates nothing


def test_dangling_symlink_as_output_root_is_refused(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    with pytest.raises(InputError, match="dangling symbolic link"):
        output_root(tmp_path / "link", "--runs")


def test_read_only_output_root_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == tmp_path else real_access(p, mode))
    with pytest.raises(InputError, match="is not writable"):
        output_root(tmp_path / "runs", "--runs")


# --- the output tree itself ----------------------------------------------------------------------------


def _build(target: Path, files: dict[str, str]) -> None:
    with AtomicTree(target) as tree:
        tree.write_many(files.items())


def test_a_directory_netfab_did_not_write_is_never_replaced(tmp_path: Path) -> None:
    fabric = tmp_path / "out" / "victimfab"
    fabric.mkdir(parents=True)
    (fabric / "notes.txt").write_text("mine")
    with pytest.raises(UnsafePath, match=f"not a netfab output directory \\(no {MARKER}\\)"):
        _build(fabric, {"configs/leaf1.conf": "x"})
    assert (fabric / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in fabric.parent.iterdir()) == ["victimfab"]  # no staging dir left behind


def test_a_symlinked_output_directory_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")
    (elsewhere / MARKER).write_text("")  # even a netfab tree: replacing through a link is refused
    out = tmp_path / "out"
    out.mkdir()
    (out / "lab").symlink_to(elsewhere)
    with pytest.raises(UnsafePath, match="is a symbolic link"):
        _build(out / "lab", {"configs/leaf1.conf": "x"})
    assert (elsewhere / "keep.txt").read_text() == "keep" and (out / "lab").is_symlink()


def test_netfab_replaces_its_own_tree_and_marks_it(tmp_path: Path) -> None:
    target = tmp_path / "out" / "lab"
    _build(target, {"configs/leaf1.conf": "one"})
    assert (target / MARKER).is_file()
    _build(target, {"configs/leaf2.conf": "two"})
    assert sorted(p.name for p in (target / "configs").iterdir()) == ["leaf2.conf"]


def test_a_build_from_before_the_marker_is_still_replaceable(tmp_path: Path) -> None:
    legacy = tmp_path / "lab"
    (legacy / "configs").mkdir(parents=True)
    (legacy / "inventory").mkdir()
    (legacy / "cabling.csv").write_text("a,b\n")
    check_replaceable(legacy)  # nothing but what netfab writes
    (legacy / "notes.txt").write_text("mine")
    with pytest.raises(UnsafePath):
        check_replaceable(legacy)


def test_a_file_where_the_tree_goes_is_refused(tmp_path: Path) -> None:
    (tmp_path / "lab").write_text("not a dir")
    with pytest.raises(UnsafePath, match="exists and is not a directory"):
        _build(tmp_path / "lab", {"a": "b"})


def test_partial_rebuild_does_not_write_through_a_planted_symlink(tmp_path: Path) -> None:
    target = tmp_path / "lab"
    _build(target, {"configs/leaf1.conf": "one"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (target / "hosts").symlink_to(outside, target_is_directory=True)
    with AtomicTree(target) as tree:
        tree.seed_from_target()
        tree.write("hosts/h1.sh", "echo hi\n")
    assert list(outside.iterdir()) == []
    assert (target / "hosts" / "h1.sh").read_text() == "echo hi\n" and not (target / "hosts").is_symlink()
    assert (target / "configs" / "leaf1.conf").read_text() == "one"  # the partial rebuild kept the rest


def test_a_full_disk_while_swapping_the_tree_in_is_an_output_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # RELIABILITY_TRIAL F5: a full disk was "internal error ... a bug in netfab" (exit 3); OutputError is exit 2.
    import errno

    from netfab.core.fs import OutputError

    def full(src: object, dst: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    target = tmp_path / "lab"
    tree = AtomicTree(target)
    tree.write("configs/leaf1.conf", "x")
    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OutputError) as err:
        tree.commit()
    assert err.value.path == target and "disk is full" in err.value.hint


def test_a_full_disk_in_a_parallel_render_worker_is_an_output_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The forked render workers' OSError came back to the parent as a plain OSError: exit 3, "a bug"."""
    import errno

    from netfab.cli.pipeline import load_plan
    from netfab.core.fs import OutputError
    from netfab.render import build as build_module

    plan = load_plan([Path(__file__).resolve().parents[2] / "intent" / "rail-4su.yaml"]).plan
    monkeypatch.setattr(build_module, "_PARALLEL_THRESHOLD", 1)  # the forked path, whatever the fabric's size

    def full(self: object, files: dict[str, str]) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(build_module._StagingWriter, "write_all", full)  # inherited by the forked workers
    with pytest.raises(OutputError) as err:
        build_module.build(plan, tmp_path / "out", workers=2)
    assert "disk is full" in err.value.hint
    assert not (tmp_path / "out" / plan.name).exists()  # nothing half-written took the build's place
