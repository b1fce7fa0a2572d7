"""Juniper Junos renderer: golden set files, hier_config round trip, and structural checks independent of the golden."""

from __future__ import annotations

import re

import pytest
from cli_roundtrip import assert_roundtrip, check_golden, config_lines, lab_pair, render_text
from hier_config import Platform

from netfab.capabilities import capabilities_for
from netfab.design import DevicePlan
from netfab.render.environment import UnsupportedFeature, platform_data

P = Platform.JUNIPER_JUNOS
BARE_BOX = "set system host-name localhost\nset interfaces em0 unit 0 family inet address 192.0.2.30/24\n"
ADDRESSING = ("unnumbered", "p2p31")
COS = "set class-of-service"


def set_lines(dev: DevicePlan) -> list[str]:
    return [line.strip() for line in config_lines(P, render_text(dev))]


@pytest.mark.parametrize("addressing", ADDRESSING)
@pytest.mark.parametrize("role", ["leaf", "spine"])
def test_golden_and_roundtrip(role: str, addressing: str) -> None:
    text = render_text(lab_pair("juniper_junos", addressing)[role])
    check_golden("juniper_junos", f"{role}-{addressing}.set", text)
    assert_roundtrip(P, text, BARE_BOX)
    assert all(line.startswith(("set ", "# ")) for line in text.splitlines()), "set lines and comments only"


def test_classifier_covers_every_dscp_once_in_6_bit_binary() -> None:
    dev = lab_pair("juniper_junos", "p2p31")["leaf"]
    names = {q.queue: q.class_name for q in dev.qos.queues}
    pattern = re.compile(
        rf"{COS} classifiers dscp NETFAB-DSCP forwarding-class (\S+) loss-priority low code-points ([01]{{6}})"
    )
    seen: dict[int, str] = {}
    for line in set_lines(dev):
        if m := pattern.fullmatch(line):
            assert int(m[2], 2) not in seen
            seen[int(m[2], 2)] = m[1]
    assert seen == {d: names[q] for d, q in dev.qos.dscp_to_queue.items()}


def test_lossless_class_pfc_on_priority_3_and_every_port() -> None:
    dev = lab_pair("juniper_junos", "p2p31")["leaf"]
    lines = set(set_lines(dev))
    assert {
        f"{COS} forwarding-classes class roce queue-num 3",
        f"{COS} forwarding-classes class roce no-loss",
        f"{COS} forwarding-classes class roce pfc-priority 3",
        f"{COS} congestion-notification-profile NETFAB-PFC input dscp code-point 011010 pfc",
        f"{COS} congestion-notification-profile NETFAB-PFC output ieee-802.1 code-point 011 flow-control-queue 3",
    } <= lines
    assert f"{COS} forwarding-classes class cnp no-loss" not in lines
    for intf in dev.interfaces:
        assert f"{COS} interfaces {intf.name} congestion-notification-profile NETFAB-PFC" in lines
        assert f"{COS} interfaces {intf.name} unit 0 classifiers dscp NETFAB-DSCP" in lines
        # JUN-5: Junos' physical mtu is the media MTU (IP MTU + the 14-byte Ethernet header).
        assert f"set interfaces {intf.name} mtu {intf.mtu + 14}" in lines


def test_watchdog_in_polling_intervals_and_ms() -> None:
    wd = {"detect": "300ms", "restore": "1s", "polling": "50ms", "action": "forward"}
    lines = set(set_lines(lab_pair("juniper_junos", "p2p31", qos__pfc={"watchdog": wd})["leaf"]))
    prefix = f"{COS} congestion-notification-profile NETFAB-PFC pfc-watchdog"
    assert {
        f"{prefix} poll-interval 50",
        f"{prefix} detection 6",
        f"{prefix} recovery 1000",
        f"{prefix} watchdog-action forward",
    } <= lines


def test_ecn_fill_levels_from_bytes() -> None:
    # No model named: the platform's planning buffer (shared x queue share), as lint notes (CAP025 info).
    buf = capabilities_for("juniper_junos").buffer.queue_bytes
    assert buf is not None
    classes = [
        {
            "name": "roce",
            "kind": "roce",
            "dscp": [26],
            "priority": 3,
            "lossless": True,
            "weight": 50,
            "ecn": {"kmin": f"{buf * 20 // 100 + 1}B", "kmax": f"{buf * 60 // 100}B", "pmax": 25},
        },
        {"name": "cnp", "kind": "cnp", "dscp": [48], "priority": 6, "scheduling": "strict"},
        {"name": "default", "kind": "default", "priority": 0, "weight": 50},
    ]
    lines = set_lines(lab_pair("juniper_junos", "p2p31", qos__classes=classes)["leaf"])
    dp = f"{COS} drop-profiles NETFAB-ECN-ROCE interpolate"
    # Kmin one byte above 20 % rounds up to 21 %: the marking threshold never moves below the intent's.
    assert [x for x in lines if x.startswith(dp)] == [
        f"{dp} fill-level 21",
        f"{dp} fill-level 60",
        f"{dp} drop-probability 0",
        f"{dp} drop-probability 25",
    ]
    assert f"{COS} schedulers NETFAB-ROCE explicit-congestion-notification" in lines
    assert (
        f"{COS} schedulers NETFAB-ROCE drop-profile-map loss-priority any protocol any drop-profile NETFAB-ECN-ROCE"
        in lines
    )
    assert f"{COS} schedulers NETFAB-CNP priority strict-high" in lines
    assert f"{COS} schedulers NETFAB-ROCE transmit-rate percent 50" in lines


@pytest.mark.parametrize("addressing", ADDRESSING)
def test_every_bgp_neighbor_present(addressing: str) -> None:
    for dev in lab_pair("juniper_junos", addressing).values():
        assert dev.bgp is not None
        lines = set(set_lines(dev))
        assert f"set routing-options autonomous-system {dev.asn}" in lines
        assert "set protocols bgp group fabric multipath multiple-as" in lines
        assert {f"set policy-options prefix-list NETFAB-NETWORKS {n}" for n in dev.bgp.networks} <= lines
        for n in dev.bgp.neighbors:
            if addressing == "p2p31":
                assert f"set protocols bgp group fabric neighbor {n.address} peer-as {n.remote_as}" in lines
            else:
                assert (
                    f"set protocols bgp group fabric dynamic-neighbor NETFAB-FABRIC peer-auto-discovery "
                    f"interface {n.interface}.0" in lines
                )
                assert f"set policy-options as-list NETFAB-FABRIC-PEERS members {n.remote_as}" in lines
                assert f"set protocols router-advertisement interface {n.interface}.0" in lines
        extended = "set protocols bgp group fabric family inet unicast extended-nexthop"
        assert (extended in lines) == (addressing == "unnumbered")


def test_hashing_fields_seed_and_qp_note() -> None:
    fields = ["src_ip", "dst_ip", "src_port", "dst_port", "rocev2_dest_qp"]
    dev = lab_pair("juniper_junos", "p2p31", load_balancing__hash_fields=fields)["leaf"]
    text = render_text(dev)
    lines = set(set_lines(dev))
    assert "set forwarding-options enhanced-hash-key family inet no-protocol" in lines
    assert not [x for x in lines if "no-l4-" in x or "no-ipv4-" in x]
    assert f"set forwarding-options enhanced-hash-key hash-seed {dev.hash_seed}" in lines
    assert "set routing-options forwarding-table export NETFAB-ECMP" in lines
    # QP hashing is on by default on EVO QFX5240: a comment, never a knob.
    assert "# rocev2_dest_qp: Junos EVO (QFX5240) hashes the RoCEv2 destination QP by default" in text
    assert not [x for x in lines if "qp" in x.lower()]


def test_dlb_modes() -> None:
    ar = set(set_lines(lab_pair("juniper_junos", "p2p31", load_balancing__adaptive_routing=True)["leaf"]))
    assert "set forwarding-options enhanced-hash-key ecmp-dlb flowlet inactivity-interval 256" in ar
    spray = set(set_lines(lab_pair("juniper_junos", "p2p31", load_balancing__packet_spraying=True)["leaf"]))
    assert "set forwarding-options enhanced-hash-key ecmp-dlb per-packet" in spray


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"load_balancing__hash_fields": ["src_ip", "dst_ip", "inner_src_ip"]}, "inner_src_ip"),
        ({"load_balancing__hash_fields": ["src_ip", "dst_ip", "ingress_port"]}, "ingress_port"),
        ({"qos__trust": "pcp"}, "trust pcp"),
        ({"qos__buffers": {"headroom": "200KB"}}, "headroom"),
        ({"qos__pfc": {"watchdog": {"action": "alert"}}}, "action alert"),
        ({"qos__pfc": {"watchdog": {"detect": "250ms", "polling": "100ms"}}}, "polling intervals"),
        ({"qos__pfc": {"priorities": [3, 4]}}, "PFC priorities"),
    ],
)
def test_unsupported_features_are_refused(overrides: dict[str, object], message: str) -> None:
    leaf = lab_pair("juniper_junos", "p2p31", **overrides)["leaf"]
    with pytest.raises(UnsupportedFeature, match=message):
        render_text(leaf)


def test_ecn_beyond_the_queue_buffer_is_refused() -> None:
    buf = capabilities_for("juniper_junos").buffer.queue_bytes
    assert buf is not None
    classes = [
        {
            "name": "roce",
            "kind": "roce",
            "dscp": [26],
            "priority": 3,
            "lossless": True,
            "weight": 100,
            "ecn": {"kmin": "150KB", "kmax": f"{buf + 1}B"},
        },
        {"name": "default", "kind": "default", "priority": 0},
    ]
    with pytest.raises(UnsupportedFeature, match="fill levels"):
        render_text(lab_pair("juniper_junos", "p2p31", qos__classes=classes)["leaf"])


ECN_ROCE = [
    {"name": "roce", "kind": "roce", "dscp": [26], "priority": 3, "lossless": True, "weight": 50,
     "ecn": {"kmin": "150KB", "kmax": "1500KB", "pmax": 100}},
    {"name": "cnp", "kind": "cnp", "dscp": [48], "priority": 6, "scheduling": "strict"},
    {"name": "default", "kind": "default", "priority": 0, "weight": 50},
]  # fmt: skip


def _tails(dev: DevicePlan, prefix: str) -> list[str]:
    """The rest of every set line starting with `prefix`, in order."""
    return [x.removeprefix(prefix) for x in set_lines(dev) if x.startswith(prefix)]


def _fill_levels(leaf: DevicePlan) -> list[str]:
    return _tails(leaf, f"{COS} drop-profiles NETFAB-ECN-ROCE interpolate fill-level ")


def test_ecn_fill_levels_follow_the_models_buffer() -> None:
    # JUN-2: the fill levels are a percent of the switch's own queue buffer (here a declared 4 MB shared buffer,
    # a 2 MB queue at the platform's 50 % share), not of an assumed one: 150 KB = 8 %, 1.5 MB = 75 %; and a box
    # with 10x the buffer gets 10x smaller percentages.
    small = lab_pair("juniper_junos", "p2p31", qos__classes=ECN_ROCE, topology__leaf__hardware={"buffer": "4000000B"})
    big = lab_pair("juniper_junos", "p2p31", qos__classes=ECN_ROCE, topology__leaf__hardware={"buffer": "40000000B"})
    assert _fill_levels(small["leaf"]) == ["8", "75"]
    assert _fill_levels(big["leaf"]) == ["1", "8"]
    assert "# roce: Kmin 150000 B = 8 %, Kmax 1500000 B = 75 % of the 2000000 B queue buffer" in render_text(
        small["leaf"]
    )


def test_ecn_on_a_model_without_a_public_buffer_is_refused() -> None:
    # JUN-2: the PTX10008 (Express 5) buffer is not public: no assumed size, a refusal naming the override.
    pair = lab_pair("juniper_junos", "p2p31", qos__classes=ECN_ROCE, topology__leaf__model="juniper-ptx10008")
    with pytest.raises(UnsupportedFeature, match=r"not public; declare it under topology.<tier>.hardware.buffer"):
        render_text(pair["leaf"])
    declared = lab_pair(
        "juniper_junos",
        "p2p31",
        qos__classes=ECN_ROCE,
        topology__leaf__model="juniper-ptx10008",
        topology__leaf__hardware={"buffer": "4000000B"},
    )
    assert _fill_levels(declared["leaf"]) == ["8", "75"]


def test_bfd_timers_from_platform_data() -> None:
    bfd = platform_data("juniper_junos")["bfd"]
    lines = set(set_lines(lab_pair("juniper_junos", "p2p31", underlay__bfd=True)["leaf"]))
    assert {
        f"set protocols bgp group fabric bfd-liveness-detection minimum-interval {bfd['minimum_interval_ms']}",
        f"set protocols bgp group fabric bfd-liveness-detection multiplier {bfd['multiplier']}",
    } <= lines


def test_ecn_fill_levels_of_a_catalogued_qfx5240() -> None:
    # Juniper publishes the QFX5240's 165 MB packet buffer: a 82.5 MB queue at the 50 % share, so 150 KB/1.5 MB
    # are fill levels 1/2 % (with the old assumed 2 MB queue they were 8/75 %).
    pair = lab_pair("juniper_junos", "p2p31", qos__classes=ECN_ROCE, topology__leaf__model="juniper-qfx5240-64od")
    assert _fill_levels(pair["leaf"]) == ["1", "2"]
    assert "queue buffer (Tomahawk 5 (Juniper QFX5240-64OD))" in render_text(pair["leaf"])


def test_shared_buffer_partitions_favour_lossless() -> None:
    # JUN-1: without them RoCE sits in the default 9 % lossless ingress partition; each side totals 100 %.
    partitions = _tails(lab_pair("juniper_junos", "p2p31")["leaf"], f"{COS} shared-buffer ")
    assert partitions == [
        f"{side} buffer-partition {name} percent {pct}"
        for side, name, pct in [("ingress", "lossless", 80), ("ingress", "lossless-headroom", 10),
                                ("ingress", "lossy", 10), ("egress", "lossless", 80), ("egress", "lossy", 10),
                                ("egress", "multicast", 10)]
    ]  # fmt: skip


def test_no_partitions_without_a_lossless_class() -> None:
    lossy = [{"name": "default", "kind": "default", "priority": 0, "weight": 100}]
    leaf = lab_pair("juniper_junos", "p2p31", qos__classes=lossy, qos__pfc={"watchdog": None})["leaf"]
    assert not [x for x in set_lines(leaf) if "shared-buffer" in x]
