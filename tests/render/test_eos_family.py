"""EOS grammar family (Sand vs Strata) from the tier's switch model, never from the hash fields."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hw_helpers import lint_of, plan_of, primary, rail

from netfab.render.environment import UnsupportedFeature

QP = {"hash_fields": ["src_ip", "dst_ip", "ip_protocol", "src_port", "dst_port", "rocev2_dest_qp"]}


def _intent(model: dict[str, Any], lb: dict[str, Any] | None = None) -> dict[str, Any]:
    leaf = {"platform": "arista_eos", "os_version": "4.33.1F", "ports": 64, "uplinks": 4, **model}
    spine = {"platform": "arista_eos", "os_version": "4.33.1F", "count": 2, "ports": 64, **model}
    return rail(leaf, spine, **({"load_balancing": lb} if lb else {}))


def _eos(tmp_path: Path, model: dict[str, Any], lb: dict[str, Any] | None = None, lint: bool = True) -> str:
    return primary(plan_of(_intent(model, lb), tmp_path, lint), "su1-leaf1")


def _errors(tmp_path: Path, model: dict[str, Any], lb: dict[str, Any] | None = None) -> list[str]:
    return [f"{f.rule_id} {f.message}" for f in lint_of(_intent(model, lb), tmp_path).findings if f.severity == "error"]


def test_a_tomahawk_leaf_gets_strata_syntax(tmp_path: Path) -> None:
    text = _eos(tmp_path, {"model": "arista-7060x6-64pe"})
    assert "ip load-sharing trident fields ip" in text and "\n   tx-queue 3\n" in text
    assert "load-balance sand" not in text and "uc-tx-queue" not in text


def test_a_tomahawk_leaf_hashing_on_the_qp_is_refused_not_given_sand_lines(tmp_path: Path) -> None:
    # Before the model existed, asking for QP hashing turned any EOS box into a Sand one. Lint refuses it, and
    # so does the template on its own.
    errors = _errors(tmp_path, {"model": "arista-7060x6-64pe"}, QP)
    assert errors and all(e.startswith("MODEL004") for e in errors)
    assert "needs a sand box, and Arista 7060X6-64PE is strata" in errors[0]
    with pytest.raises(UnsupportedFeature, match="Arista 7060X6-64PE is a trident box"):
        _eos(tmp_path, {"model": "arista-7060x6-64pe"}, QP, lint=False)


def test_a_jericho_box_gets_sand_syntax_without_qp_hashing(tmp_path: Path) -> None:
    text = _eos(tmp_path, {"model": "arista-7808r3", "ports": 64})
    assert "\n   uc-tx-queue 3\n" in text and "\n   tx-queue" not in text
    assert "ip load-sharing trident" not in text
    assert "Sand default profile" in text


def test_a_jericho_box_hashing_on_the_qp_gets_the_sand_profile(tmp_path: Path) -> None:
    text = _eos(tmp_path, {"model": "arista-7808r3"}, QP)
    assert "load-balance sand profile default" in text and "payload bytes 5-7" in text


def test_no_model_is_the_documented_strata_default_and_qp_hashing_asks_for_the_box(tmp_path: Path) -> None:
    assert "ip load-sharing trident" in _eos(tmp_path, {})
    assert any("no model is named (arista_eos then renders its strata default)" in e for e in _errors(tmp_path, {}, QP))
    with pytest.raises(UnsupportedFeature, match="no switch model is named"):
        _eos(tmp_path, {}, QP, lint=False)


def test_unlisted_hardware_without_an_architecture_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFeature, match="depends on the ASIC"):
        _eos(tmp_path, {"hardware": {"ports": 64, "max_speed": "400G"}}, lint=False)
    text = _eos(tmp_path, {"hardware": {"ports": 64, "max_speed": "400G", "architecture": "sand"}}, QP)
    assert "load-balance sand profile default" in text
