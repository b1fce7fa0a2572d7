"""`netfab build`: deterministic, atomic, filtered output; the CLI's exit codes."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from netfab.design import design
from netfab.intent import Intent
from netfab.render import build as build_module
from netfab.render.build import BuildSelection, build
from netfab.render.manifest import MANIFEST

ROOT = Path(__file__).resolve().parents[2]
INTENTS = ROOT / "intent"


def tree_digest(root: Path) -> dict[str, str]:
    """Every output file's digest; the build manifest is left out: it records when and where (inode) each file
    was written, which two builds never share."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }


def plan_of(name: str):  # type: ignore[no-untyped-def]
    return design(Intent.model_validate(yaml.safe_load((INTENTS / name).read_text())))


def test_rebuild_is_byte_identical(tmp_path: Path) -> None:
    plan = plan_of("rail-4su.yaml")
    build(plan, tmp_path / "a")
    build(plan_of("rail-4su.yaml"), tmp_path / "b", workers=2)
    a, b = tree_digest(tmp_path / "a" / "rail-4su"), tree_digest(tmp_path / "b" / "rail-4su")
    assert a == b
    assert "cabling.csv" in a and "inventory/hosts.yaml" in a
    assert len([k for k in a if k.startswith("configs/")]) == 48
    assert len([k for k in a if k.startswith("hosts/su")]) == 128
    # Plus the server profile's NCCL/RCCL environment and NIC firmware script.
    assert {"hosts/nccl-generic.conf", "hosts/rccl-generic.conf", "hosts/mlxconfig-generic.sh"} <= set(a)


def test_inventory_has_no_secrets_and_knows_every_device(tmp_path: Path) -> None:
    plan = plan_of("lab.yaml")
    build(plan, tmp_path)
    hosts = yaml.safe_load((tmp_path / "lab" / "inventory" / "hosts.yaml").read_text())
    assert set(hosts) == set(plan.devices)
    assert hosts["leaf1"]["data"]["rail"] == 1 and hosts["leaf1"]["platform"] == "frr"
    text = "".join(p.read_text() for p in (tmp_path / "lab" / "inventory").iterdir())
    assert "password" not in text and "username" not in text


def test_a_render_failure_keeps_the_previous_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = plan_of("lab.yaml")
    build(plan, tmp_path)
    before = tree_digest(tmp_path / "lab")
    calls = {"n": 0}
    real = build_module.render_device

    def failing(dev, context=None):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("template blew up half-way")
        return real(dev, context)

    monkeypatch.setattr(build_module, "render_device", failing)
    for dev in plan.devices.values():  # a changed input, so the rebuild renders every switch again
        dev.hash_seed += 1
    with pytest.raises(RuntimeError):
        build(plan, tmp_path)
    assert tree_digest(tmp_path / "lab") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lab"]


def test_device_filter_rewrites_only_matching_configs(tmp_path: Path) -> None:
    plan = plan_of("lab.yaml")
    build(plan, tmp_path)
    spine = tmp_path / "lab" / "configs" / "spine1.conf"
    spine.write_text("hand edit\n")
    result = build(plan, tmp_path, BuildSelection(device_glob="leaf*"))
    assert sorted(result.devices) == ["leaf1", "leaf2", "leaf3", "leaf4"] and result.servers == []
    assert spine.read_text() == "hand edit\n"  # not selected: kept as it was
    assert "router bgp" in (tmp_path / "lab" / "configs" / "leaf1.conf").read_text()


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "netfab.cli.app", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def test_cli_build_exit_codes(tmp_path: Path) -> None:
    ok = run_cli("build", str(INTENTS / "lab.yaml"), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "built 6 switches and 4 servers" in ok.stderr
    missing = run_cli("build", str(tmp_path / "nope.yaml"), cwd=tmp_path)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("fabric: {name: x}\nqos:\n  classes:\n    - {name: a, priority: 9}\n")
    failed = run_cli("build", str(bad), cwd=tmp_path)
    assert failed.returncode == 1 and "bad.yaml:4" in failed.stderr and "Traceback" not in failed.stderr
    usage = run_cli("build", str(INTENTS / "lab.yaml"), "--platform", "ios", cwd=tmp_path)
    assert usage.returncode == 2


def test_a_minimal_intent_lints_clean_and_builds(tmp_path: Path) -> None:
    """Defaults are common practice: a fabric name alone is a valid, buildable fabric."""
    intent = tmp_path / "mini.yaml"
    intent.write_text("fabric: {name: mini}\n")
    lint = run_cli("lint", str(intent), "--strict", cwd=tmp_path)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    built = run_cli("build", str(intent), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "out" / "mini" / "configs" / "su1-leaf1.cfg").is_file()


def test_a_parallel_build_writes_back_while_its_workers_render(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The staging tree is flushed during the render (netfab.render.writer.writing_back), and the flusher has
    stopped before the tree is committed."""
    import contextlib
    from collections.abc import Iterator

    seen: list[str] = []

    @contextlib.contextmanager
    def recording(directory: Path) -> Iterator[None]:
        seen.append(f"start {directory.name.startswith('.rail-4su.tmp-')}")
        yield
        seen.append(f"stop {directory.is_dir()}")  # still the staging tree: not yet swapped in

    monkeypatch.setattr(build_module, "_PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(build_module, "writing_back", recording)
    build(plan_of("rail-4su.yaml"), tmp_path, workers=2)
    assert seen == ["start True", "stop True"]
    assert (tmp_path / "rail-4su" / "cabling.csv").is_file()


def test_a_render_slice_collects_the_cycles_it_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """The collector is off while a worker renders a slice; the young-generation collection after it must
    still free any reference cycle the slice made."""
    import weakref

    class Node:
        peer: object = None

    made: list[weakref.ref[Node]] = []

    class Slice:
        def switch(self, device: object) -> None:
            node = Node()
            node.peer = node
            made.append(weakref.ref(node))

        def server(self, server: object, plan: object) -> None:
            raise AssertionError("no servers in this slice")

        def result(self) -> str:
            return "rendered"

    class Writer:
        def fresh(self) -> Slice:
            return Slice()

    monkeypatch.setattr(build_module, "_JOB", (None, ["leaf1", "leaf2"], [], Writer()))
    assert build_module._render_slice((0, 2, 0, 0)) == "rendered"
    assert len(made) == 2 and all(ref() is None for ref in made), "a cycle made in the slice outlived it"
