"""The switch-model catalogue (netfab/platforms/models/): every entry loads with its sources, bases merge,
defective upstream data is refused or withheld, and the intent names entries with a did-you-mean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from netfab.cli.schema_cmd import intent_schema
from netfab.intent.hardware import tier_switch_model
from netfab.intent.topology import SwitchTier
from netfab.platforms import PlatformRecordError, clear_cache, platform_spec
from netfab.platforms.catalogue import UnknownSwitchModel, catalogue, load_catalogue, model_names, switch_model
from netfab.platforms.hardware import Figure, PortGroup

MODELS = Path(__file__).resolve().parents[2] / "netfab" / "platforms" / "models"


def _figures(value: object) -> list[Figure[object]]:
    out: list[Figure[object]] = []
    if isinstance(value, Figure):
        out.append(value)
    if hasattr(type(value), "model_fields"):
        for name in type(value).model_fields:
            out.extend(_figures(getattr(value, name)))
    elif isinstance(value, tuple):
        for item in value:
            out.extend(_figures(item))
    return out


def test_every_entry_loads_and_every_figure_cites_a_listed_source() -> None:
    models = catalogue()
    assert set(models) == {p.stem for p in MODELS.glob("*.yaml")}
    for model in models.values():
        figures = _figures(model)
        assert figures, model.name
        for fig in figures:
            assert fig.source in model.sources, (model.name, fig)
        for group in model.ports:
            assert group.source in model.sources


def test_the_records_slot_lists_the_models_each_nos_runs() -> None:
    sonic = {m.name for m in platform_spec("sonic").switch_models}
    assert {"sonic-mellanox-sn5600-o128", "sonic-arista-7060x6-64pe-o128s2"} <= sonic
    assert "nvidia-sn5600" not in sonic  # the NVUE box entry carries no SONiC port map
    assert all("arista_eos" in m.platforms for m in platform_spec("arista_eos").switch_models)


def test_a_hwsku_inherits_its_box_and_keeps_upstream_rows() -> None:
    sku = switch_model("sonic-mellanox-sn5600-o128")
    box = switch_model("nvidia-sn5600")
    assert sku.asic == box.asic and sku.ports == box.ports and sku.platforms == ("sonic",)
    assert set(box.sources) < set(sku.sources)
    assert sku.hwsku is not None
    rows = sku.hwsku.ports
    # port_config.ini: Ethernet0 0,1,2,3 etp1a 1 400000 ... Ethernet508 508-511 etp64b 64; Ethernet512 lane 512 25G
    assert (rows[0].name, rows[0].lanes, rows[0].alias, rows[0].index) == ("Ethernet0", (0, 1, 2, 3), "etp1a", 1)
    assert (rows[127].name, rows[127].lanes, rows[127].alias) == ("Ethernet508", (508, 509, 510, 511), "etp64b")
    assert (rows[128].name, rows[128].speed_gbps) == ("Ethernet512", 25)


def test_upstream_rows_with_repeated_lanes_are_withheld_not_guessed() -> None:
    sku = switch_model("sonic-arista-7060x6-64pe-o128s2").hwsku
    assert sku is not None
    withheld = {r.name: r.lanes for r in sku.ports if r.withheld}
    assert withheld == {"Ethernet468": (453, 454, 453, 454), "Ethernet496": (481, 482, 483, 483)}
    assert "Ethernet468" not in {r.name for r in sku.usable()}


def _write(root: Path, name: str, body: dict[str, object]) -> None:
    (root / "models").mkdir(parents=True, exist_ok=True)
    (root / "models" / f"{name}.yaml").write_text(yaml.safe_dump({"name": name, **body}), encoding="utf-8")


def test_a_port_map_with_a_lane_in_two_rows_is_refused(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "sonic-test-dup",
        {
            "base": "nvidia-sn5600",
            "title": "dup lanes",
            "platforms": ["sonic"],
            "hwsku": {
                "name": "Test-Dup",
                "platform": "x86_64-test",
                "breakout_mode": "1x400G",
                "source": "hw_manual",
                "confidence": "upstream_code",
                "port_config": "Ethernet0 0,1,2,3 etp1 1 400000\nEthernet4 3,4,5,6 etp2 2 400000\n",
            },
        },
    )
    with pytest.raises(PlatformRecordError, match="lane 3 is in both Ethernet0 and Ethernet4"):
        load_catalogue((tmp_path,))


def test_a_figure_citing_an_unlisted_source_is_refused(tmp_path: Path) -> None:
    raw = yaml.safe_load((MODELS / "nvidia-sn4700.yaml").read_text(encoding="utf-8"))
    raw["buffer"]["total_bytes"]["source"] = "nowhere"
    raw["name"] = "nvidia-sn4700-copy"
    _write(tmp_path, "nvidia-sn4700-copy", {k: v for k, v in raw.items() if k != "name"})
    with pytest.raises(PlatformRecordError, match="sources it does not list: \\['nowhere'\\]"):
        load_catalogue((tmp_path,))


def test_an_extra_root_adds_unlisted_hardware(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = yaml.safe_load((MODELS / "nvidia-sn4700.yaml").read_text(encoding="utf-8"))
    _write(tmp_path, "site-box", {**{k: v for k, v in raw.items() if k != "name"}, "title": "Site box"})
    monkeypatch.setenv("NETFAB_PLATFORMS_PATH", str(tmp_path))
    clear_cache()
    try:
        assert "site-box" in model_names()
        assert switch_model("site-box").title == "Site box"
    finally:
        monkeypatch.delenv("NETFAB_PLATFORMS_PATH")
        clear_cache()


def test_unknown_name_suggests_the_closest_entries() -> None:
    with pytest.raises(UnknownSwitchModel, match="did you mean 'nvidia-sn5600'"):
        switch_model("nvidia-sn560")
    with pytest.raises(ValueError, match="did you mean 'arista-7060x6-64pe'"):
        SwitchTier(model="arista-7060x6-64p")


def test_schema_lists_the_catalogue_as_the_model_enum() -> None:
    prop = intent_schema()["$defs"]["SwitchTier"]["properties"]["model"]
    enum = next(a["enum"] for a in prop["anyOf"] if "enum" in a)
    assert enum == sorted(model_names()) and "arista-7808r3" in enum
    committed = json.loads((MODELS.parents[2] / "docs" / "intent.schema.json").read_text(encoding="utf-8"))
    assert committed["$defs"]["SwitchTier"]["properties"]["model"] == prop


def test_tier_model_applies_overrides_as_declared_figures() -> None:
    assert tier_switch_model(SwitchTier()) is None
    model = tier_switch_model(SwitchTier(model="arista-7060x6-64pe", hardware={"buffer": "100MB"}))
    assert model is not None and model.buffer.rating_bytes == 100_000_000
    assert model.buffer.shared_bytes is not None and model.buffer.shared_bytes.confidence == "declared"
    assert model.asic.family.value == "Tomahawk 5"  # untouched figures keep their source
    unlisted = tier_switch_model(SwitchTier(ports=48, hardware={"max_speed": "400G", "architecture": "sand"}))
    assert unlisted is not None and unlisted.name == "unlisted"
    assert unlisted.asic.architecture is not None and unlisted.asic.architecture.value == "sand"
    assert unlisted.ports == (
        PortGroup(count=48, max_speed_gbps=400, cage="unlisted", source="intent", confidence="declared"),
    )
    assert unlisted.buffer.rating_bytes is None  # not declared: not invented


def test_the_catalogue_covers_every_platform_with_real_models() -> None:
    assert len(catalogue()) >= 12
    for name in ("arista_eos", "nvidia_cumulus", "sonic", "cisco_nxos", "juniper_junos", "frr"):
        assert platform_spec(name).switch_models, name
    deep = {m.name for m in catalogue().values() if m.deep_buffer.value}
    assert {"arista-7808r3", "juniper-ptx10008"} <= deep
