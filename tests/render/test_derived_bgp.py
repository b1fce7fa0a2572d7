"""BGP sessions are derived data: a plan designed without them (what `netfab build`, `audit` and `diff` design)
renders the same text as one designed with them, on every platform and both addressings, and the sessions
bgp_sessions derives from a DevicePlan are the ones the design makes."""

from __future__ import annotations

import re
from copy import deepcopy
from dataclasses import replace

import pytest

from netfab.design import design
from netfab.design.plan import bgp_sessions, sessions_of
from netfab.intent import Intent
from netfab.platforms import platform_names
from netfab.render.device import render_device
from netfab.render.environment import UnsupportedFeature
from tests.render.cli_roundtrip import _example


def _intent(platform: str, addressing: str) -> Intent:
    data = deepcopy(_example("lab.yaml"))
    for tier in ("leaf", "spine", "superspine"):
        if tier in data["topology"]:
            data["topology"][tier]["platform"] = platform
    data["underlay"]["addressing"] = addressing
    if platform != "frr":
        data["qos"]["pfc"] = {}  # the lab turns the watchdog off for FRR; the switch platforms get theirs back
    return Intent.model_validate(data)


@pytest.mark.parametrize("addressing", ["p2p31", "unnumbered"])
@pytest.mark.parametrize("platform", platform_names())
def test_a_plan_without_sessions_renders_the_same_text(platform: str, addressing: str) -> None:
    intent = _intent(platform, addressing)
    with_sessions = design(intent)
    without = design(intent, bgp=False)
    assert all(d.bgp is None for d in without.devices.values())
    for name, dev in with_sessions.devices.items():
        assert dev.bgp is not None and dev.bgp.neighbors, name
        try:
            expected = render_device(dev)
        except UnsupportedFeature as exc:  # NX-OS refuses unnumbered: then it refuses it either way
            with pytest.raises(UnsupportedFeature, match=re.escape(str(exc))):
                render_device(without.devices[name])
            continue
        assert render_device(without.devices[name]) == expected, name
        # Rendering derived them in a copy: the caller's plan is as it was designed.
        assert without.devices[name].bgp is None


def test_derived_sessions_are_the_designed_ones() -> None:
    plan = design(_intent("frr", "p2p31"))
    for dev in plan.devices.values():
        assert bgp_sessions(dev) == dev.bgp
        assert sessions_of(dev) is dev.bgp  # designed: taken as it is


def test_a_hand_made_plan_without_settings_keeps_no_sessions() -> None:
    dev = next(iter(design(_intent("frr", "p2p31"), bgp=False).devices.values()))
    hand_made = replace(dev, routing=None)
    assert sessions_of(hand_made) is None
    with pytest.raises(ValueError, match="no BGP settings"):
        bgp_sessions(hand_made)
