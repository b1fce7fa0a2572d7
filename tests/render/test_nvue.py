"""NVUE (Cumulus Linux) startup.yaml rendering: golden files, startup.yaml shape, and per-feature checks that do
not depend on the golden (ECN bytes, PFC priority, watchdog, BGP neighbors, hashing, refusals)."""

from __future__ import annotations

import math
from typing import Any

import pytest
import yaml
from cli_roundtrip import check_golden, fabric_for, lab_pair, render_text

from netfab.design import DevicePlan, FabricPlan
from netfab.render.environment import UnsupportedFeature

PLATFORM = "nvidia_cumulus"
ADDRESSING = ("unnumbered", "p2p31")

# Keys of the `- set:` document the renderer may write (NVUE object model, CL 5.x).
SET_KEYS = {"system", "interface", "qos", "router", "vrf"}
QOS_KEYS = {
    "mapping", "egress-queue-mapping", "pfc", "traffic-pool", "pfc-watchdog", "congestion-control", "egress-scheduler",
    "egress-shaper",
}  # fmt: skip


def fabric(addressing: str = "unnumbered", **overrides: Any) -> FabricPlan:
    """The lab fabric on NVUE with the intent's default PFC watchdog (the lab intent turns it off for FRR)."""
    overrides.setdefault("qos__pfc", {})
    return fabric_for(PLATFORM, underlay__addressing=addressing, **overrides)


def load(dev: DevicePlan) -> dict[str, Any]:
    doc = yaml.safe_load(render_text(dev))
    assert isinstance(doc, list) and len(doc) == 1 and list(doc[0]) == ["set"], "startup.yaml is [- set: {...}]"
    return doc[0]["set"]


@pytest.fixture(scope="module")
def lab() -> FabricPlan:
    return fabric()


# --- golden ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("addressing", ADDRESSING)
@pytest.mark.parametrize("role", ["leaf", "spine"])
def test_golden(role: str, addressing: str) -> None:
    dev = lab_pair(PLATFORM, addressing)[role]
    check_golden(PLATFORM, f"{role}-{addressing}.yaml", render_text(dev))


# --- shape and hygiene ----------------------------------------------------------------------------------


def test_startup_yaml_shape(lab: FabricPlan) -> None:
    doc = load(lab.devices["leaf1"])
    assert set(doc) == SET_KEYS
    assert set(doc["qos"]) == QOS_KEYS
    assert doc["system"]["hostname"] == "leaf1"
    # No os_version: the newest release's shape (CL >= 5.15: ipv4, state enabled).
    assert doc["interface"]["lo"] == {"ipv4": {"address": {"10.0.16.1/32": {}}}, "type": "loopback"}
    assert doc["router"]["bgp"]["state"] == "enabled"


def test_header_deterministic_no_trailing_whitespace(lab: FabricPlan) -> None:
    dev = lab.devices["spine1"]
    text = render_text(dev)
    assert text == render_text(dev)
    assert text.startswith("# netfab NVUE startup.yaml - fabric lab, device spine1, role spine\n")
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert all(line == line.rstrip() for line in text.splitlines())


# --- interfaces, MTU, addressing -----------------------------------------------------------------------


@pytest.mark.parametrize("addressing", ["unnumbered", "p2p31"])
def test_interfaces_mtu_and_addresses(addressing: str) -> None:
    plan = fabric(addressing=addressing)
    for dev in plan.devices.values():
        itfs = load(dev)["interface"]
        assert set(itfs) == {"lo"} | {i.name for i in dev.interfaces}
        for i in dev.interfaces:
            got = itfs[i.name]
            assert got["type"] == "swp"
            assert got["link"]["mtu"] == i.mtu == 9216
            if i.address:
                assert got["ipv4"]["address"] == {i.address: {}}
            else:
                assert "ipv4" not in got, "unnumbered fabric links carry no IPv4 address"


# --- QoS ------------------------------------------------------------------------------------------------


def test_dscp_map_and_queue_mapping(lab: FabricPlan) -> None:
    dev = lab.devices["leaf1"]
    qos = load(dev)["qos"]
    mapping = qos["mapping"]["default-global"]
    assert mapping["trust"] == "l3"
    assert {int(d): v["switch-priority"] for d, v in mapping["dscp"].items()} == dev.qos.dscp_to_queue
    assert mapping["dscp"]["26"]["switch-priority"] == 3
    sp_tc = qos["egress-queue-mapping"]["default-global"]["switch-priority"]
    assert {int(k): v["traffic-class"] for k, v in sp_tc.items()} == {q.queue: q.queue for q in dev.qos.queues}


def test_pcp_trust() -> None:
    mapping = load(fabric(qos__trust="pcp").devices["leaf1"])["qos"]["mapping"]["default-global"]
    assert mapping["trust"] == "l2" and "dscp" not in mapping
    assert {int(k): v["switch-priority"] for k, v in mapping["pcp"].items()} == {p: p for p in range(8)}


def test_pfc_priority_3_and_cable_length() -> None:
    plan = fabric_for(PLATFORM, "rail-4su.yaml")
    for dev in plan.devices.values():
        pfc = load(dev)["qos"]["pfc"]
        assert list(pfc) == ["default-global"], "every port lossless: the global profile covers them"
        profile = pfc["default-global"]
        assert set(profile["switch-priority"]) == {"3"}
        assert profile["tx"] == profile["rx"] == "enable"
        longest = max(i.cable_m for i in dev.interfaces if i.lossless)
        assert profile["cable-length"] == math.ceil(longest)
    # leaves mix 5 m host cables with 50 m uplinks: the longest sizes the headroom.
    assert load(plan.devices_of("leaf")[0])["qos"]["pfc"]["default-global"]["cable-length"] == 50


def test_partly_lossy_switch_binds_a_named_profile(lab: FabricPlan) -> None:
    dev = lab.devices["leaf1"]
    lossy = dev.interfaces[0]
    lossy.lossless = False  # the lab plan is module-scoped: restore below
    try:
        doc = load(dev)
    finally:
        lossy.lossless = True
    assert list(doc["qos"]["pfc"]) == ["netfab-lossless"]
    assert "pfc" not in doc["interface"][lossy.name]["qos"]
    for i in dev.interfaces[1:]:
        assert doc["interface"][i.name]["qos"]["pfc"] == {"profile": "netfab-lossless"}


def test_ecn_thresholds_in_bytes(lab: FabricPlan) -> None:
    dev = lab.devices["spine1"]
    tcs = load(dev)["qos"]["congestion-control"]["default-global"]["traffic-class"]
    for q in dev.qos.queues:
        got = tcs[str(q.queue)]
        if q.ecn is None:
            assert got == {"ecn": "disable"}
            continue
        assert got["ecn"] == "enable"
        assert got["min-threshold"] == q.ecn.kmin_bytes == 150_000
        assert got["max-threshold"] == q.ecn.kmax_bytes == 1_500_000
        assert got["probability"] == round(q.ecn.pmax_percent) == 100
        assert got["red"] == "disable"


def test_scheduler(lab: FabricPlan) -> None:
    dev = lab.devices["leaf1"]
    tcs = load(dev)["qos"]["egress-scheduler"]["default-global"]["traffic-class"]
    # NV-2: all eight TCs are written; an unused one gets DWRR 0 (not NVUE's 12-13 % default, which would take
    # the total past 100 %).
    unused = {"bw-percent": 0, "mode": "dwrr"}
    assert tcs == {
        "0": {"bw-percent": 50, "mode": "dwrr"},
        "1": unused, "2": unused,
        "3": {"bw-percent": 50, "mode": "dwrr"},
        "4": unused, "5": unused,
        "6": {"mode": "strict"},
        "7": unused,
    }  # fmt: skip
    assert sum(v.get("bw-percent", 0) for v in tcs.values()) <= 100


def test_pfc_watchdog(lab: FabricPlan) -> None:
    dev = lab.devices["leaf1"]
    doc = load(dev)
    wd = dev.qos.watchdog
    assert wd is not None
    assert doc["qos"]["pfc-watchdog"] == {"polling-interval": 100, "robustness": 2}  # 200 ms detect / 100 ms poll
    for i in dev.interfaces:
        assert doc["interface"][i.name]["qos"]["pfc-watchdog"] == {"state": "enable"}


def test_no_watchdog_when_disabled() -> None:
    dev = fabric(qos__pfc={"watchdog": None}).devices["leaf1"]
    doc = load(dev)
    assert "pfc-watchdog" not in doc["qos"]
    assert all(set(v.get("qos", {})) <= {"egress-shaper"} for v in doc["interface"].values())


# --- BGP ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("addressing", ["unnumbered", "p2p31"])
def test_every_bgp_neighbor(addressing: str) -> None:
    for dev in fabric(addressing=addressing).devices.values():
        assert dev.bgp is not None
        doc = load(dev)
        assert doc["router"]["bgp"] == {"autonomous-system": dev.asn, "state": "enabled", "router-id": dev.loopback}
        bgp = doc["vrf"]["default"]["router"]["bgp"]
        assert len(bgp["neighbor"]) == len(dev.bgp.neighbors) > 0
        for n in dev.bgp.neighbors:
            got = bgp["neighbor"][n.address or n.interface]
            assert got["remote-as"] == n.remote_as
            assert got["type"] == ("numbered" if n.address else "unnumbered")
        af = bgp["address-family"]["ipv4-unicast"]
        assert set(af["network"]) == set(dev.bgp.networks)
        assert af["multipaths"]["ebgp"] == dev.bgp.max_paths


def test_bfd_per_neighbor() -> None:
    leaf = lab_pair(PLATFORM, "unnumbered", underlay__bfd=True)["leaf"]
    doc = load(leaf)
    # CL >= 5.15: a neighbor names a BFD profile defined under router bfd (5.14 and earlier: bfd enable on).
    assert doc["router"]["bfd"] == {"profile": {"netfab": {}}, "state": "enabled"}
    for neighbor in doc["vrf"]["default"]["router"]["bgp"]["neighbor"].values():
        assert neighbor["bfd"] == {"profile": "netfab"}
    old = load(lab_pair(PLATFORM, "unnumbered", underlay__bfd=True, topology__leaf__os_version="5.14.0")["leaf"])
    assert "bfd" not in old["router"]
    for neighbor in old["vrf"]["default"]["router"]["bgp"]["neighbor"].values():
        assert neighbor["bfd"] == {"enable": "on"}


# --- hashing and adaptive routing ----------------------------------------------------------------------


def test_ecmp_hash_fields_and_seed(lab: FabricPlan) -> None:
    dev = lab.devices["leaf1"]
    fwd = load(dev)["system"]["forwarding"]
    on = {k for k, v in fwd["ecmp-hash"].items() if v == "enabled"}
    assert on == {"source-ip", "destination-ip", "ip-protocol", "source-port", "destination-port"}
    assert set(fwd["ecmp-hash"].values()) == {"enabled", "disabled"}
    assert fwd["hash-seed"] == dev.hash_seed
    # per-device seeds (no intent seed): spines and leaves must not share one
    assert len({d.hash_seed for d in lab.devices.values()}) == len(lab.devices)


@pytest.mark.parametrize("knob", ["adaptive_routing", "packet_spraying"])
def test_adaptive_routing_on_fabric_ports(knob: str) -> None:
    # rail-4su asks for adaptive routing at 400G; packet spraying alone maps onto the same per-packet AR.
    lb = {"hash_fields": ["src_ip", "dst_ip", "ip_protocol", "src_port", "dst_port"], knob: True}
    plan = fabric_for(PLATFORM, "rail-4su.yaml", load_balancing=lb)
    leaf = plan.devices_of("leaf")[0]
    doc = load(leaf)
    assert doc["router"]["adaptive-routing"] == {"state": "enabled"}
    for i in leaf.interfaces:
        got = doc["interface"][i.name].get("router")
        assert got == ({"adaptive-routing": {"state": "enabled"}} if i.role != "host" else None)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"load_balancing__hash_fields": ["src_ip", "dst_ip", "src_port", "dst_port", "rocev2_dest_qp"]},
            "rocev2_dest_qp",
        ),
        ({"load_balancing__hash_fields": ["src_ip", "src_port", "dst_port"]}, "src_ip/dst_ip"),
        ({"load_balancing__adaptive_routing": True}, "200G/400G"),  # the lab runs 100G
        ({"load_balancing__packet_spraying": True}, "200G/400G"),  # = adaptive routing on Spectrum
        ({"qos__pfc": {"watchdog": {"action": "forward"}}}, "forward"),
        ({"qos__buffers": {"headroom": "200KB"}}, "headroom"),
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
        render_text(dev)


# --- speed -----------------------------------------------------------------------------------------------


def test_every_rail_4su_device_renders() -> None:
    """Every device of rail-4su renders (speed: bench/build_bench.py)."""
    plan = fabric_for(PLATFORM, "rail-4su.yaml")
    for dev in plan.devices.values():
        assert "router:" in render_text(dev), dev.name
