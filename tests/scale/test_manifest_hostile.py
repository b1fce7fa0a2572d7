"""A build tree's manifest is read before anything is trusted, and whatever stands in its place (a FIFO, a
link to a device, a directory, records no JSON number fits, JSON nested past the parser's depth) means only
"rebuild": never a hang, never an internal error, and the rebuilt tree is the one a fresh build writes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from netfab.render.manifest import MANIFEST, read_manifest

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "intent" / "lab.yaml"
Cli = Callable[..., tuple[int, str]]


def _files(tree: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(tree)): p.read_bytes()
        for p in sorted(tree.rglob("*"))
        if p.is_file() and not p.is_symlink() and p.name != MANIFEST
    }


def _replace_manifest(tree: Path, how: str) -> None:
    manifest = tree / MANIFEST
    manifest.unlink()
    if how == "fifo":
        os.mkfifo(manifest)
    elif how == "dev-zero":
        manifest.symlink_to("/dev/zero")
    elif how == "directory":
        manifest.mkdir()
    elif how == "overflow":
        manifest.write_text('{"format":2,"inputs":null,"files":{"configs/leaf1.conf":["ab",1e400,1,1]}}\n')
    elif how == "infinity":
        manifest.write_text('{"format":2,"inputs":null,"files":{"configs/leaf1.conf":["ab",Infinity,1,1]}}\n')
    elif how == "deep":
        manifest.write_text('{"format":2,"inputs":null,"files":' + "[" * 200_000 + "\n")
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["fifo", "dev-zero", "directory", "overflow", "infinity", "deep"])
def test_a_manifest_that_is_not_one_means_rebuild(tmp_path: Path, how: str) -> None:
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    build = [sys.executable, "-m", "netfab.cli.app", "build", str(LAB), "-q", "-o"]
    assert subprocess.run([*build, str(out)], capture_output=True, cwd=ROOT, timeout=120).returncode == 0
    tree = out / "lab"
    _replace_manifest(tree, how)
    assert read_manifest(tree) is None
    # A separate process with a deadline: a build blocked opening a FIFO would otherwise hang the suite.
    done = subprocess.run([*build, str(out)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr
    assert subprocess.run([*build, str(fresh)], capture_output=True, cwd=ROOT, timeout=120).returncode == 0
    assert _files(tree) == _files(fresh / "lab")
    assert (tree / MANIFEST).is_file() and not (tree / MANIFEST).is_symlink()
    assert read_manifest(tree) is not None
