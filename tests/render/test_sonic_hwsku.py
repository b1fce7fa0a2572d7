"""SONiC PORT rows from the tier's hwsku: names, lanes, alias and index are the hwsku's port_config.ini rows
(never invented), with the plan's speed, MTU, admin status and description merged in."""

from __future__ import annotations

import json

import pytest
from hw_helpers import plan_of, primary, rail

from netfab.design import FabricPlan
from netfab.platforms.catalogue import switch_model

INTENT = rail(
    {"platform": "sonic", "model": "sonic-mellanox-sn5600-o128", "ports": 64, "uplinks": 4},
    {"platform": "sonic", "model": "sonic-arista-7060x6-64pe-o128s2", "count": 2, "ports": 64},
)


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> FabricPlan:
    return plan_of(INTENT, tmp_path_factory.mktemp("hwsku"))


def _ports(plan: FabricPlan, device: str) -> dict[str, dict[str, str]]:
    ports: dict[str, dict[str, str]] = json.loads(primary(plan, device))["PORT"]
    return ports


@pytest.mark.parametrize(("device", "model"), [("su1-leaf1", "sonic-mellanox-sn5600-o128"),
                                                ("spine1", "sonic-arista-7060x6-64pe-o128s2")])  # fmt: skip
def test_port_rows_are_the_hwskus_rows(plan: FabricPlan, device: str, model: str) -> None:
    hwsku = switch_model(model).hwsku
    assert hwsku is not None
    dev = plan.devices[device]
    ports = _ports(plan, device)
    assert set(ports) == {i.name for i in dev.interfaces}
    for itf in dev.interfaces:
        row = hwsku.row(itf.name)
        assert row is not None and not row.withheld
        assert ports[itf.name] == {
            "admin_status": "up",
            "alias": row.alias,
            "description": itf.description,
            "index": str(row.index),
            "lanes": ",".join(map(str, row.lanes)),
            "mtu": str(itf.mtu),
            "speed": str(itf.speed_gbps * 1000),
        }


def test_port_names_follow_the_hwsku_not_the_eight_lane_default(plan: FabricPlan) -> None:
    # O128 splits every cage 2x400G: the second faceplate port is Ethernet4 (lanes 4-7), not Ethernet8.
    leaf = plan.devices["su1-leaf1"]
    by_port = {i.port: i.name for i in leaf.interfaces}
    assert by_port[1] == "Ethernet0" and by_port[2] == "Ethernet4"
    # The 7060X6 hwsku's first row is cage 1 on lanes 17-20 (Broadcom lane order), alias Ethernet1/1.
    spine = _ports(plan, "spine1")
    assert spine["Ethernet0"]["lanes"] == "17,18,19,20" and spine["Ethernet0"]["alias"] == "Ethernet1/1"
