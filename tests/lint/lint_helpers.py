"""Shared by the lint tests: small valid intents as data, deep-merge patches, and lint-a-dict."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from netfab.lint import LintResult, lint_paths

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "intent").glob("*.yaml"))
DELETE = object()

ROCE = {"name": "roce", "kind": "roce", "dscp": [26], "priority": 3, "lossless": True, "weight": 50,
        "ecn": {"kmin": "150KB", "kmax": "1500KB", "pmax": 100}}  # fmt: skip
CNP = {"name": "cnp", "kind": "cnp", "dscp": [48], "priority": 6, "scheduling": "strict"}
DEFAULT = {"name": "default", "kind": "default", "priority": 0, "weight": 50}

# 2 SUs x 4 servers x 2 GPUs on SONiC (the platform with every capability): clean under every rule.
RAIL: dict[str, Any] = {
    "version": 1,
    "fabric": {"name": "t"},
    "topology": {
        "style": "rail_optimized",
        "scalable_units": 2,
        "servers_per_su": 4,
        "rails": 2,
        "servers": {"gpus_per_server": 2, "nic_speed": "400G", "cable_m": 3},
        "leaf": {
            "platform": "sonic",
            "ports": 16,
            "uplinks": 4,
            "uplink_speed": "400G",
            "uplink_cable_m": 30,
            "oversubscription": "1:1",
        },
        "spine": {"platform": "sonic", "count": 4, "ports": 16},
    },
    "qos": {
        "classes": [ROCE, CNP, DEFAULT],
        "pfc": {"watchdog": {"detect": "200ms", "restore": "400ms", "action": "drop"}},
    },
}

# 2 pods x 4 racks x 1 server x 8 GPUs, 2 planes: 4 spines per pod, 4 superspines (2 per plane).
CLOS3: dict[str, Any] = {
    **RAIL,
    "topology": {
        "style": "clos3",
        "pods": 2,
        "racks_per_pod": 4,
        "servers_per_rack": 1,
        "planes": 2,
        "servers": {"gpus_per_server": 8, "nic_speed": "400G", "cable_m": 3},
        "leaf": {"platform": "sonic", "ports": 16, "uplinks": 8, "uplink_speed": "400G", "uplink_cable_m": 30},
        "spine": {
            "platform": "sonic",
            "count": 4,
            "ports": 16,
            "uplinks": 4,
            "uplink_speed": "400G",
            "uplink_cable_m": 100,
            "oversubscription": "2:1",
        },
        "superspine": {"platform": "sonic", "count": 4, "ports": 16},
    },
}


def merged(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """`base` with `patch` deep-merged: mappings merge, other values replace, DELETE removes the key."""
    out = copy.deepcopy(base)
    for key, value in patch.items():
        if value is DELETE:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def write_intent(data: dict[str, Any], path: Path) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def lint_data(data: dict[str, Any], tmp_path: Path, name: str = "intent.yaml") -> LintResult:
    return lint_paths([write_intent(data, tmp_path / name)])


def rule_ids(result: LintResult) -> set[str]:
    return {f.rule_id for f in result.findings}
