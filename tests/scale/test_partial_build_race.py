"""A --limit/--platform build copies the current tree to start from, by path. A full build that swaps its own
tree in while that copy runs once gave a tree made of both, under a manifest true to neither (a fault trial:
75 server scripts of one build, 117 of the next). The copy is now checked against the manifest it started
from and made again from the tree that is there."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
import yaml

from netfab.cli.pipeline import load_plan
from netfab.render.build import BuildSelection, build
from netfab.render.manifest import MANIFEST, read_manifest
from netfab.render.writer import MARKER

ROOT = Path(__file__).resolve().parents[2]


def _lab(tmp_path: Path, mtu: int) -> Path:
    data = yaml.safe_load((ROOT / "intent" / "lab.yaml").read_text(encoding="utf-8"))
    data["underlay"]["mtu"] = mtu  # every switch config and host script differs between the two
    path = tmp_path / f"lab-{mtu}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _bytes(root: Path) -> dict[str, bytes]:
    skip = {MARKER, MANIFEST}
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and p.name not in skip
    }


def test_a_tree_swapped_in_during_the_copy_is_copied_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = load_plan([_lab(tmp_path, 9216)], bgp=False).plan
    b = load_plan([_lab(tmp_path, 9100)], bgp=False).plan
    out, other = tmp_path / "out", tmp_path / "other"
    build(a, out)
    build(b, other)
    target = out / a.name
    b_files = _bytes(other / b.name)
    real_copytree = shutil.copytree
    links = 0

    def copy_then_swap(src: str, dst: str) -> None:
        nonlocal links
        os.link(src, dst)
        links += 1
        if links == 5:  # another build swaps its tree in, five files into the copy
            os.rename(target, tmp_path / "replaced")
            os.rename(other / b.name, target)

    def copytree(*args: object, **kw: object) -> object:
        # shutil calls itself for each subfolder, passing copy_function by position (its fifth parameter).
        if len(args) >= 5:
            args = (*args[:4], copy_then_swap, *args[5:])
        else:
            kw["copy_function"] = copy_then_swap
        return real_copytree(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(shutil, "copytree", copytree)
    build(a, out, BuildSelection(device_glob="spine*"))
    monkeypatch.undo()
    assert links > 5
    manifest = read_manifest(target)
    assert manifest is not None
    built = _bytes(target)
    # The manifest is true to every file, and every file not rebuilt is the swapped-in tree's.
    assert set(built) == set(manifest.files)
    for rel, data in built.items():
        assert hashlib.sha256(data).hexdigest()[:32] == manifest.files[rel].digest, rel
        if not rel.startswith("configs/spine"):
            assert data == b_files[rel], rel
