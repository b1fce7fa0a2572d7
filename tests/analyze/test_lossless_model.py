"""The lossless budget rates each tier against its switch model's buffer and names the ASIC; a model whose
buffer is not public is not rated (no invented figure); no model keeps the labelled planning figure."""

from __future__ import annotations

from analyze_helpers import small_clos3

from netfab.analyze.lossless_budget import analyze_lossless
from netfab.design import design
from netfab.intent import Intent
from netfab.intent.hardware import HardwareOverride


def _with(intent: Intent, **tiers: dict[str, object]) -> Intent:
    topo = intent.topology
    update = {role: getattr(topo, role).model_copy(update=fields) for role, fields in tiers.items()}
    return intent.model_copy(update={"topology": topo.model_copy(update=update)})


def _switches(intent: Intent) -> dict[str, dict[str, object]]:
    return analyze_lossless(intent, design(intent)).as_dict()["switches"]


def test_a_modelled_tier_is_rated_against_its_model_and_the_asic_is_named() -> None:
    base, _ = small_clos3()
    sonic = {"platform": "sonic", "model": "sonic-arista-7060x6-64pe-o128s2"}
    switches = _switches(_with(base, leaf=sonic, spine=sonic, superspine=sonic))
    leaf = switches["leaf"]
    assert leaf["asic"] == "Tomahawk 5 (Arista 7060X6-64PE (SONiC hwsku Arista-7060X6-64PE-O128S2))"
    assert leaf["shared_buffer_bytes"] == 165_660_324 and leaf["buffer_basis"] == "model"


def test_a_model_without_a_public_buffer_is_not_rated_instead_of_rated_against_a_sample() -> None:
    # Before: an NVUE Spectrum-4 leaf was rated against the record's planning figure for another ASIC.
    base, _ = small_clos3()
    nv = {"platform": "nvidia_cumulus", "model": "nvidia-sn5600", "uplink_cable_m": 10_000}
    intent = _with(base, leaf=nv, spine={"platform": "nvidia_cumulus", "model": "nvidia-sn5600"})
    budget = analyze_lossless(intent, design(intent))
    leaf = budget.as_dict()["switches"]["leaf"]
    assert leaf["asic"].startswith("Spectrum-4") and leaf["buffer_basis"] == "not public"
    assert leaf["shared_buffer_bytes"] is None and leaf["share_of_buffer"] is None
    assert not [f for f in budget.findings("x.yaml") if "leaf" in f.message]


def test_declared_hardware_is_rated_as_declared_and_no_model_is_labelled_a_planning_figure() -> None:
    base, _ = small_clos3()
    switches = _switches(_with(base, leaf={"hardware": HardwareOverride(buffer="32MB", ports=16)}))
    assert switches["leaf"]["shared_buffer_bytes"] == 32_000_000 and switches["leaf"]["buffer_basis"] == "declared"
    assert switches["spine"]["buffer_basis"] == "planning figure, no model named"
    assert "planning figure" in str(switches["spine"]["asic"])
