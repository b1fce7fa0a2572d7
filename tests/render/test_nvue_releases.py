"""NVUE rendering per Cumulus Linux release, checked against NVIDIA's object model of that release.

The models are nvueschema's (generated from NVIDIA's openapi.json per release); tests/nvue_schema.py, the
suite's one NVUE checker, refuses keys the model drops and values it coerces. CL 5.15 renamed `enable: on|off`
to `state: enabled|disabled` and `interface <if> ip` to `ipv4`; os_version picks the shape (the platform
record's release_data), and an unset version renders the newest release.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from cli_roundtrip import fabric_for, render_text

from netfab.design import DevicePlan
from netfab.render.environment import UnsupportedFeature

pytest.importorskip("nvueschema", reason="nvueschema (test extra) is not installed")
from nvue_schema import set_errors

PLATFORM = "nvidia_cumulus"
NEWEST = "5.18"
# The review's release, the last before 5.15's renames, the first after them, and the newest (each model takes
# seconds to import, so not all nineteen).
RELEASES = ("5.12", "5.14", "5.15", NEWEST)


def _doc(dev: DevicePlan) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.load(render_text(dev), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))[0]["set"]
    return doc


def _samples(os_version: str | None) -> list[DevicePlan]:
    """A leaf and a spine of rail-4su (adaptive routing, ECN, unnumbered) and of the lab on /31 links with BFD."""
    rail = fabric_for(PLATFORM, "rail-4su.yaml", **_release(os_version))
    lab = fabric_for(PLATFORM, underlay__addressing="p2p31", underlay__bfd=True, qos__pfc={}, **_release(os_version))
    return [rail.devices_of("leaf")[0], rail.devices_of("spine")[0], lab.devices_of("leaf")[0]]


def _release(os_version: str | None) -> dict[str, Any]:
    if os_version is None:
        return {}
    return {"topology__leaf__os_version": os_version, "topology__spine__os_version": os_version}


@pytest.mark.parametrize("release", RELEASES)
def test_valid_against_the_release_model(release: str) -> None:
    for dev in _samples(release):
        assert set_errors(_doc(dev), release) == [], f"{dev.name} at CL {release}"


def test_unset_version_renders_the_newest_release() -> None:
    for dev in _samples(None):
        assert dev.os_version is None
        assert set_errors(_doc(dev), NEWEST) == []


@pytest.mark.parametrize(("rendered_for", "checked_against"), [("5.14", "5.15"), ("5.15", "5.14")])
def test_a_shape_is_refused_by_the_other_side_of_5_15(rendered_for: str, checked_against: str) -> None:
    # The check can fail: each side's shape is invalid on the other side of the rename.
    leaf = _samples(rendered_for)[0]
    found = set_errors(_doc(leaf), checked_against)
    assert any("/interface/lo/" in e for e in found), found[:5]


def test_lossless_pool_holds_the_pfc_priorities() -> None:
    # NV-1: PFC without a lossless traffic pool leaves priority 3 in the 100 % lossy pool.
    pools = _doc(_samples(None)[0])["qos"]["traffic-pool"]
    assert set(pools["default-lossless"]["switch-priority"]) == {"3"}
    assert set(pools["default-lossy"]["switch-priority"]) == {"0", "1", "2", "4", "5", "6", "7"}
    assert pools["default-lossless"]["memory-percent"] + pools["default-lossy"]["memory-percent"] == 100


@pytest.mark.parametrize(
    ("release", "overrides", "message"),
    [
        ("5.2.0", {}, "traffic-pool"),  # the lab has a lossless class: no lossless pool before 5.3
        ("5.0.0", {"load_balancing__hash_seed": 7, "qos__classes": None}, "hash-seed"),
    ],
)
def test_refused_before_the_release_that_has_it(release: str, overrides: dict[str, Any], message: str) -> None:
    if overrides.get("qos__classes", 0) is None:
        overrides = {
            **overrides,
            "qos__classes": [{"name": "default", "kind": "default", "priority": 0, "weight": 100}],
            "qos__pfc": {"watchdog": None},
        }
    plan = fabric_for(PLATFORM, **_release(release), **overrides)
    with pytest.raises(UnsupportedFeature, match=message):
        render_text(plan.devices_of("leaf")[0])
