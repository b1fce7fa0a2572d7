"""The SONiC deploy patches only what netfab owns (FIDELITY_REVIEW SON-2): proved on a running CONFIG_DB shaped
like a factory SONiC switch's (DEVICE_METADATA with hwsku/platform/mac, PORT rows with lanes/alias/index/fec on
more ports than the plan uses, the SKU's buffer pools with sizes and PG ranges, PORT_QOS_MAP|global, management
tables), against a rendered leaf of the lab intent."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonpatch
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))
from cli_roundtrip import fabric_for

from netfab.deploy.drivers.sonic import SHARED_FIELDS, owned_target
from netfab.render.device import render_device

DEVICE_OWNED = {
    "/DEVICE_METADATA/localhost/hwsku",
    "/DEVICE_METADATA/localhost/platform",
    "/DEVICE_METADATA/localhost/mac",
    "/PORT_QOS_MAP/global",
    "/MGMT_INTERFACE",
    "/BUFFER_POOL/egress_lossless_pool/size",
}


def running_db(ports: int = 32) -> dict[str, Any]:
    """A factory CONFIG_DB of a 32-port 400G SONiC switch (8 lanes per port, names by first lane)."""
    names = [f"Ethernet{8 * i}" for i in range(ports)]
    db: dict[str, Any] = {
        "DEVICE_METADATA": {"localhost": {
            "hostname": "sonic", "hwsku": "ACS-SN4700", "platform": "x86_64-mlnx_msn4700-r0",
            "mac": "1c:34:da:12:34:56", "type": "ToRRouter", "buffer_model": "traditional",
            "default_bgp_status": "up", "docker_routing_config_mode": "separated", "synchronous_mode": "enable",
            "timezone": "UTC",
        }},
        "MGMT_INTERFACE": {"eth0|192.0.2.10/24": {"gwaddr": "192.0.2.1"}},
        "MGMT_PORT": {"eth0": {"admin_status": "up", "alias": "eth0"}},
        "FEATURE": {"bgp": {"state": "enabled"}},
        "PORT": {n: {"admin_status": "down", "alias": f"etp{i + 1}", "index": str(i + 1), "fec": "rs",
                     "lanes": ",".join(str(8 * i + j) for j in range(8)), "mtu": "9100", "speed": "400000"}
                 for i, n in enumerate(names)},
        "PORT_QOS_MAP": {"global": {"dscp_to_tc_map": "AZURE"},
                         **{n: {"dscp_to_tc_map": "AZURE", "pfc_enable": "3,4", "pfc_to_pg_map": "AZURE",
                                "pfcwd_sw_enable": "3,4", "tc_to_pg_map": "AZURE", "tc_to_queue_map": "AZURE"}
                            for n in names}},
        "BUFFER_POOL": {
            "ingress_lossless_pool": {"mode": "dynamic", "size": "47587328", "type": "ingress", "xoff": "3620864"},
            "egress_lossless_pool": {"mode": "dynamic", "size": "60817392", "type": "egress"},
            "egress_lossy_pool": {"mode": "dynamic", "size": "47587328", "type": "egress"},
        },
        "BUFFER_PG": {**{f"{n}|3-4": {"profile": "NULL"} for n in names},
                      **{f"{n}|0": {"profile": "ingress_lossy_profile"} for n in names}},
        "CABLE_LENGTH": {"AZURE": {n: "40m" for n in names}},
        "SWITCH_HASH": {"GLOBAL": {"ecmp_hash": ["SRC_IP", "DST_IP"], "lag_hash": ["SRC_MAC", "DST_MAC"]}},
    }  # fmt: skip
    return db


@pytest.fixture(scope="module")
def candidate() -> dict[str, Any]:
    plan = fabric_for("sonic", qos__pfc={})
    out = render_device(plan.devices_of("leaf")[0])
    db: dict[str, Any] = json.loads(next(v for k, v in out.items() if k.endswith(".json")))
    return db


def test_device_owned_keys_survive(candidate: dict[str, Any]) -> None:
    running = running_db()
    target = owned_target(running, candidate)
    patch = jsonpatch.make_patch(running, target).patch
    removed = {op["path"] for op in patch if op["op"] == "remove"}
    assert not {p for p in removed if any(p == d or p.startswith(d + "/") for d in DEVICE_OWNED)}, removed
    meta = target["DEVICE_METADATA"]["localhost"]
    assert (meta["hwsku"], meta["platform"], meta["mac"]) == ("ACS-SN4700", "x86_64-mlnx_msn4700-r0",
                                                              "1c:34:da:12:34:56")  # fmt: skip
    assert meta["hostname"] == candidate["DEVICE_METADATA"]["localhost"]["hostname"]
    # every port stays, lanes/alias/index/fec included; netfab's ports get its MTU and speed
    assert set(target["PORT"]) == set(running["PORT"])
    for name, row in target["PORT"].items():
        assert row["lanes"] == running["PORT"][name]["lanes"] and row["fec"] == "rs"
        if name in candidate["PORT"]:
            assert row["mtu"] == candidate["PORT"][name]["mtu"]
    assert target["PORT_QOS_MAP"]["global"] == {"dscp_to_tc_map": "AZURE"}
    assert target["BUFFER_POOL"]["egress_lossless_pool"]["size"] == "60817392"
    assert target["SWITCH_HASH"]["GLOBAL"]["lag_hash"] == ["SRC_MAC", "DST_MAC"]


def test_owned_rows_of_netfab_ports_are_netfab_s(candidate: dict[str, Any]) -> None:
    running = running_db()
    target = owned_target(running, candidate)
    ours = set(candidate["PORT"])
    some = sorted(ours)[0]
    # the factory 3-4 PG of a port netfab manages overlaps netfab's PG 3: removed; other ports keep theirs
    assert f"{some}|3-4" not in target["BUFFER_PG"]
    assert target["BUFFER_PG"][f"{some}|0"] == {"profile": "ingress_lossy_profile"}
    others = set(running["PORT"]) - ours
    assert others, "the fixture has ports the plan does not use"
    assert all(f"{n}|3-4" in target["BUFFER_PG"] for n in others)
    # a field netfab owns but no longer renders goes; the device's pfc_to_pg_map stays
    row = target["PORT_QOS_MAP"][some]
    assert row["pfc_enable"] == candidate["PORT_QOS_MAP"][some]["pfc_enable"]
    assert row["pfc_to_pg_map"] == "AZURE"


def test_a_port_that_became_lossy_loses_pfc(candidate: dict[str, Any]) -> None:
    lossy = sorted(candidate["PORT"])[0]
    cand = json.loads(json.dumps(candidate))
    for field in ("pfc_enable", "pfcwd_sw_enable"):
        cand["PORT_QOS_MAP"][lossy].pop(field, None)
    cand["PFC_WD"].pop(lossy, None)
    running = owned_target(running_db(), candidate)
    target = owned_target(running, cand)
    assert "pfc_enable" not in target["PORT_QOS_MAP"][lossy] and lossy not in target["PFC_WD"]


def test_every_shared_field_the_templates_render_is_owned(candidate: dict[str, Any]) -> None:
    # A template that starts rendering a new field in a shared row must list it, or a later render without it
    # could never remove it from the device.
    # PORT lanes/alias/index are the hwsku's: when rendered they equal the device's (templates/sonic/interfaces.j2)
    # and are set, never removed.
    hardware = {"PORT": {"lanes", "alias", "index"}}
    for table, owned in SHARED_FIELDS.items():
        if table == "CABLE_LENGTH":
            continue
        rendered = {f for row in candidate.get(table, {}).values() for f in row} - hardware.get(table, set())
        assert rendered <= owned, f"{table}: {sorted(rendered - owned)} rendered but not in SHARED_FIELDS"
