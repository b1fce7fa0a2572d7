"""A rebuild's staging tree seeded with the previous build's files while the plan is designed
(netfab.render.preseed): the seeded rebuild is the unseeded one, byte for byte and inode for inode; nothing is
seeded that the manifest does not vouch for; what the new plan drops is gone; a build that stops leaves no
staging tree and no seeder behind."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from netfab.cli.pipeline import load_plan
from netfab.render import build as build_module
from netfab.render import preseed
from netfab.render.manifest import MANIFEST, read_manifest
from netfab.render.writer import MARKER

ROOT = Path(__file__).resolve().parents[2]
RAIL = ROOT / "intent" / "rail-4su.yaml"
Cli = Callable[..., tuple[int, str]]
"""The `cli` fixture (tests/scale/conftest.py)."""


def _files(tree: Path) -> dict[str, tuple[bytes, int]]:
    """Every file but the manifest (it records inodes and mtimes) and the marker (new in every tree): its bytes
    and inode."""
    return {
        str(p.relative_to(tree)): (p.read_bytes(), p.stat().st_ino)
        for p in sorted(tree.rglob("*"))
        if p.is_file() and p.name not in (MANIFEST, MARKER)
    }


def _edit(tmp_path: Path, old: str, new: str, name: str = "rail-4su.yaml") -> Path:
    text = RAIL.read_text()
    assert old in text
    changed = tmp_path / name
    changed.write_text(text.replace(old, new))
    return changed


def _staging_dirs(out: Path) -> list[str]:
    """What is beside the tree but the tree a rebuild replaced (kept until the next rebuild removes it)."""
    return sorted(p.name for p in out.iterdir() if p.name not in ("rail-4su", ".rail-4su.previous"))


def test_a_seeded_rebuild_is_the_unseeded_one(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    knob = _edit(tmp_path, "kmin: 150KB", "kmin: 200KB")
    trees = {}
    for mode in ("seeded", "unseeded"):
        out = tmp_path / mode
        assert cli("build", str(RAIL), "-o", str(out), "-q")[0] == 0
        if mode == "unseeded":
            monkeypatch.setattr(preseed, "start", lambda target: None)
        before = _files(out / "rail-4su")
        code, text = cli("build", str(knob), "-o", str(out), "-q")
        assert code == 0, text
        after = _files(out / "rail-4su")
        trees[mode] = (before, after, text)
    seeded, unseeded = trees["seeded"], trees["unseeded"]
    assert {f: b for f, (b, _) in seeded[1].items()} == {f: b for f, (b, _) in unseeded[1].items()}
    summary = [[line for line in text.splitlines() if not line.startswith("built ")] for _, _, text in trees.values()]
    assert summary[0] == summary[1] and "32 leaf configs changed" in seeded[2]  # past the line with paths and time
    for before, after, _ in (seeded, unseeded):
        kept = {f for f in after if f in before and after[f][1] == before[f][1]}
        assert len(kept) == len(after) - 48  # the 48 switch configs with the queue are new inodes, no other
    assert _staging_dirs(tmp_path / "seeded") == []


def test_the_cli_seeds_a_rebuild_and_only_a_full_one(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The seeded path is the one taken (the test above could pass with seeding never starting)."""
    started: list[str] = []
    real = preseed.start

    def spy(target: Path) -> preseed.Preseed | None:
        seeding = real(target)
        started.append(f"{target.name} {seeding is not None}")
        return seeding

    monkeypatch.setattr(preseed, "start", spy)
    out = tmp_path / "build"
    assert cli("build", str(RAIL), "-o", str(out), "-q")[0] == 0
    assert started == ["rail-4su False"]  # nothing to seed from
    knob = _edit(tmp_path, "kmin: 150KB", "kmin: 200KB")
    assert cli("build", str(knob), "-o", str(out), "-q")[0] == 0
    assert started == ["rail-4su False", "rail-4su True"]
    assert cli("build", str(RAIL), "-o", str(out), "-q", "--limit", "*leaf*")[0] == 0
    assert len(started) == 2  # a partial build seeds itself from the whole tree, as before
    assert _staging_dirs(out) == []


def test_only_files_the_manifest_vouches_for_are_seeded(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "build"
    cli("build", str(RAIL), "-o", str(out), "-q")
    tree = out / "rail-4su"
    manifest = read_manifest(tree)
    assert manifest is not None
    configs = sorted(f for f in manifest.files if f.startswith("configs/"))
    edited, replaced, linked = configs[0], configs[1], configs[2]
    with open(tree / edited, "a") as fh:  # in place: same inode, new size and mtime
        fh.write("! hand edit\n")
    (tree / replaced).unlink()
    (tree / replaced).write_text("not what netfab wrote\n")
    (tree / linked).unlink()
    (tmp_path / "secret").write_text("outside the tree\n")
    (tree / linked).symlink_to(tmp_path / "secret")
    (tree / "configs" / "stray.conf").write_text("never built\n")
    staging = tmp_path / "staging"
    staging.mkdir()
    assert preseed.seed(tree, staging) == len(manifest.files) - 3
    seeded = {str(p.relative_to(staging)) for p in staging.rglob("*") if p.is_file()}
    assert seeded == set(manifest.files) - {edited, replaced, linked}
    assert all((staging / f).stat().st_ino == (tree / f).stat().st_ino for f in seeded)
    assert not any((staging / f).is_symlink() for f in seeded)


def test_a_tampered_manifest_never_seeds_outside_the_tree(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "build"
    cli("build", str(RAIL), "-o", str(out), "-q")
    tree = out / "rail-4su"
    outside = tmp_path / "outside.txt"
    outside.write_text("x\n")
    st = outside.stat()
    text = (tree / MANIFEST).read_text()
    row = f'"../../outside.txt":["0",{st.st_size},{st.st_mtime_ns},{st.st_ino}],'
    (tree / MANIFEST).write_text(text.replace('"files":{', '"files":{' + row, 1))
    manifest = read_manifest(tree)
    assert manifest is not None and "../../outside.txt" in manifest.files
    staging = tmp_path / "a" / "b" / "staging"
    staging.mkdir(parents=True)
    assert preseed.seed(tree, staging) == len(manifest.files) - 1
    assert not (tmp_path / "a" / "outside.txt").exists() and outside.stat().st_nlink == 1


def test_what_the_new_plan_drops_is_not_carried_over(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "build"
    cli("build", str(RAIL), "-o", str(out), "-q")
    smaller = _edit(tmp_path, "scalable_units: 4", "scalable_units: 2")
    code, text = cli("build", str(smaller), "-o", str(out), "-q")
    assert code == 0, text
    fresh = tmp_path / "fresh"
    assert cli("build", str(smaller), "-o", str(fresh), "-q")[0] == 0
    got, want = _files(out / "rail-4su"), _files(fresh / "rail-4su")
    assert {f: b for f, (b, _) in got.items()} == {f: b for f, (b, _) in want.items()}
    manifest = read_manifest(out / "rail-4su")
    assert manifest is not None and set(manifest.files) == set(got)
    assert len(got) < len(_files_of_a_full(cli, tmp_path))


def _files_of_a_full(cli: Cli, tmp_path: Path) -> dict[str, tuple[bytes, int]]:
    out = tmp_path / "full"
    cli("build", str(RAIL), "-o", str(out), "-q")
    return _files(out / "rail-4su")


def test_a_file_edited_after_seeding_is_rewritten(cli: Cli, tmp_path: Path) -> None:
    """The render re-checks each seeded file (its inode, size and mtime in the staging tree): an edit made in
    place while the plan was designed reaches the staging tree through the shared inode and must not be kept."""
    out = tmp_path / "build"
    cli("build", str(RAIL), "-o", str(out), "-q")
    tree = out / "rail-4su"
    plan = load_plan([RAIL]).plan
    seeding = preseed.start(tree)
    assert seeding is not None
    seeded = seeding.take()
    assert seeded is not None
    victim = next((tree / "configs").iterdir())
    original = victim.read_bytes()
    with open(victim, "ab") as fh:
        fh.write(b"! edited while the plan was designed\n")
    result = build_module.build(plan, out, workers=1, seeded=seeded)
    assert result.written == [f"configs/{victim.name}"]
    assert (tree / "configs" / victim.name).read_bytes() == original
    assert _staging_dirs(out) == []


def test_a_build_that_stops_leaves_no_staging_tree_and_no_seeder(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "build"
    cli("build", str(RAIL), "-o", str(out), "-q")
    before = _files(out / "rail-4su")
    broken = _edit(tmp_path, "count: 16", "count: 0")  # lint refuses it, after seeding started
    code, text = cli("build", str(broken), "-o", str(out), "-q")
    assert code == 1, text
    assert _staging_dirs(out) == [] and _files(out / "rail-4su") == before
    seeding = preseed.start(out / "rail-4su")
    assert seeding is not None
    pid = seeding._pid
    assert pid is not None
    seeding.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, 0)  # reaped, not left running
    assert _staging_dirs(out) == []


def test_a_seeder_that_fails_leaves_an_ordinary_build(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "build"
    cli("build", str(RAIL), "-o", str(out), "-q")

    def broken(previous: Path, staging: Path) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(preseed, "seed", broken)  # the forked child inherits it
    seeding = preseed.start(out / "rail-4su")
    assert seeding is not None
    assert seeding.take() is None
    assert _staging_dirs(out) == []
    knob = _edit(tmp_path, "kmin: 150KB", "kmin: 200KB")
    code, text = cli("build", str(knob), "-o", str(out), "-q")
    assert code == 0 and "48 written" in text, text
    assert _staging_dirs(out) == []


def test_a_tree_swapped_in_by_another_build_meanwhile_is_not_mixed_in(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seeded from one tree, built against the next one's manifest (another build swapped it in while the plan
    was designed): every seeded file is checked against that manifest in the staging tree itself, so none of
    the first tree's configs survives where the second recorded other bytes."""
    out = tmp_path / "build"
    cli("build", str(RAIL), "-o", str(out), "-q")
    seeding = preseed.start(out / "rail-4su")
    assert seeding is not None
    seeded = seeding.take()
    assert seeded is not None
    knob = _edit(tmp_path, "kmin: 150KB", "kmin: 200KB")
    monkeypatch.setattr(preseed, "start", lambda target: None)
    assert cli("build", str(knob), "-o", str(out), "-q")[0] == 0  # the other build
    result = build_module.build(load_plan([knob]).plan, out, workers=1, seeded=seeded)
    assert len(result.written) == 48  # the seeded (pre-knob) configs, replaced
    fresh = tmp_path / "fresh"
    assert cli("build", str(knob), "-o", str(fresh), "-q")[0] == 0
    got, want = _files(out / "rail-4su"), _files(fresh / "rail-4su")
    assert {f: b for f, (b, _) in got.items()} == {f: b for f, (b, _) in want.items()}


def test_the_replaced_tree_is_kept_until_the_next_rebuild_removes_it(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "build"
    cli("build", str(RAIL), "-o", str(out), "-q")
    first = _files(out / "rail-4su")
    knob = _edit(tmp_path, "kmin: 150KB", "kmin: 200KB")
    assert cli("build", str(knob), "-o", str(out), "-q")[0] == 0
    previous = out / ".rail-4su.previous"
    assert _files(previous) == first  # the whole replaced tree, every file its very inode
    second = _files(out / "rail-4su")
    assert cli("build", str(RAIL), "-o", str(out), "-q")[0] == 0
    assert _files(previous) == second  # the older one is gone, not merged in
    assert sorted(p.name for p in out.iterdir()) == [".rail-4su.previous", "rail-4su"]


def test_a_previous_tree_netfab_did_not_write_is_never_removed(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "build"
    cli("build", str(RAIL), "-o", str(out), "-q")
    mine = out / ".rail-4su.previous"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n")
    knob = _edit(tmp_path, "kmin: 150KB", "kmin: 200KB")
    code, text = cli("build", str(knob), "-o", str(out), "-q")
    assert code == 0 and "48 written" in text, text
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]  # and the replaced tree was removed instead
    assert sorted(p.name for p in out.iterdir()) == [".rail-4su.previous", "rail-4su"]


def test_a_removal_cut_short_leaves_a_kept_tree_the_next_rebuild_removes(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "build"
    cli("build", str(RAIL), "-o", str(out), "-q")
    knob = _edit(tmp_path, "kmin: 150KB", "kmin: 200KB")
    cli("build", str(knob), "-o", str(out), "-q")
    kept = preseed.previous_tree(out / "rail-4su")
    real, calls = os.unlink, {"n": 0}

    def stopped(path: str | Path, *, dir_fd: int | None = None) -> None:
        calls["n"] += 1
        if calls["n"] > 20:
            raise KeyboardInterrupt  # the build stopped part way
        real(path, dir_fd=dir_fd)

    monkeypatch.setattr(preseed.os, "unlink", stopped)
    with pytest.raises(KeyboardInterrupt):
        preseed._remove_kept(kept)
    assert (kept / MARKER).is_file() and len(list(kept.rglob("*"))) > 20  # cut short, still netfab's
    monkeypatch.setattr(preseed.os, "unlink", real)
    preseed._remove_kept(kept)
    assert not kept.exists()


def test_a_fabric_name_that_leaves_the_output_root_seeds_nothing(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The names are read before lint: one that is not a plain directory name never reaches the seeder, so no
    staging tree is made beside a tree outside --out (lint then refuses the name)."""
    cli("build", str(RAIL), "-o", str(tmp_path), "-q")  # a netfab tree at tmp_path/rail-4su
    started: list[Path] = []
    monkeypatch.setattr(preseed, "start", lambda target: started.append(target))
    escaping = _edit(tmp_path, "name: rail-4su", "name: ../rail-4su", name="escaping.yaml")
    code, text = cli("build", str(escaping), "-o", str(tmp_path / "out"), "-q")
    assert code != 0 and "Traceback" not in text
    assert started == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["escaping.yaml", "rail-4su"]


def test_a_linked_directory_in_the_tree_is_never_followed(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "build"
    cli("build", str(RAIL), "-o", str(out), "-q")
    tree = out / "rail-4su"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    secret = elsewhere / "secret"
    secret.write_text("outside the tree\n")
    moved = tmp_path / "hosts-moved"
    (tree / "hosts").rename(moved)
    (tree / "hosts").symlink_to(elsewhere)
    st = secret.stat()
    text = (tree / MANIFEST).read_text()
    row = f'"hosts/secret":["0",{st.st_size},{st.st_mtime_ns},{st.st_ino}],'
    (tree / MANIFEST).write_text(text.replace('"files":{', '"files":{' + row, 1))
    staging = tmp_path / "staging"
    staging.mkdir()
    preseed.seed(tree, staging)
    assert not (staging / "hosts").exists() and secret.stat().st_nlink == 1


def test_a_previous_directory_without_the_marker_is_never_removed_nor_replaced(cli: Cli, tmp_path: Path) -> None:
    """No netfab before the kept tree wrote a .previous, so a tree there without the marker is someone's, even
    one shaped like an old build; an empty one is not taken over either."""
    for shape in ("configs", ""):
        out = tmp_path / f"build-{shape or 'empty'}"
        cli("build", str(RAIL), "-o", str(out), "-q")
        mine = out / ".rail-4su.previous"
        (mine / shape).mkdir(parents=True, exist_ok=True)
        if shape:
            (mine / shape / "notes.txt").write_text("mine\n")
        knob = _edit(tmp_path, "kmin: 150KB", "kmin: 200KB")
        assert cli("build", str(knob), "-o", str(out), "-q")[0] == 0
        assert sorted(str(p.relative_to(mine)) for p in mine.rglob("*")) == (
            ["configs", "configs/notes.txt"] if shape else []
        )


def test_a_fork_that_fails_leaves_an_unseeded_build_of_every_network(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    intent = ROOT / "intent" / "superpod-su.yaml"
    out = tmp_path / "build"
    assert cli("build", str(intent), "-o", str(out), "-q")[0] == 0
    changed = tmp_path / "superpod-su.yaml"
    changed.write_text(intent.read_text().replace("detect: 200ms", "detect: 300ms"))
    real, calls = os.fork, {"n": 0}

    def flaky() -> int:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(11, "Resource temporarily unavailable")
        return real()

    monkeypatch.setattr(preseed.os, "fork", flaky)
    code, text = cli("build", str(changed), "-o", str(out), "-q")
    monkeypatch.setattr(preseed.os, "fork", real)
    assert code == 0, text
    assert calls["n"] >= 2
    fresh = tmp_path / "fresh"
    assert cli("build", str(changed), "-o", str(fresh), "-q")[0] == 0
    trees = sorted(p.name for p in fresh.iterdir())
    assert trees == ["spod-su", "spod-su-oob", "spod-su-storage"]
    for name in trees:  # the seeded networks and the one that fell back alike
        got, want = _files(out / name), _files(fresh / name)
        assert {f: b for f, (b, _) in got.items()} == {f: b for f, (b, _) in want.items()}, name
    assert not [p.name for p in out.iterdir() if ".tmp-" in p.name]
