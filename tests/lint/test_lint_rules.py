"""Every rule against a failing and a passing intent: one table, one test body.

Each row is (rule id, base intent, patch that breaks it, patch that fixes it). The passing patch must not
trigger the rule; the failing one must (other rules may fire too: the row is about this rule only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lint_helpers import CLOS3, CNP, DEFAULT, DELETE, RAIL, ROCE, lint_data, merged, rule_ids

from netfab.lint import default_registry


def classes(*items: dict[str, Any]) -> dict[str, Any]:
    return {"qos": {"classes": list(items)}}


def with_(cls: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = {**cls, **changes}
    return {k: v for k, v in out.items() if v is not DELETE}


def tiers(**tier: Any) -> dict[str, Any]:
    return {"topology": {"leaf": tier, "spine": tier}}


STORAGE = {"name": "storage", "dscp": [24], "priority": 4, "lossless": True, "weight": 0,
           "ecn": {"kmin": "150KB", "kmax": "1500KB"}}  # fmt: skip
NO_WD: dict[str, Any] = {}
NXOS = {**tiers(platform="cisco_nxos"), "underlay": {"addressing": "p2p31"}}
JUNOS = tiers(platform="juniper_junos")
JUNOS_4MB = tiers(platform="juniper_junos", hardware={"buffer": "4000000B"})
EOS_QP = tiers(platform="arista_eos", os_version="4.33.1F")
WD = ("qos", "pfc", "watchdog")

# fmt: off
SN5600_SKU = "sonic-mellanox-sn5600-o128"
QP_FIELDS = ["src_ip", "dst_ip", "ip_protocol", "src_port", "dst_port", "rocev2_dest_qp"]

CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    # --- QoS ---
    ("QOS001", RAIL, classes(ROCE, CNP, with_(DEFAULT, dscp=[26])), classes(ROCE, CNP, with_(DEFAULT, dscp=[10]))),
    ("QOS002", RAIL, {"qos": {"pfc": {"priorities": [4]}}}, {"qos": {"pfc": {"priorities": [3]}}}),
    ("QOS003", RAIL, {"qos": {"pfc": {"priorities": [3, 4]}}}, {"qos": {"pfc": {"priorities": [3]}}}),
    ("QOS004", RAIL, classes(ROCE, with_(CNP, priority=3), DEFAULT), NO_WD),
    ("QOS005", RAIL, classes(with_(ROCE, weight=40), with_(CNP, scheduling="dwrr", weight=10), DEFAULT), NO_WD),
    ("QOS006", RAIL, classes(ROCE, CNP, with_(DEFAULT, priority=3)), NO_WD),
    ("QOS007", RAIL, classes(ROCE, CNP, with_(DEFAULT, weight=30)), NO_WD),
    ("QOS008", RAIL, classes(ROCE, CNP, with_(DEFAULT, weight=DELETE)), NO_WD),
    ("QOS009", RAIL, classes(ROCE, with_(CNP, weight=10), DEFAULT), NO_WD),
    ("QOS010", RAIL, classes(ROCE, CNP, DEFAULT, with_(CNP, name="cnp7", dscp=[56], priority=7)),
     classes(ROCE, CNP, DEFAULT, with_(CNP, name="cnp7", kind="other", dscp=[56], priority=7))),
    ("QOS011", RAIL, classes(ROCE, with_(CNP, max_rate_percent=None), DEFAULT), NO_WD),
    ("QOS012", RAIL, classes(ROCE, CNP, with_(DEFAULT, max_rate_percent=10)), NO_WD),
    # --- ECN ---
    ("ECN001", RAIL, classes(with_(ROCE, ecn={"kmin": "1500KB", "kmax": "150KB"}), CNP, DEFAULT), NO_WD),
    ("ECN002", RAIL, classes(with_(ROCE, ecn={"kmin": "150KB", "kmax": "8MB"}), CNP, DEFAULT), NO_WD),
    ("ECN003", RAIL, classes(with_(ROCE, ecn={"kmin": "10KB", "kmax": "1500KB"}), CNP, DEFAULT), NO_WD),
    ("ECN004", RAIL, classes(with_(ROCE, ecn={"kmin": "150KB", "kmax": "300KB"}), CNP, DEFAULT), NO_WD),
    ("ECN004", RAIL, {"topology": {"servers": {"nic_speed": "100G"}, "leaf": {"uplink_speed": "100G"}},
                      "qos": {"classes": [with_(ROCE, ecn={"kmin": "150KB", "kmax": "40MB"}), CNP, DEFAULT]}},
     {"topology": {"servers": {"nic_speed": "100G"}, "leaf": {"uplink_speed": "100G"}}}),
    ("ECN005", RAIL, classes(ROCE, CNP, with_(DEFAULT, weight=50), with_(STORAGE, ecn=DELETE)),
     classes(ROCE, CNP, DEFAULT, STORAGE)),
    ("ECN006", RAIL, classes(with_(ROCE, ecn={"kmin": "150KB", "kmax": "1500KB", "weight": 9}), CNP, DEFAULT), NO_WD),
    # --- PFC watchdog and headroom ---
    ("PFC001", RAIL, {"qos": {"pfc": {"watchdog": None}}}, NO_WD),
    ("PFC001", RAIL, {"qos": {"pfc": {"watchdog": {"enabled": False}}}}, NO_WD),
    ("PFC002", RAIL, {"qos": {"pfc": {"watchdog": {"detect": "400ms", "restore": "100ms"}}}}, NO_WD),
    ("PFC003", RAIL, {"qos": {"pfc": {"watchdog": {"polling": "500ms"}}}}, NO_WD),
    ("HDR001", RAIL, {"topology": {"leaf": {"uplink_cable_m": 100}}, "qos": {"buffers": {"headroom": "64KB"}}},
     {"topology": {"leaf": {"uplink_cable_m": 100}}, "qos": {"buffers": {"headroom": "127KB"}}}),
    ("HDR001", CLOS3, {"qos": {"buffers": {"headroom": "120KB"}}}, {"qos": {"buffers": {"headroom": "auto"}}}),
    ("HDR002", RAIL, {"qos": {"buffers": {"small_packet_percent": 50}}},
     {"qos": {"buffers": {"small_packet_percent": 50, "cell_bytes": 254}}}),
    # --- MTU and NIC ---
    ("MTU001", RAIL, {"underlay": {"mtu": 4096}}, {"underlay": {"mtu": 4160}}),
    ("NIC001", RAIL, {"nic": {"trust": "pcp"}}, {"nic": {"trust": "dscp"}}),
    ("NIC002", RAIL, {"nic": {"pfc_priorities": [4]}}, {"nic": {"pfc_priorities": [3]}}),
    ("NIC003", RAIL, {"nic": {"dcqcn": {"np": {"cnp_dscp": 46}}}}, {"nic": {"dcqcn": {"np": {"cnp_dscp": 48}}}}),
    ("NIC003", RAIL, {"nic": {"dcqcn": {"np": {"cnp_priority": 7}}}}, {"nic": {"dcqcn": {"enabled": False}}}),
    ("NIC003", RAIL, classes(ROCE, with_(DEFAULT, weight=50)), NO_WD),
    ("NIC004", RAIL, {"nic": {"roce_dscp": 24}}, {"nic": {"roce_dscp": 26}}),
    ("NIC004", RAIL, classes(with_(ROCE, dscp=[]), CNP, DEFAULT), NO_WD),
    ("NIC005", RAIL, classes(with_(ROCE, ecn=DELETE), CNP, DEFAULT),
     {"nic": {"dcqcn": {"enabled": False}}, **classes(with_(ROCE, ecn=DELETE), CNP, DEFAULT)}),
    ("NIC006", RAIL, {"nic": {"dcqcn": {"enabled": False}}}, NO_WD),
    # --- load balancing ---
    ("LB001", RAIL, {"load_balancing": {"hash_fields": ["src_ip", "dst_ip", "ip_protocol", "dst_port"]}},
     {"load_balancing": {"hash_fields": ["src_ip", "dst_ip", "rocev2_dest_qp"]}}),
    ("LB002", RAIL, {"underlay": {"max_paths": 2}}, {"underlay": {"max_paths": 4}}),
    # --- platform capabilities ---
    ("CAP001", RAIL, classes(ROCE, CNP, DEFAULT, STORAGE, with_(STORAGE, name="s2", dscp=[16], priority=2)),
     classes(ROCE, CNP, DEFAULT, STORAGE)),
    ("CAP001", RAIL, {**tiers(platform="cisco_nxos"), "qos": {"pfc": {"priorities": [2, 3, 4, 5]}}},
     {**tiers(platform="cisco_nxos"), "qos": {"pfc": {"priorities": [3]}}}),
    ("CAP002", RAIL,
     {**tiers(platform="arista_eos", os_version="4.32.0F"),
      "load_balancing": {"hash_fields": ["src_ip", "dst_ip", "src_port", "rocev2_dest_qp"]}},
     {**tiers(platform="arista_eos", os_version="4.33.1F"),
      "load_balancing": {"hash_fields": ["src_ip", "dst_ip", "src_port", "rocev2_dest_qp"]}}),
    ("CAP002", RAIL, {**tiers(platform="nvidia_cumulus"), "load_balancing": {"hash_fields": ["rocev2_opcode"]}},
     {"load_balancing": {"hash_fields": ["src_port"]}}),
    ("CAP002", RAIL, {"load_balancing": {"hash_fields": ["src_ip", "dst_ip", "rocev2_dest_qp"]}},
     {**tiers(platform="juniper_junos", os_version="23.4R2"),
      "load_balancing": {"hash_fields": ["src_ip", "dst_ip", "rocev2_dest_qp"]}}),
    ("CAP003", RAIL,
     {**tiers(platform="sonic", os_version="202511"), "load_balancing": {"adaptive_routing": True}},
     {**tiers(platform="sonic", os_version="202511"), "load_balancing": {"adaptive_routing": False}}),
    ("CAP003", RAIL, {**tiers(platform="arista_eos"), "load_balancing": {"adaptive_routing": True}},
     {**tiers(platform="juniper_junos"), "load_balancing": {"adaptive_routing": True}}),
    ("CAP003", RAIL,
     {**tiers(platform="nvidia_cumulus", uplink_speed="800G"), "topology": {
         "leaf": {"platform": "nvidia_cumulus", "uplink_speed": "800G"}, "spine": {"platform": "nvidia_cumulus"}},
      "load_balancing": {"adaptive_routing": True}},
     {**tiers(platform="nvidia_cumulus"), "load_balancing": {"adaptive_routing": True}}),
    ("CAP004", RAIL, {**tiers(platform="arista_eos"), "load_balancing": {"packet_spraying": True}},
     {**tiers(platform="juniper_junos"), "load_balancing": {"packet_spraying": True}}),
    ("CAP026", RAIL, {**NXOS, **classes(ROCE, with_(CNP, max_rate_percent=5), DEFAULT)},
     {**tiers(platform="arista_eos"), **classes(ROCE, with_(CNP, max_rate_percent=5), DEFAULT)}),
    ("CAP027", RAIL, {**tiers(platform="arista_eos"), **classes(ROCE, with_(CNP, max_rate_percent=2.5), DEFAULT)},
     {**tiers(platform="sonic"), **classes(ROCE, with_(CNP, max_rate_percent=2.5), DEFAULT)}),
    ("CAP005", RAIL, {**tiers(platform="nvidia_cumulus"), "qos": {"pfc": {"watchdog": {"action": "forward"}}}},
     {**tiers(platform="nvidia_cumulus"), "qos": {"pfc": {"watchdog": {"action": "drop"}}}}),
    ("CAP005", RAIL, tiers(platform="nvidia_cumulus", os_version="5.5.1"), tiers(platform="nvidia_cumulus",
                                                                              os_version="5.6.0")),
    ("CAP005", RAIL, tiers(platform="frr"), {**tiers(platform="frr"), "qos": {"pfc": {"watchdog": None}}}),
    ("CAP006", RAIL, {**tiers(platform="arista_eos"), "underlay": {"max_paths": 128}},
     {**tiers(platform="arista_eos"), "underlay": {"max_paths": 64}}),
    ("CAP007", RAIL, tiers(platform="sonic", os_version="latest"), tiers(platform="sonic", os_version="202411")),
    ("CAP008", RAIL, {**NXOS, "underlay": {"addressing": "unnumbered"}}, NXOS),
    ("CAP009", RAIL, {"load_balancing": {"hash_seed": 7}}, {**tiers(platform="juniper_junos"),
                                                             "load_balancing": {"hash_seed": 7}}),
    ("CAP010", RAIL, {**NXOS, "load_balancing": {"hash_fields": ["src_ip", "dst_ip", "src_port"]}},
     {**NXOS, "load_balancing": {"hash_fields": ["src_ip", "dst_ip", "src_port", "dst_port"]}}),
    ("CAP010", RAIL, {**tiers(platform="nvidia_cumulus"), "load_balancing": {"hash_fields": ["src_ip", "src_port",
                                                                                           "dst_port"]}},
     {"load_balancing": {"hash_fields": ["src_ip", "src_port", "dst_port"]}}),
    ("CAP011", RAIL, {**NXOS, "load_balancing": {"hash_fields": ["src_port", "dst_port"]}},
     {**NXOS, "load_balancing": {"hash_fields": ["src_ip", "dst_ip", "src_port", "dst_port"]}}),
    ("CAP012", RAIL, {**EOS_QP, "load_balancing": {"hash_fields": ["src_ip", "dst_ip", "src_port", "ingress_port",
                                                                   "rocev2_dest_qp"]}},
     {**EOS_QP, "load_balancing": {"hash_fields": ["src_ip", "dst_ip", "src_port", "rocev2_dest_qp"]}}),
    ("CAP013", RAIL, {**tiers(platform="arista_eos"), "qos": {"trust": "pcp"}, "nic": {"trust": "pcp"}},
     {"qos": {"trust": "pcp"}, "nic": {"trust": "pcp"}}),
    ("CAP014", RAIL, {**NXOS, **classes(ROCE, CNP, DEFAULT, with_(CNP, name="ctl", kind="other", dscp=[56],
                                                                      priority=7))},
     {**NXOS, **classes(with_(ROCE, weight=45), CNP, DEFAULT, with_(CNP, name="ctl", kind="other", dscp=[56],
                                                                   priority=7, scheduling="dwrr", weight=5))}),
    ("CAP015", RAIL, {**tiers(platform="arista_eos"), **classes(with_(ROCE, weight=50.5), CNP,
                                                                 with_(DEFAULT, weight=49.5))},
     classes(with_(ROCE, weight=50.5), CNP, with_(DEFAULT, weight=49.5))),
    ("CAP015", RAIL, classes(with_(ROCE, weight=99.6), CNP, with_(DEFAULT, weight=0.4)),
     classes(with_(ROCE, weight=99), CNP, with_(DEFAULT, weight=1))),
    ("CAP016", RAIL, {**NXOS, **classes(with_(ROCE, ecn={"kmin": "150KB", "kmax": "1500KB", "pmax": 12.5}), CNP,
                                        DEFAULT)},
     classes(with_(ROCE, ecn={"kmin": "150KB", "kmax": "1500KB", "pmax": 12.5}), CNP, DEFAULT)),
    ("CAP017", RAIL, classes(ROCE, CNP, with_(DEFAULT, ecn={"kmin": "150KB", "kmax": "1500KB", "weight": 4})),
     {**NXOS, **classes(ROCE, CNP, with_(DEFAULT, ecn={"kmin": "150KB", "kmax": "1500KB", "weight": 4}))}),
    # A declared 4 MB buffer: a 2 MB queue (the platform's 50 % share), where 3 MB is 150 %.
    ("CAP018", RAIL, merged(JUNOS_4MB, classes(with_(ROCE, ecn={"kmin": "150KB", "kmax": "3MB"}), CNP, DEFAULT)),
     merged(JUNOS_4MB, classes(with_(ROCE, ecn={"kmin": "150KB", "kmax": "1500KB"}), CNP, DEFAULT))),
    # No model named: the 32 MB queue of the platform's planning buffer (64 MB x 50 %).
    ("CAP018", RAIL, {**JUNOS, **classes(with_(ROCE, ecn={"kmin": "150KB", "kmax": "40MB"}), CNP, DEFAULT)},
     {**JUNOS, **classes(with_(ROCE, ecn={"kmin": "150KB", "kmax": "30MB"}), CNP, DEFAULT)}),
    ("CAP018", RAIL, {**JUNOS, **classes(with_(ROCE, ecn={"kmin": "150KB", "kmax": "155KB"}), CNP, DEFAULT)},
     {**JUNOS, **classes(with_(ROCE, ecn={"kmin": "150KB", "kmax": "400KB"}), CNP, DEFAULT)}),
    # JUN-4: a Kmax of exactly the queue buffer is a last fill level of 100 %, which Juniper says not to configure
    ("CAP018", RAIL, merged(JUNOS_4MB, classes(with_(ROCE, ecn={"kmin": "150KB", "kmax": "2MB"}), CNP, DEFAULT)),
     merged(JUNOS_4MB, classes(with_(ROCE, ecn={"kmin": "150KB", "kmax": "1980KB"}), CNP, DEFAULT))),
    ("CAP025", RAIL, tiers(platform="juniper_junos", model="juniper-ptx10008"),
     tiers(platform="juniper_junos", model="juniper-ptx10008", hardware={"buffer": "8GB"})),
    ("CAP019", RAIL, {**JUNOS, **classes(with_(ROCE, weight=100), CNP)},
     {**JUNOS, **classes(with_(ROCE, weight=100), CNP, with_(DEFAULT, dscp=[0], kind="other", weight=DELETE,
                                                             scheduling="strict"))}),
    ("CAP019", RAIL, {**JUNOS, **classes(ROCE, CNP, DEFAULT, with_(DEFAULT, name="bulk", kind="other", dscp=[8],
                                                                   weight=DELETE, scheduling="strict"))},
     {**JUNOS, **classes(ROCE, CNP, DEFAULT, with_(DEFAULT, name="bulk", kind="other", dscp=[8], priority=1,
                                                   weight=DELETE, scheduling="strict"))}),
    ("CAP020", RAIL, {"qos": {"buffers": {"headroom": "200KB"}}}, {"qos": {"buffers": {"headroom": "auto"}}}),
    ("CAP023", RAIL, tiers(platform="nvidia_cumulus", os_version="5.2.0"),
     tiers(platform="nvidia_cumulus", os_version="5.3.0")),
    ("CAP024", RAIL, NXOS, {}),
    ("CAP021", RAIL, merged(NXOS, {"topology": {"leaf": {"uplink_cable_m": 150}}}),
     merged(NXOS, {"topology": {"leaf": {"uplink_cable_m": 100}}})),
    ("CAP022", RAIL, {"qos": {"pfc": {"watchdog": {"detect": "5500ms", "restore": "6s"}}}},
     {"qos": {"pfc": {"watchdog": {"detect": "5s", "restore": "6s"}}}}),
    ("CAP022", RAIL, {**tiers(platform="arista_eos"), "qos": {"pfc": {"watchdog": {"detect": "205ms"}}}},
     {**tiers(platform="arista_eos"), "qos": {"pfc": {"watchdog": {"detect": "210ms"}}}}),
    ("CAP022", RAIL, {**JUNOS, "qos": {"pfc": {"watchdog": {"detect": "250ms"}}}},
     {**JUNOS, "qos": {"pfc": {"watchdog": {"detect": "300ms"}}}}),
    ("CAP022", RAIL, {**tiers(platform="nvidia_cumulus"), "qos": {"pfc": {"watchdog": {"polling": "50ms"}}}},
     {**tiers(platform="nvidia_cumulus"), "qos": {"pfc": {"watchdog": {"polling": "100ms"}}}}),
    # --- topology ---
    ("TOPO001", RAIL, {"topology": {"rails": 1}}, {"topology": {"rails": 2}}),
    ("TOPO002", RAIL, {"topology": {"leaf": {"ports": 6}}}, {"topology": {"leaf": {"ports": 8}}}),
    ("TOPO002", CLOS3, {"topology": {"superspine": {"ports": 7}}}, {"topology": {"superspine": {"ports": 8}}}),
    ("TOPO003", RAIL, {"topology": {"spine": {"count": 3}}}, {"topology": {"spine": {"count": 2, "ports": 32}}}),
    ("TOPO003", CLOS3, {"topology": {"superspine": {"count": 3}}}, NO_WD),
    ("TOPO003", CLOS3, {"topology": {"spine": {"uplinks": 3, "oversubscription": "8:3"}}}, NO_WD),
    ("TOPO003", RAIL, {"topology": {"spine": {"uplinks": 2}}}, NO_WD),
    ("TOPO004", RAIL, {"topology": {"leaf": {"uplink_speed": "200G"}}},
     {"topology": {"leaf": {"uplink_speed": "200G", "oversubscription": "2:1"}}}),
    ("TOPO004", CLOS3, {"topology": {"spine": {"oversubscription": "1:1"}}}, {"topology": {"spine": {
        "oversubscription": "2.08:1"}}}),
    # --- addressing and ASNs ---
    ("ADDR001", RAIL, {"underlay": {"hosts": "10.0.0.0/12"}}, {"underlay": {"hosts": "10.64.0.0/12"}}),
    ("ADDR001", RAIL, {"lab": {"mgmt_subnet": "10.0.1.0/28"}}, {"lab": {"mgmt_subnet": "172.31.255.0/24"}}),
    ("ADDR002", RAIL, {"underlay": {"loopbacks": {"leaf": "10.0.16.0/30"}}},
     {"underlay": {"loopbacks": {"leaf": "10.0.16.0/29"}}}),
    ("ADDR002", RAIL, {"underlay": {"addressing": "p2p31", "p2p": {"leaf_spine": "10.128.0.0/28"}}},
     {"underlay": {"addressing": "p2p31", "p2p": {"leaf_spine": "10.128.0.0/27"}}}),
    ("ADDR002", RAIL, {"underlay": {"hosts": "10.64.0.0/28"}}, {"underlay": {"hosts": "10.64.0.0/27"}}),
    ("ADDR002", CLOS3, {"underlay": {"hosts": "10.64.0.0/26"}}, {"underlay": {"hosts": "10.64.0.0/25"}}),
    ("ADDR002", RAIL, {"management": {"subnet": "192.168.0.0/28"}}, {"management": {"subnet": "192.168.0.0/27"}}),
    ("ASN001", RAIL, {"underlay": {"asn": {"leaf_base": 65533}}}, {"underlay": {"asn": {"leaf_base": 65530}}}),
    ("ASN001", CLOS3, {"underlay": {"asn": {"spine": 65534}}}, {"underlay": {"asn": {"spine": 65533}}}),
    ("ASN002", RAIL, {"underlay": {"asn": {"spine": 65000, "leaf_base": 65000}}}, NO_WD),
    ("ASN002", CLOS3, {"underlay": {"asn": {"spine": 65000, "leaf_base": 65001}}},
     {"underlay": {"asn": {"spine": 65000, "leaf_base": 65002}}}),
    # --- a RoCE reviewer's checklist (review_*.py; the one-mistake corpus in test_corpus.py has more) ---
    ("REV001", RAIL, classes(with_(ROCE, weight=30), CNP, DEFAULT, with_(STORAGE, priority=3, weight=20)),
     classes(with_(ROCE, weight=30), CNP, DEFAULT, with_(STORAGE, weight=20))),
    ("REV002", RAIL, {"nic": {"dcqcn": {"priorities": [4]}}}, {"nic": {"dcqcn": {"priorities": [3]}}}),
    ("REV003", RAIL, {"nic": {"dcqcn": {"priorities": [3, 6]}}}, {"nic": {"dcqcn": {"priorities": [3]}}}),
    ("REV004", RAIL, classes(ROCE, with_(CNP, ecn={"kmin": "150KB", "kmax": "1500KB"}), DEFAULT), NO_WD),
    ("REV005", RAIL, classes(ROCE, CNP, with_(DEFAULT, lossless=True, ecn={"kmin": "150KB", "kmax": "1500KB"})),
     NO_WD),
    ("REV006", RAIL, classes(with_(ROCE, scheduling="strict", weight=DELETE), CNP, with_(DEFAULT, weight=100)),
     NO_WD),
    ("REV007", RAIL, classes(with_(ROCE, weight=30), CNP, DEFAULT, with_(STORAGE, weight=10),
                             with_(STORAGE, name="s2", dscp=[16], priority=2, weight=10)),
     classes(with_(ROCE, weight=30), CNP, DEFAULT, with_(STORAGE, weight=20))),
    ("REV008", RAIL, classes(with_(ROCE, weight=30), CNP, DEFAULT, with_(STORAGE, dscp=[], weight=20)),
     classes(with_(ROCE, weight=30), CNP, DEFAULT, with_(STORAGE, weight=20))),
    ("REV009", RAIL, {"nic": {"dcqcn": {"enabled": False}}, **classes(with_(ROCE, lossless=False), CNP, DEFAULT)},
     {"nic": {"dcqcn": {"enabled": False}}}),
    ("REV010", RAIL, classes(with_(ROCE, kind="other"), CNP, DEFAULT), NO_WD),
    ("REV020", RAIL, {"topology": {"leaf": {"uplink_cable_m": 10000}}},
     {"topology": {"leaf": {"uplink_cable_m": 300}}}),
    ("REV020", RAIL, {**tiers(platform="arista_eos"), "qos": {"buffers": {"headroom": "10MB"}}},
     {**tiers(platform="arista_eos"), "qos": {"buffers": {"headroom": "1MB"}}}),
    ("REV030", RAIL, classes(ROCE, CNP, DEFAULT, with_(CNP, name="ctl", kind="other", dscp=[56])),
     classes(ROCE, CNP, DEFAULT, with_(CNP, name="ctl", kind="other", dscp=[56], priority=7))),
    ("REV031", RAIL, {"qos": {"trust": "pcp"}, "nic": {"trust": "pcp"}}, NO_WD),
    ("REV032", RAIL, {"qos": {"pfc": {"watchdog": {"action": "alert"}}}}, NO_WD),
    ("REV033", RAIL, {"qos": {"pfc": {"watchdog": {"detect": "20ms", "polling": "10ms"}}}}, NO_WD),
    ("REV034", RAIL, {"nic": {"roce_mtu": 1024}}, {"nic": {"roce_mtu": 1024}, "underlay": {"mtu": 1500}}),
    ("REV035", RAIL, {"nic": {"dcqcn": {"rp": {"min_dec_fac": 100}}}}, {"nic": {"dcqcn": {"rp": {"min_dec_fac": 99}}}}),
    ("REV035", RAIL, {"nic": {"dcqcn": {"rp": {"min_rate": "400Gbps"}}}},
     {"nic": {"dcqcn": {"rp": {"min_rate": "1Gbps"}}}}),
    ("REV036", RAIL, {"nic": {"dcqcn": {"rp": {"ai_rate": "50Mbps", "hai_rate": "5Mbps"}}}}, NO_WD),
    ("REV037", RAIL, {"nic": {"dcqcn": {"rp": {"min_rate": "10Gbps", "max_rate": "5Gbps"}}}},
     {"nic": {"dcqcn": {"rp": {"min_rate": "10Gbps", "max_rate": "0Mbps"}}}}),
    # --- switch models (netfab/lint/rules/model.py) ---
    ("MODEL001", RAIL, {"topology": {"leaf": {"model": "nvidia-sn5600"}}},
     {"topology": {"leaf": {"model": "sonic-mellanox-sn5600-o128"}}}),
    ("MODEL002", RAIL, {"topology": {"leaf": {"hardware": {"ports": 8, "max_speed": "400G"}}}},
     {"topology": {"leaf": {"hardware": {"ports": 16, "max_speed": "400G"}}}}),
    ("MODEL002", RAIL, {"topology": {"spine": {"model": "sonic-mellanox-sn5600-o128", "ports": 200}}},
     {"topology": {"spine": {"model": "sonic-mellanox-sn5600-o128", "ports": 128}}}),
    ("MODEL003", RAIL, {"topology": {"leaf": {"hardware": {"ports": 16, "max_speed": "800G"}}}},
     {"topology": {"leaf": {"hardware": {"ports": 16, "max_speed": "800G", "breakouts": ["2x400G"]}}}}),
    ("MODEL004", RAIL, {"topology": {"leaf": {"platform": "arista_eos", "os_version": "4.33.1F",
                                             "model": "arista-7060x6-64pe"}},
                        "load_balancing": {"hash_fields": QP_FIELDS}},
     {"topology": {"leaf": {"platform": "arista_eos", "os_version": "4.33.1F", "model": "arista-7808r3"}},
      "load_balancing": {"hash_fields": QP_FIELDS}}),
    ("MODEL004", RAIL, {"topology": {"leaf": {"platform": "arista_eos", "os_version": "4.33.1F"}},
                        "load_balancing": {"hash_fields": QP_FIELDS}},
     {"topology": {"leaf": {"platform": "arista_eos", "os_version": "4.33.1F"}}}),
    ("MODEL003", RAIL, {"topology": {"servers": {"nic_speed": "200G"}, "leaf": {"model": SN5600_SKU}}},
     {"topology": {"leaf": {"model": SN5600_SKU}}}),
]
# fmt: on


def _case_id(case: tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]) -> str:
    return f"{case[0]}-{'clos3' if case[1] is CLOS3 else 'rail'}"


@pytest.mark.parametrize("base", [RAIL, CLOS3], ids=["rail", "clos3"])
def test_base_intents_are_clean(base: dict[str, Any], tmp_path: Path) -> None:
    result = lint_data(base, tmp_path)
    assert [f"{f.rule_id} {f.message}" for f in result.findings] == []


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_rule_fails_then_passes(case: tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]],
                                tmp_path: Path) -> None:  # fmt: skip
    rule_id, base, bad, good = case
    failing = lint_data(merged(base, bad), tmp_path, "bad.yaml")
    assert rule_id in rule_ids(failing), [f"{f.rule_id} {f.message}" for f in failing.findings]
    found = [f for f in failing.findings if f.rule_id == rule_id]
    assert all(f.location.file.endswith("bad.yaml") and f.location.line >= 1 for f in found)
    passing = lint_data(merged(base, good), tmp_path, "good.yaml")
    assert not passing.findings or not any(f.rule_id.startswith("SCHEMA") for f in passing.findings)
    assert rule_id not in rule_ids(passing), [f"{f.rule_id} {f.message}" for f in passing.findings]


def test_every_rule_has_a_case() -> None:
    from test_network_rules import CASES as NETWORK_CASES  # cross-network rules: their own cluster fixture

    covered = {case[0] for case in CASES} | {case[0] for case in NETWORK_CASES}
    # Rules that read the fabric plan have their table in test_plan_rules.py: lint_data runs without a plan.
    intent_rules = {r.id for r in default_registry() if not r.needs_plan}
    assert intent_rules - covered == set()
