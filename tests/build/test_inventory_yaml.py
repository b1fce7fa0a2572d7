"""The inventory's YAML is written without PyYAML's representer (netfab.render.inventory._dump): the bytes must
be PyYAML's own for every document, whatever strings it holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from netfab.cli.pipeline import load_plan
from netfab.render import inventory

ROOT = Path(__file__).resolve().parents[2]

# Strings YAML would read as something else, or that need quoting, next to ones written plain.
AWKWARD = [
    "yes", "No", "on", "OFF", "true", "False", "null", "Null", "~", "", " lead", "trail ", "a b", "a: b", "a:b",
    "a #b", "a#b", "#x", "-", "-x", "--- x", "...", "?x", "x?", "[x]", "{x}", "x,y", "'q'", '"q"', "&a", "*a", "!t",
    "|", ">", "%x", "@x", "`x", "1", "-1", "+1", "0x1f", "0o17", "0b101", "1_000", "1:20", "190:20:30", "1e3",
    "1.5", ".5", ".inf", "-.inf", ".NaN", "2024-01-01", "2024-1-1 10:00:00", "=", "<<", "10.0.0.1", "10.0.0.1/31",
    "fe80::1", "Ethernet1/1", "swp1s0", "leaf_01", "é", "tab\tx", "line\nbreak", "x" * 127, "x" * 128, "x" * 300,
]  # fmt: skip


def _pyyaml(doc: Any) -> str:
    return yaml.dump(doc, Dumper=inventory._Dumper, sort_keys=True, default_flow_style=False, width=120)


@pytest.mark.parametrize("text", AWKWARD)
def test_every_kind_of_string_is_written_as_pyyaml_writes_it(text: str) -> None:
    doc = {"hosts": {text: {"data": {"v": text, "n": 3}, "groups": [text, "g"]}, "z": text}}
    assert inventory._dump(doc) == _pyyaml(doc)
    assert yaml.safe_load(inventory._dump(doc)) == doc


@pytest.mark.parametrize(
    "doc",
    [
        {"a": 1, "b": -7, "c": 10**20, "d": True, "e": False, "f": None, "g": 1.5},
        {"a": {}, "b": 1},
        {"a": [], "b": 1},
        {"a": [{"x": 1}], "b": [[1, 2]]},
        {1: "int key", 2: {"x": None}},
        {1: "a", "b": 2},  # keys sorted() cannot order
        {},
    ],
)
def test_other_values_are_written_as_pyyaml_writes_them(doc: dict[Any, Any]) -> None:
    assert inventory._dump(doc) == _pyyaml(doc)


@pytest.mark.parametrize("intent", sorted((ROOT / "intent").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_example_inventory_is_pyyamls(intent: Path) -> None:
    documents = inventory.inventory_data(load_plan([intent]).plan)
    for path, doc in documents.items():
        assert inventory._dump(doc) == _pyyaml(doc), path
