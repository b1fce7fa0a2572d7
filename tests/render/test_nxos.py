"""Cisco NX-OS renderer: golden configs, hier_config round trip, and structural checks that do not trust the golden."""

from __future__ import annotations

import dataclasses
import re

import pytest
from cli_roundtrip import assert_nothing_lost, assert_roundtrip, check_golden, lab_pair, render_text
from hier_config import HConfig, Platform

from netfab.render.environment import UnsupportedFeature

P = Platform.CISCO_NXOS
BARE_BOX = "hostname switch\n!\ninterface mgmt0\n  vrf member management\n  ip address 192.0.2.20/24\n"


def section(tree: HConfig, *path: str) -> list[str]:
    node = tree.get_child(equals=path[0])
    for text in path[1:]:
        assert node is not None
        node = node.get_child(equals=text)
    assert node is not None, f"missing section {path}"
    return [c.text for c in node.children]


@pytest.mark.parametrize("role", ["leaf", "spine"])
def test_golden_and_roundtrip(role: str) -> None:
    text = render_text(lab_pair("cisco_nxos", "p2p31")[role])
    check_golden("cisco_nxos", f"{role}-p2p31.cfg", text)
    assert_roundtrip(P, text, BARE_BOX)
    assert not [line for line in text.splitlines() if line != line.rstrip()], "trailing whitespace"


def test_unnumbered_is_refused_with_a_clear_message() -> None:
    leaf = lab_pair("cisco_nxos", "unnumbered")["leaf"]
    with pytest.raises(UnsupportedFeature, match=r"unnumbered.*p2p31"):
        render_text(leaf)


def test_classification_matches_the_dscp_plan() -> None:
    dev = lab_pair("cisco_nxos", "p2p31")["leaf"]
    tree = assert_nothing_lost(P, render_text(dev))
    policy = section(tree, "policy-map type qos NETFAB-CLASSIFY")
    for q in dev.qos.queues:
        if q.kind == "default":
            assert section(tree, "policy-map type qos NETFAB-CLASSIFY", "class class-default") == [
                f"set qos-group {q.queue}"
            ]
            continue
        name = f"NETFAB-{q.class_name.upper()}"
        assert f"class {name}" in policy
        assert section(tree, "policy-map type qos NETFAB-CLASSIFY", f"class {name}") == [f"set qos-group {q.queue}"]
        assert section(tree, f"class-map type qos match-any {name}") == [f"match dscp {d}" for d in q.dscp]


def test_ranges_in_dscp_matches() -> None:
    classes = [
        {"name": "roce", "kind": "roce", "dscp": [24, 25, 26, 27, 30], "priority": 3, "lossless": True, "weight": 50},
        {"name": "cnp", "kind": "cnp", "dscp": [48], "priority": 7, "scheduling": "strict"},
        {"name": "default", "kind": "default", "priority": 0, "weight": 50},
    ]
    text = render_text(lab_pair("cisco_nxos", "p2p31", qos__classes=classes)["leaf"])
    assert "class-map type qos match-any NETFAB-ROCE\n  match dscp 24-27\n  match dscp 30\n" in text


def test_pfc_no_drop_and_lossless_ports() -> None:
    dev = lab_pair("cisco_nxos", "p2p31")["leaf"]
    tree = assert_nothing_lost(P, render_text(dev))
    nq = "policy-map type network-qos NETFAB-NETWORK-QOS"
    assert section(tree, nq, "class type network-qos c-8q-nq3") == ["mtu 9216", "pause pfc-cos 3"]
    assert "pause pfc-cos 6" not in section(tree, nq, "class type network-qos c-8q-nq6")
    assert section(tree, "system qos") == [
        "service-policy type network-qos NETFAB-NETWORK-QOS",
        "service-policy type queuing output NETFAB-EGRESS",
    ]
    assert tree.get_child(equals="priority-flow-control watch-dog-interval on") is not None
    for intf in dev.interfaces:
        body = section(tree, f"interface {intf.name}")
        assert {
            f"mtu {intf.mtu}",
            f"ip address {intf.address}",
            "priority-flow-control mode on",
            "priority-flow-control watch-dog-interval on",
            "service-policy type qos input NETFAB-CLASSIFY",
        } <= set(body)


def test_queuing_and_ecn_in_kbytes() -> None:
    dev = lab_pair("cisco_nxos", "p2p31")["leaf"]
    tree = assert_nothing_lost(P, render_text(dev))
    qp = "policy-map type queuing NETFAB-EGRESS"
    roce = dev.qos.roce_queue
    assert roce is not None and roce.ecn is not None
    body = section(tree, qp, f"class type queuing c-out-8q-q{roce.queue}")
    assert f"bandwidth remaining percent {int(roce.weight or 0)}" in body
    (ecn,) = [x for x in body if x.startswith("random-detect")]
    m = re.fullmatch(
        r"random-detect minimum-threshold (\d+) kbytes maximum-threshold (\d+) kbytes "
        r"drop-probability (\d+) weight (\d+) ecn",
        ecn,
    )
    assert m and (int(m[1]) * 1000, int(m[2]) * 1000) == (roce.ecn.kmin_bytes, roce.ecn.kmax_bytes)
    cnp = dev.qos.cnp_queue
    assert cnp is not None
    assert section(tree, qp, f"class type queuing c-out-8q-q{cnp.queue}") == ["priority level 1"]
    assert section(tree, qp, "class type queuing c-out-8q-q-default") == ["bandwidth remaining percent 50"]
    assert section(tree, qp, "class type queuing c-out-8q-q5") == ["bandwidth remaining percent 0"]


def test_hashing_pairs_and_seed() -> None:
    dev = lab_pair("cisco_nxos", "p2p31")["leaf"]
    text = render_text(dev)
    assert (
        f"\nip load-sharing address source-destination port source-destination universal-id {dev.hash_seed}\n" in text
    )
    addr_only = lab_pair("cisco_nxos", "p2p31", load_balancing__hash_fields=["src_ip", "dst_ip"])["leaf"]
    assert f"\nip load-sharing address source-destination universal-id {addr_only.hash_seed}\n" in render_text(
        addr_only
    )


def test_every_bgp_neighbor_present() -> None:
    for dev in lab_pair("cisco_nxos", "p2p31").values():
        assert dev.bgp is not None
        tree = assert_nothing_lost(P, render_text(dev))
        bgp = f"router bgp {dev.asn}"
        assert tree.get_child(equals="feature bgp") is not None
        af = section(tree, bgp, "address-family ipv4 unicast")
        assert f"maximum-paths {dev.bgp.max_paths}" in af
        assert {f"network {net}" for net in dev.bgp.networks} <= set(af)
        for n in dev.bgp.neighbors:
            body = section(tree, bgp, f"neighbor {n.address}")
            assert f"remote-as {n.remote_as}" in body and "address-family ipv4 unicast" in body


def test_bfd_feature_and_neighbors() -> None:
    leaf = lab_pair("cisco_nxos", "p2p31", underlay__bfd=True)["leaf"]
    tree = assert_nothing_lost(P, render_text(leaf))
    assert tree.get_child(equals="feature bfd") is not None
    assert leaf.bgp is not None
    for n in leaf.bgp.neighbors:
        assert "bfd" in section(tree, f"router bgp {leaf.asn}", f"neighbor {n.address}")


def test_lossy_port_has_pfc_off() -> None:
    dev = lab_pair("cisco_nxos", "p2p31")["leaf"]
    dev.interfaces[0] = dataclasses.replace(dev.interfaces[0], lossless=False)
    body = section(assert_nothing_lost(P, render_text(dev)), f"interface {dev.interfaces[0].name}")
    assert "priority-flow-control mode off" in body and "priority-flow-control watch-dog-interval on" not in body


def test_long_lossless_link_needs_a_pause_buffer_policy() -> None:
    dev = lab_pair("cisco_nxos", "p2p31")["spine"]
    dev.interfaces[0] = dataclasses.replace(dev.interfaces[0], cable_m=300.0)
    with pytest.raises(UnsupportedFeature, match=re.escape("300.0 m")):
        render_text(dev)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"load_balancing__hash_fields": ["src_ip", "dst_ip", "rocev2_dest_qp"]}, "rocev2_dest_qp"),
        ({"load_balancing__hash_fields": ["src_ip", "dst_ip", "src_port"]}, "as a pair"),
        ({"load_balancing__hash_fields": ["src_port", "dst_port"]}, "source and destination address"),
        ({"load_balancing__adaptive_routing": True}, "adaptive routing"),
        ({"load_balancing__packet_spraying": True}, "packet spraying"),
        ({"qos__trust": "pcp"}, "trust pcp"),
        ({"qos__buffers": {"headroom": "200KB"}}, "headroom"),
        ({"qos__pfc": {"watchdog": {"action": "forward"}}}, "action forward"),
    ],
)
def test_unsupported_features_are_refused(overrides: dict[str, object], message: str) -> None:
    leaf = lab_pair("cisco_nxos", "p2p31", **overrides)["leaf"]
    with pytest.raises(UnsupportedFeature, match=message):
        render_text(leaf)
