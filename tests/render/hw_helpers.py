"""Shared by the switch-model render tests: a small rail fabric from a dict, linted clean and designed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from netfab.design import FabricPlan, design
from netfab.intent import Intent
from netfab.lint import LintResult, lint_paths
from netfab.render import render_device


def rail(leaf: dict[str, Any], spine: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "fabric": {"name": "hw"},
        "topology": {"style": "rail_optimized", "scalable_units": 1, "servers_per_su": 4, "leaf": leaf, "spine": spine},
        **extra,
    }


def lint_of(intent: dict[str, Any], directory: Path) -> LintResult:
    path = directory / "intent.yaml"
    path.write_text(yaml.safe_dump(intent), encoding="utf-8")
    return lint_paths([path])


def plan_of(intent: dict[str, Any], directory: Path, lint: bool = True) -> FabricPlan:
    """The designed plan; lint=False designs past lint errors, to test the templates' own refusals."""
    result = lint_of(intent, directory)
    if not lint:
        return design(Intent.model_validate(intent))
    assert result.intent is not None, [f.message for f in result.findings]
    assert not [f for f in result.findings if f.severity == "error"], [f.message for f in result.findings]
    return design(result.intent, str(directory / "intent.yaml"))


def primary(plan: FabricPlan, device: str) -> str:
    """The device's primary config text."""
    return next(iter(render_device(plan.devices[device]).values()))
