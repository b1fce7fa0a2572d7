"""The strict (CNP) queue's shaper on every platform (FIDELITY_REVIEW JUN-3, X-1): 5 % of the port by default, the
intent's max_rate_percent when stated, none when it is null; refused where the CLI cannot take the value; absent
where the platform record says it is not rendered (lint CAP026 reports those)."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest
import yaml
from cli_roundtrip import lab_pair, render_text

from netfab.design import DevicePlan
from netfab.render.device import render_device
from netfab.render.environment import UnsupportedFeature

ROCE = {"name": "roce", "kind": "roce", "dscp": [26], "priority": 3, "lossless": True, "weight": 50,
        "ecn": {"kmin": "150KB", "kmax": "1500KB", "pmax": 100}}  # fmt: skip
DEFAULT = {"name": "default", "kind": "default", "priority": 0, "weight": 50}


def leaf(platform: str, **cnp: Any) -> DevicePlan:
    """The lab's first leaf on `platform`; with `cnp`, the CNP class carries those fields (else the defaults).
    Linux/FRR keeps the lab's `watchdog: null` (it has none); switches get the intent default."""
    over: dict[str, Any] = {"qos__pfc": {"watchdog": None}} if platform == "frr" else {}
    if cnp:
        klass = {"name": "cnp", "kind": "cnp", "dscp": [48], "priority": 6, "scheduling": "strict", **cnp}
        over["qos__classes"] = [ROCE, klass, DEFAULT]
    return lab_pair(platform, "p2p31", **over)["leaf"]


CLI = {
    "arista_eos": "shape rate {} percent",
    "juniper_junos": "set class-of-service schedulers NETFAB-CNP shaping-rate percent {}",
}


@pytest.mark.parametrize("platform", sorted(CLI))
@pytest.mark.parametrize(("cnp", "percent"), [({}, 5), ({"max_rate_percent": 12}, 12)])
def test_cli_caps_the_strict_queue(platform: str, cnp: dict[str, Any], percent: int) -> None:
    lines = [line.strip() for line in render_text(leaf(platform, **cnp)).splitlines()]
    assert lines.count(CLI[platform].format(percent)) == 1
    assert len([x for x in lines if re.search(r"shape rate|shaping-rate", x)]) == 1, "one cap, on the strict queue"


def test_eos_cap_sits_in_the_strict_tx_queue() -> None:
    text = render_text(leaf("arista_eos"))
    block = text.split("tx-queue 6\n", 1)[1].split("   !\n", 1)[0]
    assert "priority strict" in block and "shape rate 5 percent" in block


@pytest.mark.parametrize("platform", sorted(CLI))
def test_null_leaves_the_strict_queue_unshaped(platform: str) -> None:
    text = render_text(leaf(platform, max_rate_percent=None))
    assert "shape rate" not in text and "shaping-rate" not in text


@pytest.mark.parametrize("platform", sorted(CLI))
def test_a_fraction_is_refused_not_rounded(platform: str) -> None:
    with pytest.raises(UnsupportedFeature, match=r"must be whole, 1-100, class cnp has 2\.5"):
        render_text(leaf(platform, max_rate_percent=2.5))


def _config_db(dev: DevicePlan) -> dict[str, Any]:
    db: dict[str, Any] = json.loads(render_device(dev)[f"configs/{dev.name}.json"])
    return db


def test_sonic_one_profile_per_port_speed_in_bytes_per_second() -> None:
    dev = leaf("sonic", max_rate_percent=2.5)
    db = _config_db(dev)
    speeds = {i.speed_gbps for i in dev.interfaces}
    for speed in speeds:
        rate = str(int(speed * 1e9 / 8 * 0.025))  # 100G: 312,500,000 B/s
        assert db["SCHEDULER"][f"scheduler.6.{speed}G"] == {
            "type": "STRICT", "meter_type": "bytes", "cir": rate, "pir": rate,
        }  # fmt: skip
    assert "scheduler.6" not in db["SCHEDULER"]
    for i in dev.interfaces:
        assert db["QUEUE"][f"{i.name}|6"] == {"scheduler": f"scheduler.6.{i.speed_gbps}G"}
        assert db["QUEUE"][f"{i.name}|3"]["scheduler"] == "scheduler.3"


def test_sonic_unshaped_when_null() -> None:
    db = _config_db(leaf("sonic", max_rate_percent=None))
    assert db["SCHEDULER"]["scheduler.6"] == {"type": "STRICT"}
    assert not [k for k in db["SCHEDULER"] if k.count(".") > 1]


def _startup(dev: DevicePlan) -> dict[str, Any]:
    (doc,) = yaml.safe_load(render_text(dev))
    body: dict[str, Any] = doc["set"]
    return body


def test_nvue_egress_shaper_in_kbps_bound_per_port() -> None:
    dev = leaf("nvidia_cumulus", max_rate_percent=7)
    doc = _startup(dev)
    for i in dev.interfaces:
        profile = f"netfab-shaper-{i.speed_gbps}g"
        assert doc["interface"][i.name]["qos"]["egress-shaper"] == {"profile": profile}
        assert doc["qos"]["egress-shaper"][profile] == {"traffic-class": {"6": {"max-rate": i.speed_gbps * 70_000}}}


def test_nvue_before_5_4_has_no_egress_shaper() -> None:
    dev = lab_pair("nvidia_cumulus", "p2p31", qos__pfc={"watchdog": None})["leaf"]
    new = _startup(dataclasses.replace(dev, os_version="5.4.0"))
    old = _startup(dataclasses.replace(dev, os_version="5.3.0"))
    assert "egress-shaper" in new["qos"] and "egress-shaper" not in old["qos"]
    assert all("egress-shaper" not in v.get("qos", {}) for v in old["interface"].values())


@pytest.mark.parametrize("platform", ["cisco_nxos", "frr"])
def test_platforms_without_a_confirmed_shaper_render_none(platform: str) -> None:
    """No guessed syntax: the default cap changes nothing in the files (lint CAP026 reports the gap)."""
    assert render_device(leaf(platform)) == render_device(leaf(platform, max_rate_percent=None))
