"""The intended files read from a build tree: only where the build rendered them from the device's current
inputs and their bytes are the ones it wrote; anything else is rendered (netfab.audit.intended)."""

from __future__ import annotations

from pathlib import Path

import pytest
from audit_helpers import intent_for, plan_for

from netfab.audit import intended as intended_mod
from netfab.audit.intended import BuiltConfigs, intended_files
from netfab.design import FabricPlan, design
from netfab.intent.model import Intent
from netfab.render.build import build


def _built(plan: FabricPlan, root: Path) -> BuiltConfigs:
    build(plan, root)
    built = BuiltConfigs.at(root, plan.name)
    assert built is not None
    return built


def _no_render(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> dict[str, str]:
        raise AssertionError("rendered although the build tree holds the device's files")

    monkeypatch.setattr(intended_mod, "render_device", refuse)


def test_a_current_tree_is_read_not_rendered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = plan_for("arista_eos")
    rendered = {name: intended_files(dev) for name, dev in plan.devices.items()}
    built = _built(plan, tmp_path)
    _no_render(monkeypatch)
    assert {name: intended_files(dev, built) for name, dev in plan.devices.items()} == rendered


def test_a_stale_tree_is_rendered_again(tmp_path: Path) -> None:
    built = _built(plan_for("arista_eos"), tmp_path)
    data = intent_for("arista_eos")
    data["underlay"]["mtu"] = 9000
    changed = design(Intent.model_validate(data)).devices["leaf1"]
    want = intended_files(changed)
    assert want != intended_files(plan_for("arista_eos").devices["leaf1"])  # the knob reaches leaf1's config
    assert intended_files(changed, built) == want


def test_an_edited_file_is_rendered_again(tmp_path: Path) -> None:
    plan = plan_for("arista_eos")
    built = _built(plan, tmp_path)
    path = tmp_path / plan.name / "configs" / "leaf1.cfg"
    text = path.read_text()
    edited = text.replace(" mtu 9", " mtu 8", 1)
    assert edited != text and len(edited) == len(text)  # same size: only the bytes' digest can tell
    path.write_text(edited)
    assert intended_files(plan.devices["leaf1"], built)[".cfg"] == text


def test_a_tree_without_input_digests_is_not_used(tmp_path: Path) -> None:
    plan = plan_for("arista_eos")
    assert BuiltConfigs.at(tmp_path, plan.name) is None  # no tree
    build(plan, tmp_path)
    (tmp_path / plan.name / ".netfab-build.json").write_text('{"format": 1, "inputs": null, "files": {}}')
    assert BuiltConfigs.at(tmp_path, plan.name) is None
