"""Check rendered CLI against hier_config, the parser the audit/deploy stages use.

Three properties, per platform:
- nothing lost: every config line we wrote comes back from the parsed tree under the same parents
  (indented CLI), or as the same flat line (Junos `set` form);
- remediation from an empty or minimal running config contains every intended line;
- running == intended gives an empty remediation (idempotence: no spurious negations).

Comment lines (`!` on EOS/NX-OS, `#` in Junos set files) are not configuration: EOS and NX-OS drivers strip
them, and for Junos they are removed here before parsing because hier_config's Junos preprocessor would turn
them into `set # ...` lines (deploy must strip them the same way; `load set` treats them as comments).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from copy import deepcopy
from functools import cache
from pathlib import Path as FsPath
from typing import Any

import yaml
from hier_config import HConfig, Platform, WorkflowRemediation, get_hconfig
from hier_config.child import HConfigChild

from netfab.design import DevicePlan, FabricPlan, design
from netfab.intent.model import Intent
from netfab.render.device import render_device

REPO = FsPath(__file__).resolve().parents[2]
GOLDEN = FsPath(__file__).parent / "golden"

Path = tuple[str, ...]

INDENT: dict[Platform, int] = {Platform.ARISTA_EOS: 3, Platform.CISCO_NXOS: 2}
COMMENT: dict[Platform, str] = {Platform.ARISTA_EOS: "!", Platform.CISCO_NXOS: "!", Platform.JUNIPER_JUNOS: "#"}
TERMINATORS = frozenset({"end"})


def config_lines(platform: Platform, text: str) -> list[str]:
    """The configuration lines of a rendered file, comments and terminators removed, indentation kept."""
    prefix = COMMENT[platform]
    return [
        line
        for line in text.splitlines()
        if line.strip() and not line.strip().startswith(prefix) and line.strip() not in TERMINATORS
    ]


def rendered_paths(platform: Platform, text: str) -> list[Path]:
    """Each config line with its parents, from our own indentation (the renderer's intent)."""
    lines = config_lines(platform, text)
    if platform is Platform.JUNIPER_JUNOS:
        return [(line.strip(),) for line in lines]
    width = INDENT[platform]
    stack: list[str] = []
    paths: list[Path] = []
    for line in lines:
        spaces = len(line) - len(line.lstrip(" "))
        if spaces % width:
            raise AssertionError(f"indent of {spaces} is not a multiple of {width}: {line!r}")
        depth = spaces // width
        if depth > len(stack):
            raise AssertionError(f"line indented deeper than its parent: {line!r}")
        stack = [*stack[:depth], line.strip()]
        paths.append(tuple(stack))
    return paths


def _walk(children: Iterator[HConfigChild], parent: Path) -> Iterator[Path]:
    for child in children:
        path = (*parent, child.text)
        yield path
        yield from _walk(iter(child.children), path)


def tree_paths(config: HConfig) -> list[Path]:
    return list(_walk(iter(config.children), ()))


def parse(platform: Platform, text: str) -> HConfig:
    return get_hconfig(platform, "\n".join(config_lines(platform, text)) + "\n")


def assert_nothing_lost(platform: Platform, text: str) -> HConfig:
    """Every rendered line survives parsing, under the same parents, exactly once."""
    ours = rendered_paths(platform, text)
    dupes = sorted({p for p in ours if ours.count(p) > 1})
    assert not dupes, f"duplicate lines would be merged by the device/parser: {dupes[:5]}"
    tree = parse(platform, text)
    theirs = tree_paths(tree)
    missing = [p for p in ours if p not in set(theirs)]
    extra = [p for p in theirs if p not in set(ours)]
    assert not missing, f"{len(missing)} rendered lines lost or re-parented by hier_config, e.g. {missing[:5]}"
    assert not extra, f"hier_config invented lines: {extra[:5]}"
    return tree


def remediation_lines(platform: Platform, running: str, intended: str) -> list[Path]:
    wf = WorkflowRemediation(parse(platform, running), parse(platform, intended))
    return tree_paths(wf.remediation_config)


def assert_remediation(platform: Platform, intended: str, minimal_running: str) -> None:
    """From nothing (or a bare box) the remediation carries every intended line; from itself, none."""
    want = set(rendered_paths(platform, intended))
    for running in ("", minimal_running):
        got = set(remediation_lines(platform, running, intended))
        missing = sorted(want - got)
        assert not missing, f"remediation from {running[:30]!r} misses {len(missing)} lines, e.g. {missing[:5]}"
    assert remediation_lines(platform, intended, intended) == [], "running == intended must remediate to nothing"


def assert_roundtrip(platform: Platform, text: str, minimal_running: str) -> None:
    assert_nothing_lost(platform, text)
    assert_remediation(platform, text, minimal_running)


# --- plans and golden files shared by the per-platform tests ----------------------------------------------


@cache
def _example(name: str) -> dict[str, Any]:
    with (REPO / "intent" / name).open(encoding="utf-8") as fh:
        data: dict[str, Any] = yaml.safe_load(fh)
    return data


def fabric_for(platform: str, example: str = "lab.yaml", **overrides: Any) -> FabricPlan:
    """An example intent re-targeted at `platform`; overrides are dotted paths, e.g. underlay__addressing."""
    data = deepcopy(_example(example))
    for tier in ("leaf", "spine", "superspine"):
        if tier in data["topology"]:
            data["topology"][tier]["platform"] = platform
    for dotted, value in overrides.items():
        node = data
        *parents, leaf = dotted.split("__")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return design(Intent.model_validate(data))


def lab_pair(platform: str, addressing: str, **overrides: Any) -> dict[str, DevicePlan]:
    """The lab fabric's first leaf and first spine: the golden-sized sample. The lab intent turns the PFC
    watchdog off because its FRR switches have none; switch platforms get the intent default back."""
    overrides.setdefault("qos__pfc", {})
    plan = fabric_for(platform, underlay__addressing=addressing, **overrides)
    return {role: plan.devices_of(role)[0] for role in ("leaf", "spine")}


def render_text(dev: DevicePlan) -> str:
    (text,) = render_device(dev).values()
    return text


def check_golden(platform: str, name: str, text: str) -> None:
    """Compare with tests/render/golden/<platform>/<name>; NETFAB_UPDATE_GOLDEN=1 rewrites it instead."""
    path = GOLDEN / platform / name
    if os.environ.get("NETFAB_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.is_file(), f"missing golden {path}; run with NETFAB_UPDATE_GOLDEN=1 and review it line by line"
    assert text == path.read_text(encoding="utf-8"), f"{path} differs from the rendered config"
