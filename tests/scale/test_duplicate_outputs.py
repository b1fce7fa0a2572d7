"""Two files of one build with one name (a server named like a server profile's mlxconfig script) stop the
build before anything is swapped in: neither is silently lost, and nothing is ever written through a hard link
into the live tree (a build not seeded by the preseed, as deploy, verify, audit and rollback run it, once took
the previous build's file by a link and then wrote the second file with that name into it)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from netfab.cli.pipeline import load_plan
from netfab.render import build as build_module
from netfab.render.build import DuplicateOutput, build

ROOT = Path(__file__).resolve().parents[2]
Cli = Callable[..., tuple[int, str]]


def _intent(tmp_path: Path, server_naming: str) -> Path:
    data = yaml.safe_load((ROOT / "intent" / "lab.yaml").read_text(encoding="utf-8"))
    data["naming"]["server"] = server_naming
    data["servers"] = {
        "profile": "p1",
        "profiles": {
            "p1": {
                "gpus": 2,
                "nics": [
                    {"netdev": "eth0", "rdma_device": "mlx5_0", "pci": "0000:18:00.0", "networks": ["backend"],
                     "rail": 1},
                    {"netdev": "eth1", "rdma_device": "mlx5_1", "pci": "0000:19:00.0", "networks": ["backend"],
                     "rail": 2},
                ],
            }
        },
    }  # fmt: skip
    path = tmp_path / f"{server_naming.split('{')[0] or 'plain'}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _tree(root: Path) -> dict[str, tuple[int, bytes]]:
    return {str(p.relative_to(root)): (p.stat().st_ino, p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("workers", [1, 2])
def test_two_files_with_one_name_stop_the_build_and_leave_the_live_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    out = tmp_path / "out"
    build(load_plan([_intent(tmp_path, "host{index}")], bgp=False).plan, out)
    live = next(out.iterdir())
    before = _tree(live)
    assert "hosts/mlxconfig-p1.sh" in before
    if workers == 2:
        monkeypatch.setattr(build_module, "_PARALLEL_THRESHOLD", 1)  # the forked render, on this small fabric
    clashing = load_plan([_intent(tmp_path, "mlxconfig-p{index}")], bgp=False).plan
    with pytest.raises(DuplicateOutput, match=r"hosts/mlxconfig-p1\.sh"):
        build(clashing, out, workers=workers)  # no preseed: what deploy, verify, audit and rollback run
    assert _tree(live) == before  # every file's inode and bytes, the old script's included
    assert [p.name for p in out.iterdir()] == [live.name]  # its staging tree is gone


def test_the_cli_reports_two_files_with_one_name_as_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "netfab.cli.app", "build", str(_intent(tmp_path, "mlxconfig-p{index}")), "-o", str(out)],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "both named hosts/mlxconfig-p1.sh" in done.stderr and "rename" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists() or not any(out.iterdir())
