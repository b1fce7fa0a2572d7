"""A rebuild renders only the switches and servers whose inputs changed (per-file input digests in the build
manifest), and its tree is byte-identical to a build into an empty directory; the digests do not depend on
PYTHONHASHSEED."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from netfab.cli.pipeline import load_plan
from netfab.core.digest_canonical import CanonicalDigest, NotCanonical
from netfab.design.plan import FabricPlan
from netfab.render import build as build_module
from netfab.render.manifest import MANIFEST, read_manifest

ROOT = Path(__file__).resolve().parents[2]
RAIL = ROOT / "intent" / "rail-4su.yaml"


def _plan(path: Path = RAIL) -> FabricPlan:
    return load_plan([path]).plan


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts the switch and server renders the build does (serial builds: the counter is this process's)."""
    counts: Counter[str] = Counter()
    real_device, real_server = build_module.render_device, build_module.render_server

    def device(dev: Any, context: Any = None) -> dict[str, str]:
        counts["switch"] += 1
        return real_device(dev, context)

    def server(srv: Any, plan: Any, context: Any = None) -> dict[str, str]:
        counts["server"] += 1
        return real_server(srv, plan, context)

    monkeypatch.setattr(build_module, "render_device", device)
    monkeypatch.setattr(build_module, "render_server", server)
    return counts


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != MANIFEST}


def _same_as_a_fresh_build(plan: FabricPlan, tree: Path, scratch: Path) -> None:
    build_module.build(plan, scratch, workers=1)
    fresh = scratch / plan.name
    assert _files(tree) == _files(fresh)
    a, b = read_manifest(tree), read_manifest(fresh)
    assert a is not None and b is not None
    assert {f: (r.digest, r.inputs) for f, r in a.files.items()} == {
        f: (r.digest, r.inputs) for f, r in b.files.items()
    }


def test_a_switch_only_knob_renders_only_the_switches(tmp_path: Path, renders: Counter[str]) -> None:
    build_module.build(_plan(), tmp_path / "out", workers=1)
    assert renders == {"switch": 48, "server": 128}
    knob = tmp_path / "rail-4su.yaml"
    text = RAIL.read_text()
    assert "detect: 200ms" in text
    knob.write_text(text.replace("detect: 200ms", "detect: 300ms"))
    renders.clear()
    plan = _plan(knob)
    result = build_module.build(plan, tmp_path / "out", workers=1)
    assert renders == {"switch": 48}  # every switch has the watchdog; no host script reads it
    assert result.reused == 128 + 3  # nor the three inventory files
    assert len([f for f in result.written if f.startswith("configs/")]) == 48
    assert "cabling.csv" not in result.written  # written out again, but kept by its bytes: the previous inode
    renders.clear()
    again = build_module.build(plan, tmp_path / "out", workers=1)  # the same inputs (no CLI up-to-date check)
    assert renders == {} and again.reused == 179 and again.written == []
    _same_as_a_fresh_build(plan, tmp_path / "out" / "rail-4su", tmp_path / "fresh")


def test_one_device_changed_renders_that_device_alone(tmp_path: Path, renders: Counter[str]) -> None:
    build_module.build(_plan(), tmp_path / "out", workers=1)
    plan = _plan()
    leaf = plan.devices["su2-leaf3"]
    leaf.interfaces[0].mtu = 9000  # as a per-port override in the intent would
    server = plan.servers[5]
    server.nics[0] = dataclasses.replace(server.nics[0], address="10.250.0.9/31")
    renders.clear()
    result = build_module.build(plan, tmp_path / "out", workers=1)
    assert renders == {"switch": 1, "server": 1}
    assert {f for f in result.written if f.startswith(("configs/", "hosts/"))} == {
        *(f for f in result.manifest.files if f.startswith("configs/su2-leaf3.")),  # type: ignore[union-attr]
        f"hosts/{server.name}.sh",
    }
    assert result.reused == 176 - 2 + 3  # the inventory does not show a port's MTU
    _same_as_a_fresh_build(plan, tmp_path / "out" / "rail-4su", tmp_path / "fresh")


def test_the_fabric_wide_files_render_when_what_they_show_changes(tmp_path: Path) -> None:
    build_module.build(_plan(), tmp_path / "out", workers=1)
    plan = _plan()
    plan.devices["spine3"].loopback = "10.255.255.3"  # in the inventory
    link = plan.links[7]
    plan.links[7] = dataclasses.replace(link, cable_m=link.cable_m + 1)  # in the cabling plan
    result = build_module.build(plan, tmp_path / "out", workers=1)
    assert {"cabling.csv", "inventory/hosts.yaml"} <= set(result.written)
    assert result.reused == 176 - 1  # all but spine3 and the inventory (one digest for its 3 files)
    _same_as_a_fresh_build(plan, tmp_path / "out" / "rail-4su", tmp_path / "fresh")


def test_a_file_not_as_recorded_is_rendered_again(tmp_path: Path, renders: Counter[str]) -> None:
    plan = _plan()
    build_module.build(plan, tmp_path / "out", workers=1)
    tree = tmp_path / "out" / "rail-4su"
    script = next((tree / "hosts").glob("*.sh"))
    original = script.read_bytes()
    script.write_bytes(original + b"# hand edit\n")
    renders.clear()
    build_module.build(plan, tmp_path / "out", workers=1)
    assert renders == {"server": 1}
    assert script.read_bytes() == original


def test_a_parallel_rebuild_reuses_like_a_serial_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = _plan()
    build_module.build(plan, tmp_path / "out", workers=1)
    monkeypatch.setattr(build_module, "_PARALLEL_THRESHOLD", 1)
    plan.devices["spine2"].interfaces[1].mtu = 9000
    result = build_module.build(plan, tmp_path / "out", workers=2)
    assert result.reused == 175 + 3
    assert [f for f in result.written if f.startswith("configs/")] == ["configs/spine2.yaml"]
    _same_as_a_fresh_build(plan, tmp_path / "out" / "rail-4su", tmp_path / "fresh")


_SEED_PROBE = """
import hashlib, sys
from pathlib import Path
from netfab.cli.pipeline import load_plan
from netfab.core.digest_canonical import CanonicalDigest
from netfab.render.device import device_context, server_context
from netfab.render.inputs import RenderInputs
plan = load_plan([Path(sys.argv[1])]).plan
inputs = RenderInputs("code")
rows = [inputs.device(d, device_context(d)) for d in plan.devices.values()]
rows += [inputs.server(s, server_context(s, plan)) for s in plan.servers]
assert None not in rows
rows.append(CanonicalDigest().digest({"leaf", "spine", "superspine", "rail", "plane", "pod"}))
# A set deep inside a record a template reads (the pickle would write it in hash order).
leaf = next(iter(plan.devices.values()))
rows.append(CanonicalDigest().digest({"dev": leaf, "data": {"roles": [frozenset({"leaf", "spine", "rail", "pod"})]}}))
print(hashlib.sha256(" ".join(rows).encode()).hexdigest())
"""


def test_the_digests_do_not_depend_on_the_hash_seed() -> None:
    out = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-c", _SEED_PROBE, str(RAIL)], env=env, capture_output=True, text=True, check=True
        )
        out.add(proc.stdout.strip())
    assert len(out) == 1 and len(next(iter(out))) == 64


@dataclasses.dataclass(frozen=True)
class _Point:
    x: object
    y: object = None


def test_the_canonical_form_tells_apart_what_a_template_tells_apart() -> None:
    c = CanonicalDigest()
    assert c.digest({"a": 1, "b": 2}) != c.digest({"b": 2, "a": 1})  # iteration order is an input
    assert len({c.digest(v) for v in (1, 1.0, True, "1", (1,), [1], None)}) == 7
    assert c.digest(frozenset({"x", "y"})) == c.digest(frozenset({"y", "x"}))
    assert c.digest(_Point(1)) != c.digest(_Point(2)) and c.digest(_Point(1)) == CanonicalDigest().digest(_Point(1))
    shared = _Point((1, 2))
    first = c.digest([shared, _Point(3)])  # the memo of `shared` must not change a later digest
    assert c.digest([shared, _Point(3)]) == first == CanonicalDigest().digest([_Point((1, 2)), _Point(3)])
    assert c.digest([_Point(1), _Point(2)]) != c.digest([_Point(1), _Point(3)])
    with pytest.raises(NotCanonical):
        c.digest(_Point(Path("/")))


def test_every_platform_record_has_a_canonical_form() -> None:
    """A record field of a type the digest cannot read would make every switch of that platform render on every
    build (correct, but silently slow): this says so at once."""
    from netfab.capabilities import capabilities_for
    from netfab.platforms import platform_names, platform_spec
    from netfab.render.environment import release_data

    c = CanonicalDigest()
    for name in platform_names():
        spec = platform_spec(name)
        for version in (None, *spec.release_data):
            c.digest(spec, capabilities_for(name, version), release_data(name, version))


@dataclasses.dataclass(slots=True)
class _Row:
    """A slotted record: a list of them is written as rows of values."""

    x: object
    y: object = None


@dataclasses.dataclass(slots=True)
class _Twin:
    """_Row's fields under another class: the same row of values must not give the same digest."""

    x: object
    y: object = None


def test_a_change_deep_in_a_plan_changes_its_digest() -> None:
    """Every field of every record reached from the context is written: interfaces and BGP neighbours go as
    rows of values, shared records (QoS) by their own digest, template data dicts by theirs."""
    from netfab.render.device import device_context

    plan = _plan()
    dev = plan.devices["su2-leaf3"]
    c = CanonicalDigest()
    before = c.digest(device_context(dev))
    dev.interfaces[3].headroom_bytes += 1
    changed = CanonicalDigest().digest(device_context(dev))
    dev.interfaces[3].headroom_bytes -= 1
    assert changed != before == CanonicalDigest().digest(device_context(dev))
    assert dev.bgp is not None
    neighbor = dev.bgp.neighbors[0]
    dev.bgp.neighbors[0] = dataclasses.replace(neighbor, remote_as=neighbor.remote_as + 1)
    assert CanonicalDigest().digest(device_context(dev)) != before
    dev.bgp.neighbors[0] = neighbor
    context = device_context(dev)
    context["data"] = {**context["data"], "extra": 1}  # type: ignore[dict-item]
    assert CanonicalDigest().digest(context) != before
    assert c.digest(device_context(dev)) == before  # the memo of the shared parts changed nothing


def test_rows_and_sets_are_told_apart() -> None:
    c = CanonicalDigest()
    assert c.digest([_Row(1, 2), _Row(3)]) != c.digest([_Twin(1, 2), _Twin(3)])  # one class of rows each
    assert c.digest([_Row(1, 2)]) != c.digest([(1, 2)]) != c.digest([[1, 2]]) != c.digest([1, 2])
    assert c.digest([_Row(1, 2)]) != c.digest((_Row(1, 2),)) != c.digest([_Row(1), _Row(2)])
    assert c.digest([_Row(1), _Twin(1)]) != c.digest([_Twin(1), _Row(1)])
    assert c.digest([_Row(frozenset({"a", "b"}))]) != c.digest([_Row(frozenset({"a", "c"}))])
    assert c.digest(_Point(frozenset({1, 2}))) != c.digest(_Point((1, 2))) != c.digest(_Point([1, 2]))
    assert c.digest(_Point(frozenset({1, 2}))) != c.digest(_Point(frozenset({1, 3})))
    assert c.digest(_Point({"a": {"b"}})) != c.digest(_Point({"a": {"c"}}))
    assert len({c.digest(_Point(v)) for v in (1, 1.0, True, "1", None)}) == 5
    with pytest.raises(NotCanonical):
        c.digest([_Row(1), _Row(Path("/"))])  # a row's value is checked like any other
    with pytest.raises(NotCanonical):
        c.digest({"f": len})
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(NotCanonical):
        c.digest(loop)
