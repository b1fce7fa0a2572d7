"""SONiC rendering: config_db.json against an allow-list of CONFIG_DB tables/fields taken from the
sonic-buildimage YANG models, plan values in SONiC's units, the FRR config through FRR's own parser, refusals."""

from __future__ import annotations

import json
import math
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_roundtrip import check_golden, fabric_for, lab_pair
from frr_parser import vtysh_check

from netfab.design import DevicePlan, FabricPlan
from netfab.render import render_device
from netfab.render.environment import UnsupportedFeature

PLATFORM = "sonic"
ADDRESSING = ("unnumbered", "p2p31")

_PORT = r"Ethernet\d+"
_MAP = r"AZURE"
_DIGIT = {str(i) for i in range(8)}

# table -> (key pattern, allowed field names). Field names are leaves of the sonic-buildimage YANG model named
# in the comment (src/sonic-yang-models/yang-models/...); a set is "these leaves", a callable validates
# map-style rows whose field names are data (DSCP values, port names).
ALLOW: dict[str, tuple[str, set[str] | Callable[[str], bool]]] = {
    # sonic-device_metadata.yang
    "DEVICE_METADATA": (
        r"localhost",
        {"hostname", "bgp_asn", "type", "buffer_model", "default_pfcwd_status", "docker_routing_config_mode"},
    ),
    # sonic-loopback-interface.yang: name and name|prefix, no fields used
    "LOOPBACK_INTERFACE": (r"Loopback0(\|\d+\.\d+\.\d+\.\d+/32)?", set()),
    # sonic-port.yang (lanes and speed are mandatory)
    "PORT": (_PORT, {"admin_status", "alias", "description", "index", "lanes", "mtu", "speed"}),
    # sonic-interface.yang: INTERFACE_LIST / INTERFACE_IPPREFIX_LIST
    "INTERFACE": (_PORT + r"(\|\d+\.\d+\.\d+\.\d+/31)?", {"ipv6_use_link_local_only"}),
    # sonic-dscp-tc-map.yang, sonic-dot1p-tc-map.yang, sonic-tc-queue-map.yang, sonic-tc-priority-group-map.yang,
    # sonic-pfc-priority-queue-map.yang: rows are value -> value
    "DSCP_TO_TC_MAP": (_MAP, lambda f: f.isdigit() and 0 <= int(f) <= 63),
    "DOT1P_TO_TC_MAP": (_MAP, lambda f: f in _DIGIT),
    "TC_TO_QUEUE_MAP": (_MAP, lambda f: f in _DIGIT),
    "TC_TO_PRIORITY_GROUP_MAP": (_MAP, lambda f: f in _DIGIT),
    "MAP_PFC_PRIORITY_TO_QUEUE": (_MAP, lambda f: f in _DIGIT),
    # sonic-port-qos-map.yang
    "PORT_QOS_MAP": (
        _PORT,
        {
            "dscp_to_tc_map",
            "dot1p_to_tc_map",
            "tc_to_queue_map",
            "tc_to_pg_map",
            "pfc_to_queue_map",
            "pfc_enable",
            "pfcwd_sw_enable",
        },
    ),
    # sonic-scheduler.yang, sonic-queue.yang (key ifname|qindex), sonic-wred-profile.yang
    "SCHEDULER": (r"scheduler\.[0-7](\.\d+G)?", {"type", "weight", "meter_type", "cir", "pir"}),
    "QUEUE": (_PORT + r"\|[0-7]", {"scheduler", "wred_profile"}),
    "WRED_PROFILE": (
        r"ECN_Q[0-7]",
        {"ecn", "green_min_threshold", "green_max_threshold", "green_drop_probability", "wred_green_enable"},
    ),
    # sonic-cable-length.yang (rows: port -> "<n>m"), sonic-buffer-pg.yang (key port|pg_num)
    "CABLE_LENGTH": (_MAP, lambda f: re.fullmatch(_PORT, f) is not None),
    "BUFFER_PG": (_PORT + r"\|[0-7]", {"profile"}),
    # sonic-buffer-pool.yang, sonic-buffer-profile.yang, sonic-buffer-queue.yang, the port profile lists,
    # sonic-default-lossless-buffer-parameter.yang, sonic-lossless-traffic-pattern.yang
    "BUFFER_POOL": (r"(ingress|egress)_loss(less|y)_pool", {"type", "mode"}),
    "BUFFER_PROFILE": (r"\w+_profile", {"pool", "size", "dynamic_th"}),
    "BUFFER_QUEUE": (_PORT + r"\|[0-7]", {"profile"}),
    "BUFFER_PORT_INGRESS_PROFILE_LIST": (_PORT, {"profile_list"}),
    "BUFFER_PORT_EGRESS_PROFILE_LIST": (_PORT, {"profile_list"}),
    "DEFAULT_LOSSLESS_BUFFER_PARAMETER": (_MAP, {"default_dynamic_th"}),
    "LOSSLESS_TRAFFIC_PATTERN": (_MAP, {"mtu", "small_packet_percentage"}),
    # sonic-pfcwd.yang
    "PFC_WD": (_PORT + "|GLOBAL", {"action", "detection_time", "restoration_time", "POLL_INTERVAL"}),
    # sonic-hash.yang
    # sonic-hash.yang (ecmp_hash_ipv4_rdma and the ARS_* tables are in no release: refused, see below)
    "SWITCH_HASH": (r"GLOBAL", {"ecmp_hash"}),
    # sonic-bgp-neighbor.yang BGP_NEIGHBOR_TEMPLATE_LIST (grouping sonic-bgp-cmn-neigh)
    "BGP_NEIGHBOR": (r"\d+\.\d+\.\d+\.\d+", {"admin_status", "asn", "local_addr", "name"}),
}
PORT_KEYED = ("PORT_QOS_MAP", "QUEUE", "BUFFER_PG", "BUFFER_QUEUE", "PFC_WD", "INTERFACE")
NO_BTH = {"hash_fields": ["src_ip", "dst_ip", "ip_protocol", "src_port", "dst_port"], "adaptive_routing": False}


def fabric(addressing: str = "unnumbered", **overrides: Any) -> FabricPlan:
    """The lab fabric on SONiC with the intent's default PFC watchdog (the lab intent turns it off for FRR)."""
    overrides.setdefault("qos__pfc", {})
    return fabric_for(PLATFORM, underlay__addressing=addressing, **overrides)


def render(dev: DevicePlan) -> tuple[str, str]:
    out = render_device(dev)
    return out[f"configs/{dev.name}.json"], out[f"configs/{dev.name}.frr.conf"]


def config_db(dev: DevicePlan) -> dict[str, Any]:
    db: dict[str, Any] = json.loads(render(dev)[0])
    return db


def assert_sorted(node: Any, where: str = "") -> None:
    if isinstance(node, dict):
        assert list(node) == sorted(node), f"keys not sorted at {where or 'top'}"
        for key, value in node.items():
            assert_sorted(value, f"{where}/{key}")


def assert_strings(node: Any, where: str = "") -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            assert_strings(value, f"{where}/{key}")
    elif isinstance(node, list):
        assert all(isinstance(v, str) for v in node), f"non-string in list at {where}"
    else:
        assert isinstance(node, str), f"{where} = {node!r} is not a string"


def assert_schema(db: dict[str, Any]) -> None:
    unknown = set(db) - set(ALLOW)
    assert not unknown, f"tables outside the allow-list: {unknown}"
    for table, rows in db.items():
        key_re, fields = ALLOW[table]
        assert rows, f"empty table {table}"
        for key, row in rows.items():
            assert re.fullmatch(key_re, key), f"{table} key {key!r} does not match {key_re}"
            bad = [f for f in row if not (f in fields if isinstance(fields, set) else fields(f))]
            assert not bad, f"{table}|{key}: fields {bad} not in the YANG allow-list"


@pytest.fixture(scope="module")
def lab() -> FabricPlan:
    return fabric()


# --- golden ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("addressing", ADDRESSING)
@pytest.mark.parametrize("role", ["leaf", "spine"])
def test_golden(role: str, addressing: str) -> None:
    dev = lab_pair(PLATFORM, addressing)[role]
    db_text, frr_text = render(dev)
    check_golden(PLATFORM, f"{role}-{addressing}.json", db_text)
    check_golden(PLATFORM, f"{role}-{addressing}.frr.conf", frr_text)


# --- config_db.json structure ---------------------------------------------------------------------------


@pytest.mark.parametrize("addressing", ADDRESSING)
def test_valid_sorted_strings_and_schema(addressing: str) -> None:
    for dev in fabric(addressing).devices.values():
        text = render(dev)[0]
        assert text == render(dev)[0], "deterministic"
        assert text.endswith("}\n") and all(line == line.rstrip() for line in text.splitlines())
        db = json.loads(text)
        assert_sorted(db)
        assert_strings(db)
        assert_schema(db)


def test_schema_with_every_optional_table() -> None:
    # PCP trust swaps the DSCP map for DOT1P; no watchdog drops PFC_WD and pfcwd_sw_enable.
    for dev in (fabric(qos__trust="pcp").devices["leaf1"], fabric(qos__pfc={"watchdog": None}).devices["spine1"]):
        assert_schema(config_db(dev))


@pytest.mark.parametrize("addressing", ADDRESSING)
def test_references_resolve(addressing: str) -> None:
    """Leafrefs the YANG model enforces: every port-keyed row names a PORT, every profile name exists."""
    for dev in fabric(addressing).devices.values():
        db = config_db(dev)
        ports = set(db["PORT"])
        assert ports == {i.name for i in dev.interfaces}
        for table in PORT_KEYED:
            for key in db.get(table, {}):
                assert key.split("|")[0] in ports | {"GLOBAL"}, f"{table}|{key} names no PORT"
        assert set(db["CABLE_LENGTH"]["AZURE"]) <= ports
        for key, row in db["QUEUE"].items():
            assert row["scheduler"] in db["SCHEDULER"], key
            assert row.get("wred_profile", "ECN_Q3") in db["WRED_PROFILE"], key
        for row in db["PORT_QOS_MAP"].values():
            for field, name in row.items():
                if field.endswith("_map"):
                    table = {
                        "dscp_to_tc_map": "DSCP_TO_TC_MAP",
                        "tc_to_queue_map": "TC_TO_QUEUE_MAP",
                        "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP",
                        "pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE",
                    }[field]
                    assert name in db[table]
        # INTERFACE_IPPREFIX_LIST needs its INTERFACE_LIST row
        for key in db["INTERFACE"]:
            assert key.split("|")[0] in db["INTERFACE"]


def test_device_metadata(lab: FabricPlan) -> None:
    for dev in lab.devices.values():
        meta = config_db(dev)["DEVICE_METADATA"]["localhost"]
        assert meta == {
            "hostname": dev.name,
            "bgp_asn": str(dev.asn),
            # SON-7: the server-facing tier is SONiC's ToRRouter (T0), the next LeafRouter (T1)
            "type": {"leaf": "ToRRouter", "spine": "LeafRouter"}[dev.role],
            "buffer_model": "dynamic",
            "default_pfcwd_status": "disable",
            "docker_routing_config_mode": "split-unified",
        }


@pytest.mark.parametrize("addressing", ADDRESSING)
def test_ports_and_addresses(addressing: str) -> None:
    for dev in fabric(addressing).devices.values():
        db = config_db(dev)
        assert db["LOOPBACK_INTERFACE"] == {"Loopback0": {}, f"Loopback0|{dev.loopback}/32": {}}
        for i in dev.interfaces:
            port = db["PORT"][i.name]
            assert port["speed"] == str(i.speed_gbps * 1000) == "100000"  # Mb/s
            assert port["mtu"] == str(i.mtu) and port["admin_status"] == "up"
            # No hwsku named: lanes, alias and index are the hardware's and are never invented
            # (tests/render/test_sonic_hwsku.py covers the rows a hwsku gives).
            assert not {"lanes", "alias", "index"} & set(port)
            if i.address:
                assert db["INTERFACE"][i.name] == {} and f"{i.name}|{i.address}" in db["INTERFACE"]
            else:
                assert db["INTERFACE"][i.name] == {"ipv6_use_link_local_only": "enable"}


# --- QoS values -----------------------------------------------------------------------------------------


def test_maps_and_port_binding(lab: FabricPlan) -> None:
    dev = lab.devices["leaf1"]
    db = config_db(dev)
    assert {int(k): int(v) for k, v in db["DSCP_TO_TC_MAP"]["AZURE"].items()} == dev.qos.dscp_to_queue
    assert db["TC_TO_PRIORITY_GROUP_MAP"]["AZURE"]["3"] == "3"
    assert {v for k, v in db["TC_TO_PRIORITY_GROUP_MAP"]["AZURE"].items() if k != "3"} == {"0"}
    for i in dev.interfaces:
        assert db["PORT_QOS_MAP"][i.name]["pfc_enable"] == "3"
        assert db["PORT_QOS_MAP"][i.name]["dscp_to_tc_map"] == "AZURE"


def test_scheduler_and_ecn_bytes(lab: FabricPlan) -> None:
    dev = lab.devices["spine1"]
    db = config_db(dev)
    assert db["SCHEDULER"] == {
        "scheduler.0": {"type": "DWRR", "weight": "50"},
        "scheduler.3": {"type": "DWRR", "weight": "50"},
        # The CNP queue's 5 % cap at the lab's 100G ports, in bytes/s.
        "scheduler.6.100G": {"type": "STRICT", "meter_type": "bytes", "cir": "625000000", "pir": "625000000"},
    }
    roce = dev.qos.roce_queue
    assert roce is not None and roce.ecn is not None
    assert db["WRED_PROFILE"] == {
        "ECN_Q3": {
            "ecn": "ecn_all",
            "green_min_threshold": str(roce.ecn.kmin_bytes),
            "green_max_threshold": str(roce.ecn.kmax_bytes),
            "green_drop_probability": "100",
            "wred_green_enable": "true",
        }
    }
    assert db["WRED_PROFILE"]["ECN_Q3"]["green_min_threshold"] == "150000"
    for i in dev.interfaces:
        assert db["QUEUE"][f"{i.name}|3"] == {"scheduler": "scheduler.3", "wred_profile": "ECN_Q3"}
        assert db["QUEUE"][f"{i.name}|6"] == {"scheduler": f"scheduler.6.{i.speed_gbps}G"}


def test_pfc_buffers_and_watchdog_in_ms() -> None:
    leaf = fabric_for(PLATFORM, "rail-4su.yaml", load_balancing=NO_BTH).devices_of("leaf")[0]
    db = config_db(leaf)
    assert db["PFC_WD"]["GLOBAL"] == {"POLL_INTERVAL": "100"}
    for i in leaf.interfaces:
        assert db["PFC_WD"][i.name] == {"action": "drop", "detection_time": "200", "restoration_time": "400"}
        # SON-3: the watchdog watches the lossless queue
        assert db["PORT_QOS_MAP"][i.name]["pfcwd_sw_enable"] == "3"
        assert db["BUFFER_PG"][f"{i.name}|3"] == {"profile": "NULL"}
        # SON-4: PG 0 (the lossy TCs, CNP included) keeps its lossy profile
        assert db["BUFFER_PG"][f"{i.name}|0"] == {"profile": "ingress_lossy_profile"}
        assert db["CABLE_LENGTH"]["AZURE"][i.name] == f"{math.ceil(i.cable_m)}m"
    lengths = set(db["CABLE_LENGTH"]["AZURE"].values())
    assert lengths == {"5m", "50m"}, "per-port cable lengths: host 5 m, uplinks 50 m"


def test_lossy_port_gets_no_pfc(lab: FabricPlan) -> None:
    dev = lab.devices["leaf1"]
    lossy = dev.interfaces[0]
    lossy.lossless = False  # the lab plan is module-scoped: restore below
    try:
        db = config_db(dev)
    finally:
        lossy.lossless = True
    assert "pfc_enable" not in db["PORT_QOS_MAP"][lossy.name]
    assert lossy.name not in db["PFC_WD"] and lossy.name not in db["CABLE_LENGTH"]["AZURE"]
    assert [k for k in db["BUFFER_PG"] if k.startswith(lossy.name + "|")] == [f"{lossy.name}|0"]
    assert "pfcwd_sw_enable" not in db["PORT_QOS_MAP"][lossy.name]
    assert db["BUFFER_QUEUE"][f"{lossy.name}|3"] == {"profile": "q_lossy_profile"}
    assert all(db["PORT_QOS_MAP"][i.name]["pfc_enable"] == "3" for i in dev.interfaces[1:])


def test_no_watchdog_when_disabled() -> None:
    db = config_db(fabric(qos__pfc={"watchdog": None}).devices["leaf1"])
    assert "PFC_WD" not in db


# --- hashing and adaptive routing ----------------------------------------------------------------------


def test_switch_hash(lab: FabricPlan) -> None:
    db = config_db(lab.devices["leaf1"])
    assert db["SWITCH_HASH"] == {
        "GLOBAL": {"ecmp_hash": ["SRC_IP", "DST_IP", "IP_PROTOCOL", "L4_SRC_PORT", "L4_DST_PORT"]}
    }


def test_rdma_bth_hash_refused_with_the_reason() -> None:
    # RDMA_BTH_* hashing is in no SONiC release's YANG (open sonic-buildimage PR #27335): refused, not rendered.
    plan = fabric_for(PLATFORM, "clos3-24k.yaml")
    with pytest.raises(UnsupportedFeature, match=r"no SONiC release.*#27335"):
        config_db(plan.devices_of("superspine")[0])


def test_each_tier_has_its_own_hash_seed_type() -> None:
    # SON-5: orchagent's switch.json.j2 seeds by substring of DEVICE_METADATA.type (ToRRouter 0, LeafRouter 10,
    # SpineRouter 25 - "SpineRouter" also matches UpperSpineRouter): the three tiers get three seeds.
    plan = fabric_for(PLATFORM, "clos3-24k.yaml", load_balancing=NO_BTH)
    types = {role: config_db(plan.devices_of(role)[0])["DEVICE_METADATA"]["localhost"]["type"]
             for role in ("leaf", "spine", "superspine")}  # fmt: skip
    assert types == {"leaf": "ToRRouter", "spine": "LeafRouter", "superspine": "SpineRouter"}
    seed = {"ToRRouter": 0, "LeafRouter": 10, "SpineRouter": 25}  # the template's first match wins
    assert len({seed[next(k for k in seed if k in t)] for t in types.values()}) == 3


@pytest.mark.parametrize("knob", ["adaptive_routing", "packet_spraying"])
def test_ars_refused_with_the_reason(knob: str) -> None:
    # The ARS tables are in no SONiC release (sonic-ars.yang is open sonic-buildimage PR #22264).
    lb = {"hash_fields": ["src_ip", "dst_ip", "ip_protocol", "src_port", "dst_port"], knob: True}
    with pytest.raises(UnsupportedFeature, match=r"no SONiC release.*#22264"):
        config_db(fabric(load_balancing=lb).devices["leaf1"])


def test_dynamic_buffer_model_tables(lab: FabricPlan) -> None:
    # The lossless buffer model SONiC's dynamic headroom calculation needs (FIDELITY_REVIEW: no lossless PG
    # ever got headroom without the pools, profiles, profile lists and the two parameter tables).
    db = config_db(lab.devices["leaf1"])
    assert db["DEVICE_METADATA"]["localhost"]["buffer_model"] == "dynamic"
    assert set(db["BUFFER_POOL"]) == {"ingress_lossless_pool", "egress_lossless_pool", "egress_lossy_pool"}
    for row in db["BUFFER_PROFILE"].values():
        assert row["pool"] in db["BUFFER_POOL"]
    for table in ("BUFFER_PG", "BUFFER_QUEUE"):
        assert {r["profile"] for r in db[table].values()} - {"NULL"} <= set(db["BUFFER_PROFILE"])
    for table in ("BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST"):
        assert set(db[table]) == set(db["PORT"])
        assert all(set(r["profile_list"]) <= set(db["BUFFER_PROFILE"]) for r in db[table].values())
    assert db["DEFAULT_LOSSLESS_BUFFER_PARAMETER"]["AZURE"]["default_dynamic_th"] == "0"
    assert set(db["LOSSLESS_TRAFFIC_PATTERN"]["AZURE"]) == {"mtu", "small_packet_percentage"}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"load_balancing__hash_seed": 42}, "hash seed"),
        ({"qos__buffers": {"headroom": "200KB"}}, "headroom"),
        ({"qos__pfc": {"watchdog": {"detect": "200ms", "restore": "400ms", "polling": "300ms"}}}, "polling"),
        (
            {
                "qos__classes": [
                    {
                        "name": "roce",
                        "kind": "roce",
                        "dscp": [26],
                        "priority": 3,
                        "lossless": True,
                        "weight": 50,
                        "ecn": {"kmin": "150KB", "kmax": "1500KB", "pmax": 100, "weight": 2},
                    },
                    {"name": "cnp", "kind": "cnp", "dscp": [48], "priority": 6, "scheduling": "strict"},
                    {"name": "default", "kind": "default", "priority": 0, "weight": 50},
                ]
            },
            "weight 2",
        ),
    ],
)
def test_unsupported_features_refuse(overrides: dict[str, Any], message: str) -> None:
    dev = fabric(**overrides).devices["leaf1"]
    with pytest.raises(UnsupportedFeature, match=message):
        render(dev)


# --- FRR ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("addressing", ADDRESSING)
def test_frr_every_neighbor(addressing: str) -> None:
    for dev in fabric(addressing).devices.values():
        assert dev.bgp is not None
        frr = render(dev)[1]
        assert f"router bgp {dev.asn}\n bgp router-id {dev.loopback}\n" in frr
        for n in dev.bgp.neighbors:
            if n.address:
                assert (
                    f" neighbor {n.address} peer-group FABRIC\n neighbor {n.address} remote-as {n.remote_as}\n" in frr
                )
            else:
                assert f" neighbor {n.interface} interface peer-group FABRIC\n" in frr
                assert f" neighbor {n.interface} remote-as {n.remote_as}\n" in frr
        for net in dev.bgp.networks:
            assert f"  network {net}\n" in frr
        assert f"  maximum-paths {dev.bgp.max_paths}\n" in frr
        db = config_db(dev)
        numbered = {n.address for n in dev.bgp.neighbors if n.address}
        assert set(db.get("BGP_NEIGHBOR", {})) == numbered


def test_frr_bfd_on_the_peer_group() -> None:
    leaf = lab_pair(PLATFORM, "unnumbered", underlay__bfd=True)["leaf"]
    assert " neighbor FABRIC bfd\n" in render(leaf)[1]
    assert "bfd" not in render(lab_pair(PLATFORM, "unnumbered")["leaf"])[1]


@pytest.mark.skipif(shutil.which("vtysh") is None, reason="FRR's vtysh is not installed")
@pytest.mark.parametrize(("addressing", "bfd"), [("unnumbered", False), ("p2p31", False), ("unnumbered", True)])
def test_frr_conf_passes_vtysh_dryrun(addressing: str, bfd: bool, tmp_path: Path) -> None:
    for dev in lab_pair(PLATFORM, addressing, underlay__bfd=bfd).values():
        run = vtysh_check(render(dev)[1], tmp_path)
        assert run.returncode == 0, f"vtysh rejected {dev.name}.frr.conf: {run.stdout}{run.stderr}"


def test_vtysh_dryrun_can_fail(tmp_path: Path) -> None:
    """The dry-run check above is only meaningful if FRR rejects a bad line."""
    if shutil.which("vtysh") is None:
        pytest.skip("FRR's vtysh is not installed")
    assert vtysh_check("router bgp 65000\n neighbor FABRIC remote-ass external\n", tmp_path).returncode != 0


# --- speed -----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_every_clos3_device_renders() -> None:
    """All 1,692 SONiC configs (config_db.json + frr.conf) render; their speed is measured in bench/build_bench.py."""
    devices = list(fabric_for(PLATFORM, "clos3-24k.yaml", load_balancing=NO_BTH).devices.values())
    assert len(devices) == 1692
    for dev in devices:
        render(dev)


def test_traditional_buffer_model_leaves_the_sku_tables() -> None:
    # A Tomahawk 5 (strata) box: SONiC sizes its lossless PGs from the SKU's pg_profile_lookup.ini, so netfab
    # writes the model and the cable lengths, and no pool/profile/PG names the SKU may not have.
    model = "sonic-arista-7060x6-64pe-o128s2"
    plan = fabric(topology__leaf__model=model, topology__spine__model=model,
                  topology__leaf__ports=128, topology__spine__ports=128)  # fmt: skip
    db = config_db(plan.devices_of("leaf")[0])
    assert db["DEVICE_METADATA"]["localhost"]["buffer_model"] == "traditional"
    assert not [t for t in db if t.startswith("BUFFER_") or t.endswith("_BUFFER_PARAMETER")]
    assert db["CABLE_LENGTH"]["AZURE"] and db["PORT_QOS_MAP"][next(iter(db["PORT"]))]["pfc_enable"] == "3"
