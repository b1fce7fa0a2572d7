"""Cross-network lint (netfab/lint/rules/network.py): one failing fixture per rule, the clean cluster they are
made from, and findings located inside the network's own section of the YAML."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lint_helpers import CNP, DEFAULT, RAIL, ROCE, lint_data, merged, rule_ids

STORAGE_QOS = {
    "classes": [
        {**ROCE, "name": "storage"},
        CNP,
        DEFAULT,
    ],
    "pfc": {"watchdog": {"detect": "200ms", "restore": "400ms", "action": "drop"}},
}

# RAIL (2 SUs x 4 servers x 2 GPUs on SONiC) plus a storage network (1 port per server on 2 leaves... one per
# SU) and an OOB network, every pool distinct: clean under every rule.
CLUSTER: dict[str, Any] = merged(
    RAIL,
    {
        "networks": {
            "storage": {
                "kind": "storage",
                "topology": {
                    "scalable_units": 2,
                    "servers_per_su": 4,
                    "servers": {"gpus_per_server": 2, "nics": 1, "nic_speed": "400G", "cable_m": 3},
                    "leaf": {"platform": "sonic", "ports": 16, "uplinks": 4, "uplink_speed": "400G",
                             "uplink_cable_m": 30, "oversubscription": "1:1"},
                    "spine": {"platform": "sonic", "count": 2, "ports": 16},
                },
                "underlay": {
                    "loopbacks": {"spine": "10.1.1.0/24", "leaf": "10.1.16.0/20", "superspine": "10.1.0.0/24"},
                    "p2p": {"leaf_spine": "10.132.0.0/15", "spine_superspine": "10.134.0.0/16"},
                    "hosts": "10.96.0.0/16",
                },
                "qos": STORAGE_QOS,
                "management": {"subnet": "172.21.0.0/24"},
            },
            "oob": {
                "kind": "oob",
                "topology": {
                    "scalable_units": 2,
                    "servers_per_su": 4,
                    "servers": {"gpus_per_server": 2, "nics": 1, "nic_speed": "1G", "cable_m": 3},
                    "leaf": {"platform": "sonic", "ports": 16, "uplinks": 2, "uplink_speed": "10G",
                             "uplink_cable_m": 30, "oversubscription": "1:5"},
                    "spine": {"platform": "sonic", "count": 2, "ports": 16},
                },
                "underlay": {
                    "mtu": 1500,
                    "loopbacks": {"spine": "172.30.0.0/26", "leaf": "172.30.1.0/24", "superspine": "172.30.2.0/24"},
                    "p2p": {"leaf_spine": "172.30.128.0/18", "spine_superspine": "172.30.192.0/18"},
                    "hosts": "172.30.64.0/20",
                },
                "qos": {"classes": [{"name": "default", "kind": "default", "priority": 0, "weight": 100}],
                        "pfc": {"watchdog": None}},
                "nic": {"mtu": 1500, "dcqcn": {"enabled": False}},
                "management": {"subnet": "172.22.0.0/24"},
            },
        }
    },
)  # fmt: skip

SHARED_PROFILE = {
    "servers": {
        "profile": "mine",
        "profiles": {
            "mine": {
                "nics": [
                    {"netdev": "ens1", "rdma_device": "mlx5_0", "networks": ["backend"], "rail": 1},
                    {"netdev": "ens2", "rdma_device": "mlx5_1", "networks": ["backend", "storage"], "rail": 2},
                    {"netdev": "bmc", "networks": ["oob"]},
                ]
            }
        },
    }
}


def test_the_cluster_fixture_is_clean(tmp_path: Path) -> None:
    result = lint_data(CLUSTER, tmp_path)
    assert result.findings == [], [f.message for f in result.findings]


# (rule, patch, a word the message must carry)
CASES: list[tuple[str, dict[str, Any], str]] = [
    # The storage network takes the profile's only storage-capable port, which the back end also uses.
    ("NET001", SHARED_PROFILE, "both use ens2"),
    ("NET003", {"networks": {"storage": {"underlay": {"hosts": "10.64.0.0/16"}}}}, "overlaps network backend"),
    ("NET004", {"networks": {"oob": {"management": {"subnet": "10.64.0.0/24"}}}}, "routed by the fabric"),
    (
        "NET005",
        {"topology": {"planes": 2, "spine": {"count": 3, "ports": 16}, "leaf": {"uplinks": 3}}},
        "do not divide into 2 planes",
    ),
    ("NET006", {"networks": {"storage": {"nic": {"mtu": 9216}, "underlay": {"mtu": 9000}}}}, "above its link MTU"),
    ("NET007", {"networks": {"storage": {"topology": {"servers_per_su": 3}}}}, "attaches 6 servers"),
    ("NET008", {"servers": {"profile": "dgx-h100"}, "networks": {"storage": {"topology": {"servers": {"nics": 8}}}}},
     "wires 8 per server"),
    # The DGX B200 profile publishes no compute NIC names: refused, never guessed.
    ("NET009", {"servers": {"profile": "dgx-b200"}}, "publishes no netdev for port(s) CX7 1"),
]  # fmt: skip


@pytest.mark.parametrize(("rule", "patch", "words"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_fails_its_fixture(rule: str, patch: dict[str, Any], words: str, tmp_path: Path) -> None:
    result = lint_data(merged(CLUSTER, patch), tmp_path)
    hits = [f for f in result.findings if f.rule_id == rule]
    assert hits, (rule, [(f.rule_id, f.message) for f in result.findings])
    assert any(words in f.message for f in hits), [f.message for f in hits]
    assert result.exit_code == 1


def test_findings_inside_a_network_point_into_its_section(tmp_path: Path) -> None:
    # A per-network rule (TOPO004) fires on the storage network: its path and line are the storage section's.
    data = merged(CLUSTER, {"networks": {"storage": {"topology": {"leaf": {"uplinks": 2}}}}})
    result = lint_data(data, tmp_path)
    topo = [f for f in result.findings if f.rule_id == "TOPO004"]
    assert topo and all(f.path.startswith("networks.storage.topology.leaf") for f in topo), topo
    text = (tmp_path / "intent.yaml").read_text().splitlines()
    line = text[topo[0].location.line - 1]
    assert "oversubscription" in line
    # The back end is untouched: nothing reported under its own topology.
    assert not [f for f in result.findings if f.path.startswith("topology.")]


def test_unquoted_ratio_is_a_clear_yaml_1_1_message(tmp_path: Path) -> None:
    path = tmp_path / "i.yaml"
    path.write_text(
        "version: 1\nfabric: {name: t}\ntopology:\n  scalable_units: 1\n  servers_per_su: 4\n"
        "  leaf: {uplinks: 4, oversubscription: 1:1}\n  spine: {count: 2}\n"
    )
    from netfab.lint import lint_paths

    result = lint_paths([path])
    assert rule_ids(result) == {"YAML003"}, [(f.rule_id, f.message) for f in result.findings]
    msg = result.findings[0].message
    assert "the number 61 in YAML 1.1 (base 60)" in msg and "61:1" not in msg


def test_undersubscription_is_a_real_ratio(tmp_path: Path) -> None:
    # 4 x 400G down, 8 x 400G up is 1:2; declaring it is clean, declaring 2:1 is TOPO004 with the right words.
    base = merged(RAIL, {"topology": {"leaf": {"uplinks": 8, "oversubscription": "1:2"}, "spine": {"count": 4}}})
    assert "TOPO004" not in rule_ids(lint_data(base, tmp_path, "a.yaml"))
    wrong = merged(base, {"topology": {"leaf": {"oversubscription": "2:1"}}})
    found = [f for f in lint_data(wrong, tmp_path, "b.yaml").findings if f.rule_id == "TOPO004"]
    assert found and "is 1:2" in found[0].message and "declared 2:1" in found[0].message
    assert "downlink:uplink" in found[0].hint


def test_clos3_without_superspine_error_is_one_sentence(tmp_path: Path) -> None:
    data = merged(RAIL, {"topology": {"style": "clos3", "pods": 2, "racks_per_pod": 2, "servers_per_rack": 1}})
    for key in ("scalable_units", "servers_per_su", "rails"):
        data["topology"].pop(key)
    result = lint_data(data, tmp_path)
    msgs = [f.message for f in result.findings]
    assert any("2 pods need a superspine tier" in m for m in msgs), msgs
    assert not any("{'" in m or "got {" in m for m in msgs), msgs


def test_headroom_is_summed_over_the_lossless_priorities_of_a_networks_ports(tmp_path: Path) -> None:
    """A converged storage network carrying compute and storage lossless classes: 3 km leaf-spine links fit
    the leaf's buffer with one lossless priority and not with two. The rule that sums them is REV020 (one
    home for headroom vs buffer); it runs on the network's own switches and points into its section."""
    long = {"networks": {"storage": {"topology": {"leaf": {"uplink_cable_m": 3000}}}}}
    one = lint_data(merged(CLUSTER, long), tmp_path, "one.yaml")
    assert "REV020" not in rule_ids(one)
    second = {**ROCE, "name": "compute", "kind": "other", "dscp": [24], "priority": 4, "weight": 25}
    qos = {"classes": [{**ROCE, "name": "storage", "weight": 25}, second, CNP, DEFAULT], "pfc": STORAGE_QOS["pfc"]}
    two = lint_data(merged(CLUSTER, merged(long, {"networks": {"storage": {"qos": qos}}})), tmp_path, "two.yaml")
    hits = [f for f in two.findings if f.rule_id == "REV020"]
    assert hits and all(f.path.startswith("networks.storage.") for f in hits), [
        (f.rule_id, f.path) for f in two.findings
    ]
    assert "2 lossless priorities" in hits[0].message or "priorities" in hits[0].message
