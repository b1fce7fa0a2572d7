"""No renderer emits a YAML or JSON document with a duplicate key.

PyYAML and json both read a duplicate key silently as "the last one wins", so a template that writes
`'3':` twice under `traffic-class` (two classes on one priority, issue 13) produces a file every loader
accepts and every device reads differently. Here every YAML/JSON file netfab renders - switch configs and
the Nornir inventory - of every example intent with every switch tier on every platform (at its newest
release, and at the releases whose templates change shape) is parsed with loaders that refuse duplicates.

Each example is adapted to the platform the way a user moving it would: features the platform lacks (extra
hash fields, adaptive routing, BGP unnumbered on NX-OS, a watchdog on Linux) are dropped, so every platform's
templates run on every example's topology and QoS. A combination lint still refuses is skipped with the rule
ids. Every role renders its first and last devices by name: a role's devices share templates and differ only
in names, ports and addresses, which the sample covers at both ends.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from netfab.design import design
from netfab.design.plan import DevicePlan, FabricPlan
from netfab.intent import Intent
from netfab.lint import lint_source
from netfab.load import load_intent_source
from netfab.platforms import platform_names
from netfab.render.device import render_device
from netfab.render.environment import UnsupportedFeature
from netfab.render.inventory import inventory_files

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "intent").glob("*.yaml"))
# Releases whose templates differ in shape (NVUE <= 5.14 / >= 5.15; SONiC buffer model by release); None = newest.
RELEASES: dict[str, tuple[str | None, ...]] = {"nvidia_cumulus": (None, "5.9.1", "5.14.0", "5.15.0"),
                                                "sonic": (None, "202411", "202511")}  # fmt: skip
SAMPLE = 2
BASE_HASH = ["src_ip", "dst_ip", "ip_protocol", "src_port", "dst_port"]


class DuplicateKey(ValueError):
    pass


class StrictLoader(yaml.CSafeLoader):
    """The C SafeLoader, refusing a mapping with the same key twice (PyYAML keeps the last one)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)  # type: ignore[no-untyped-call]
            if key in seen:
                raise DuplicateKey(
                    f"duplicate key {key!r} at line {key_node.start_mark.line + 1} (first at line {seen[key].line + 1})"
                )
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep)


def strict_yaml(text: str) -> Any:
    return yaml.load(text, Loader=StrictLoader)  # a CSafeLoader subclass: no arbitrary objects


def _no_duplicate_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(f"duplicate key {key!r}")
        out[key] = value
    return out


def strict_json(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_no_duplicate_pairs)


def strict_parse(relpath: str, text: str) -> bool:
    """Parse a rendered file if it is YAML or JSON (True), raising DuplicateKey; other formats: False."""
    if relpath.endswith((".yaml", ".yml")):
        strict_yaml(text)
        return True
    if relpath.endswith(".json"):
        strict_json(text)
        return True
    return False


# --- the loaders themselves must be able to fail -------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("nvue.yaml", "qos:\n  traffic-class:\n    '3': {bw-percent: 40}\n    '3': {bw-percent: 20}\n"),
        ("nested.yml", "a:\n  - b: 1\n    b: 2\n"),
        ("config_db.json", '{"QUEUE": {"Ethernet0|3": {}, "Ethernet0|3": {"scheduler": "x"}}}'),
    ],
)
def test_strict_loaders_refuse_duplicates(name: str, text: str) -> None:
    with pytest.raises(DuplicateKey):
        strict_parse(name, text)


def test_strict_loaders_accept_distinct_keys() -> None:
    assert strict_parse("a.yaml", "a: {'3': 1, 3: 2}\n")  # a string and an int key are different keys
    assert strict_parse("a.json", '{"a": {"b": 1}, "b": {"a": 1}}')
    assert not strict_parse("a.cfg", "not parsed")


# --- every example x platform x release ------------------------------------------------------------------------


def _combos() -> Iterator[tuple[Path, str, str | None]]:
    for example in EXAMPLES:
        for platform in platform_names():
            for release in RELEASES.get(platform, (None,)):
                yield example, platform, release


COMBOS = list(_combos())


@cache
def _example_data(example: Path) -> dict[str, Any]:
    with example.open(encoding="utf-8") as fh:
        data: dict[str, Any] = yaml.safe_load(fh)
    return data


def _on_platform(example: Path, platform: str, release: str | None, tmp_path: Path) -> Path:
    data = copy.deepcopy(_example_data(example))
    for tier in ("leaf", "spine", "superspine"):
        spec = data.get("topology", {}).get(tier)
        if spec is None:
            continue
        spec["platform"] = platform
        spec.pop("model", None)  # a switch model belongs to its own platform
        spec.pop("hardware", None)
        if release is None:
            spec.pop("os_version", None)
        else:
            spec["os_version"] = release
    lb = data.setdefault("load_balancing", {})
    lb.update(hash_fields=list(BASE_HASH), adaptive_routing=False, packet_spraying=False)
    lb.pop("hash_seed", None)
    if platform == "cisco_nxos":
        data.setdefault("underlay", {})["addressing"] = "p2p31"  # NX-OS has no BGP unnumbered here (CAP008)
    if platform == "frr":
        data.setdefault("qos", {}).setdefault("pfc", {})["watchdog"] = None  # Linux has no PFC watchdog (CAP005)
    path = tmp_path / example.name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _sample(plan: FabricPlan) -> list[DevicePlan]:
    devices = sorted(plan.devices.values(), key=lambda d: (d.role, d.name))
    picked: list[DevicePlan] = []
    for role in sorted({d.role for d in devices}):
        of_role = [d for d in devices if d.role == role]
        picked.extend(of_role[:SAMPLE] + of_role[-SAMPLE:] if len(of_role) > 2 * SAMPLE else of_role)
    return picked


@pytest.mark.parametrize(
    ("example", "platform", "release"), COMBOS, ids=[f"{e.stem}-{p}-{r or 'newest'}" for e, p, r in COMBOS]
)
def test_rendered_documents_have_no_duplicate_keys(
    example: Path, platform: str, release: str | None, tmp_path: Path
) -> None:
    if example.stem == "clos3-100k":
        pytest.skip("clos3-100k is clos3-24k grown: designing 98k GPUs per platform adds minutes, no new shape")
    source = load_intent_source([_on_platform(example, platform, release, tmp_path)])
    linted = lint_source(source)
    errors = [f"{f.rule_id}" for f in linted.findings if f.severity.value == "error"]
    if errors or linted.intent is None:
        pytest.skip(f"lint refuses {example.stem} on {platform} {release or ''}: {', '.join(sorted(set(errors)))}")
    intent: Intent = linted.intent
    plan = design(intent, str(example))
    parsed = 0
    for relpath, text in inventory_files(plan).items():
        parsed += _check(relpath, text)
    for device in _sample(plan):
        try:
            files = render_device(device)
        except UnsupportedFeature as exc:  # lint passed, so this is the capability-parity test's business
            pytest.fail(f"lint passed but {device.name} was refused: {exc}")
        for relpath, text in files.items():
            parsed += _check(relpath, text)
    assert parsed > 0, "no YAML or JSON output was checked (the inventory at least is YAML)"


def _check(relpath: str, text: str) -> bool:
    try:
        return strict_parse(relpath, text)
    except DuplicateKey as exc:
        pytest.fail(f"{relpath}: {exc}")


# --- the root cause: two classes on one priority ---------------------------------------------------------------


def test_renderer_refuses_two_classes_on_one_queue(tmp_path: Path) -> None:
    """Designed without lint (a plan built in code), the NVUE renderer refuses instead of writing `'3':` twice."""
    data = copy.deepcopy(_example_data(REPO / "intent" / "rail-4su.yaml"))
    storage = {"name": "storage", "dscp": [24], "priority": 3, "lossless": True, "weight": 10,
               "ecn": {"kmin": "300KB", "kmax": "3000KB"}}  # fmt: skip
    data["qos"]["classes"].append(storage)
    intent = Intent.model_validate(data)
    lint = lint_source(load_intent_source([_write(data, tmp_path / "dup.yaml")]))
    assert "REV001" in {f.rule_id for f in lint.findings}, "lint must name the root cause"
    plan = design(intent, "dup.yaml")
    device = next(d for d in plan.devices.values() if d.platform == "nvidia_cumulus")
    with pytest.raises(UnsupportedFeature, match="both on queue 3"):
        render_device(device)


def _write(data: dict[str, Any], path: Path) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path
