"""The topologies people build (issue 13 point 1) and the cluster's networks on real servers (point 2, 3):
several rails per leaf, 2-tier top-of-rack, multi-plane back ends, cable overrides, server profiles, and
stable expansion for each (growth only adds; every existing name, port and address stays)."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from netfab.design import FabricPlan, design
from netfab.intent import Intent

INTENTS = Path(__file__).resolve().parents[2] / "intent"

SMALL_RAIL: dict[str, Any] = {
    "version": 1,
    "fabric": {"name": "t"},
    "topology": {
        "scalable_units": 1,
        "servers_per_su": 8,
        "rails": 8,
        "rails_per_leaf": 4,
        "servers": {"gpus_per_server": 8, "nic_speed": "200G", "cable_m": 2},
        "leaf": {"platform": "nvidia_cumulus", "ports": 64, "uplinks": 16, "uplink_speed": "400G"},
        "spine": {"platform": "nvidia_cumulus", "count": 2, "ports": 32},
    },
}


def plan_of(data: dict[str, Any], network: str = "backend") -> FabricPlan:
    return design(Intent.model_validate(data), network=network)


def facts(plan: FabricPlan) -> tuple[dict[str, Any], dict[str, Any]]:
    devices = {
        d.name: (d.asn, d.loopback, d.mgmt_ip, {(i.name, i.peer_device, i.peer_port, i.address) for i in d.interfaces})
        for d in plan.devices.values()
    }
    servers = {s.name: tuple((n.netdev, n.leaf, n.leaf_port, n.address) for n in s.nics) for s in plan.servers}
    return devices, servers


def assert_growth_only_adds(small: dict[str, Any], big: dict[str, Any], network: str = "backend") -> None:
    before, after = plan_of(small, network), plan_of(big, network)
    (old_d, old_s), (new_d, new_s) = facts(before), facts(after)
    assert len(new_d) > len(old_d) or len(new_s) > len(old_s)
    for name, (asn, lo, mgmt, ports) in old_d.items():
        assert new_d[name][:3] == (asn, lo, mgmt), name
        assert ports <= new_d[name][3], name  # upper tiers gain ports; none moves
    for name, nics in old_s.items():
        assert new_s[name] == nics, name


def test_two_leaves_carry_four_rails_each() -> None:
    plan = plan_of(SMALL_RAIL)
    leaves = plan.devices_of("leaf")
    assert [d.name for d in leaves] == ["su1-leaf1", "su1-leaf2"]
    assert len(plan.devices_of("spine")) == 2
    server = plan.servers[0]
    # Rails 1-4 on leaf 1, 5-8 on leaf 2; each rail its own block of 8 leaf ports.
    assert [n.leaf for n in server.nics] == ["su1-leaf1"] * 4 + ["su1-leaf2"] * 4
    assert [n.rail for n in server.nics] == list(range(1, 9))
    host_ports = Counter(i.rail for i in leaves[0].interfaces if i.role == "host")
    assert host_ports == {1: 8, 2: 8, 3: 8, 4: 8}
    assert len({n.leaf_port for s in plan.servers for n in s.nics if n.leaf == "su1-leaf1"}) == 32
    assert leaves[0].rail is None, "a leaf carrying 4 rails has no single rail"


def test_rails_per_leaf_growth_only_adds() -> None:
    big = copy.deepcopy(SMALL_RAIL)
    big["topology"]["scalable_units"] = 2
    big["topology"]["spine"]["ports"] = 64
    assert_growth_only_adds(SMALL_RAIL, big)


TOR: dict[str, Any] = {
    "version": 1,
    "fabric": {"name": "tor"},
    "topology": {
        "style": "clos3",
        "pods": 1,
        "racks_per_pod": 2,
        "servers_per_rack": 4,
        "servers": {"gpus_per_server": 8, "nic_speed": "200G"},
        "leaf": {"platform": "nvidia_cumulus", "ports": 64, "uplinks": 16, "uplink_speed": "400G"},
        "spine": {"platform": "nvidia_cumulus", "count": 2, "ports": 32},
    },
}


def test_two_tier_top_of_rack_without_superspine() -> None:
    plan = plan_of(TOR)
    assert sorted(d.role for d in plan.devices.values()) == ["leaf", "leaf", "spine", "spine"]
    assert not [link for link in plan.links if link.tier == "spine_superspine"]
    # Every NIC of a rack's servers lands on that rack's ToR: not rail-wired.
    for server in plan.servers:
        assert len({n.leaf for n in server.nics}) == 1 and all(n.rail is None for n in server.nics)
    big = copy.deepcopy(TOR)
    big["topology"]["racks_per_pod"] = 3
    big["topology"]["spine"]["ports"] = 64
    assert_growth_only_adds(TOR, big)


PLANES: dict[str, Any] = {
    "version": 1,
    "fabric": {"name": "mp"},
    "topology": {
        "scalable_units": 1,
        "servers_per_su": 4,
        "planes": 2,
        "servers": {"gpus_per_server": 2, "nic_speed": "400G"},
        "leaf": {"platform": "sonic", "ports": 16, "uplinks": 4, "uplink_speed": "400G"},
        "spine": {"platform": "sonic", "count": 4, "ports": 16},
    },
}


def test_multi_plane_back_end_puts_each_nic_port_on_its_own_plane() -> None:
    plan = plan_of(PLANES)
    leaves = plan.devices_of("leaf")
    assert [d.name for d in leaves] == ["su1-p1-leaf1", "su1-p1-leaf2", "su1-p2-leaf1", "su1-p2-leaf2"]
    server = plan.servers[0]
    assert [(n.rail, n.plane) for n in server.nics] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert len({n.netdev for n in server.nics}) == 4
    by_name = plan.devices
    # Planes never meet: a leaf's uplinks go only to spines of its plane.
    for leaf in leaves:
        peers = {i.peer_device for i in leaf.interfaces if i.role == "fabric_up"}
        assert {by_name[p].plane for p in peers} == {leaf.plane}, (leaf.name, peers)
    # Every plane's host addresses come from their own blocks.
    assert len({n.routes for n in server.nics}) == 4
    big = copy.deepcopy(PLANES)
    big["topology"]["scalable_units"] = 2
    big["topology"]["spine"]["ports"] = 32
    assert_growth_only_adds(PLANES, big)


def test_cable_overrides_per_group_and_per_link() -> None:
    data = copy.deepcopy(SMALL_RAIL)
    data["topology"]["cables"] = [
        {"match": "su1-leaf2", "tier": "leaf_spine", "cable_m": 120},
        {"match": "su1-srv8", "cable_m": 7},
    ]
    plan = plan_of(data)
    lengths = {(link.a_device, link.b_device, link.tier): link.cable_m for link in plan.links}
    assert {v for (a, b, t), v in lengths.items() if t == "leaf_spine" and b == "su1-leaf2"} == {120}
    assert {v for (a, b, t), v in lengths.items() if t == "leaf_spine" and b == "su1-leaf1"} == {30}
    assert {v for (a, b, t), v in lengths.items() if t == "host" and b == "su1-srv8"} == {7}
    assert {v for (a, b, t), v in lengths.items() if t == "host" and b == "su1-srv1"} == {2}
    # Both ends of a cable see the same length (it sizes both ends' headroom).
    leaf2 = plan.devices["su1-leaf2"]
    assert {i.cable_m for i in leaf2.interfaces if i.role == "fabric_up"} == {120}


def test_dgx_profile_names_every_nic_and_networks_never_share_a_table() -> None:
    data = yaml.safe_load((INTENTS / "superpod-su.yaml").read_text())
    intent = Intent.model_validate(data)
    plans = {n: design(intent, network=n) for n in intent.network_names()}
    backend, storage = plans["backend"].servers[0], plans["storage"].servers[0]
    assert [n.netdev for n in backend.nics][:2] == ["enp24s0np0", "enp64s0np0"]
    assert [n.rdma_device for n in backend.nics] == [f"mlx5_{i}" for i in (0, 3, 4, 5, 6, 9, 10, 11)]
    assert [n.netdev for n in storage.nics] == ["enp41s0f1np1", "enp170s0f1np1"]
    assert backend.name == storage.name == plans["oob"].servers[0].name == "su1-dgx01"
    tables = [n.table for p in plans.values() for n in p.servers[0].nics]
    netdevs = [n.netdev for p in plans.values() for n in p.servers[0].nics]
    assert len(tables) == len(set(tables)) and len(netdevs) == len(set(netdevs))


def test_generic_profile_keeps_todays_names_and_numbers_other_networks_after_them() -> None:
    data = copy.deepcopy(SMALL_RAIL)
    data["networks"] = {
        "storage": {
            "kind": "storage",
            "topology": {
                "scalable_units": 1,
                "servers_per_su": 8,
                "servers": {"nics": 2},
                "leaf": {"ports": 16, "uplinks": 4, "oversubscription": "1:2"},
                "spine": {"count": 2},
            },
            "underlay": {"hosts": "10.96.0.0/16"},
        }
    }
    intent = Intent.model_validate(data)
    backend = design(intent).servers[0]
    storage = design(intent, network="storage").servers[0]
    assert [n.netdev for n in backend.nics] == [f"eth{i}" for i in range(8)]
    assert [(n.netdev, n.rdma_device, n.table) for n in storage.nics] == [
        ("eth8", "mlx5_8", 108),
        ("eth9", "mlx5_9", 109),
    ]


def test_per_server_override_renames_one_nic() -> None:
    data = yaml.safe_load((INTENTS / "ent64.yaml").read_text())
    data["servers"]["overrides"] = {"su1-srv3": {"nics": {"enp24s0np0": {"netdev": "enp25s0np0"}}}}
    plan = plan_of(data)
    names = {s.name: s.nics[0].netdev for s in plan.servers}
    assert names["su1-srv3"] == "enp25s0np0" and names["su1-srv2"] == "enp24s0np0"
    assert {e.scope for e in plan.host_env} == {"dgx-h100", "su1-srv3"}


def test_nccl_environment_follows_the_intent() -> None:
    data = yaml.safe_load((INTENTS / "superpod-su.yaml").read_text())
    data["networks"]["frontend"] = {
        "kind": "frontend",
        "topology": {
            "scalable_units": 1,
            "servers_per_su": 32,
            "servers": {"nics": 1, "nic_speed": "100G"},
            "leaf": {"ports": 64, "uplinks": 8, "uplink_speed": "400G"},
            "spine": {"count": 2},
        },
        "qos": {"classes": [{"name": "default", "kind": "default", "priority": 0, "weight": 100}],
                "pfc": {"watchdog": None}},
        "underlay": {"hosts": "10.128.0.0/16", "loopbacks": {"leaf": "10.253.1.0/24", "spine": "10.253.0.0/26"}},
        "management": {"subnet": "192.168.3.0/24"},
    }  # fmt: skip
    # The storage network takes the first two storage ports; the front end would take the first
    # frontend-capable one, which is the same port: the profile lets a network pick from its kind only.
    intent = Intent.model_validate(data)
    env = {v.name: v.value for v in design(intent).host_env[0].nccl}
    assert env["NCCL_IB_HCA"] == "=" + ",".join(f"mlx5_{i}:1" for i in (0, 3, 4, 5, 6, 9, 10, 11))
    assert env["NCCL_IB_TC"] == str(26 * 4)
    assert env["NCCL_IB_QPS_PER_CONNECTION"] == "4"
    assert env["NCCL_IB_GID_INDEX"] == "-1" and env["NCCL_IB_ROCE_VERSION_NUM"] == "2"
    assert env["NCCL_CROSS_NIC"] == "0"
    assert env["NCCL_SOCKET_IFNAME"] == "=enp41s0f1np1"


@pytest.mark.parametrize("name", ["superpod-su.yaml", "ent64.yaml", "meta-3tier.yaml", "rail-3tier.yaml"])
def test_example_growth_only_adds(name: str) -> None:
    small = yaml.safe_load((INTENTS / name).read_text())
    big = copy.deepcopy(small)
    t = big["topology"]
    if t.get("style") == "clos3":
        # 3-tier grows by pods (a pod's spines number their rack ports from the pod's racks).
        t["pods"] += 1
        t["superspine"]["ports"] *= 2
    else:
        t["scalable_units"] += 1
        t["spine"]["ports"] *= 2
        for net in big.get("networks", {}).values():
            net["topology"]["scalable_units"] += 1
            net["topology"]["spine"]["ports"] *= 2
    for network in Intent.model_validate(small).network_names():
        assert_growth_only_adds(small, big, network)


B200_NAMES = {f"CX7 {i}": {"netdev": f"ens{i}np0", "rdma_device": f"mlx5_{i - 1}"} for i in range(1, 9)}


def test_dgx_b200_refuses_to_render_until_the_names_are_given() -> None:
    # No published table names the B200's compute NICs: the design refuses (DESIGN006, the hint says where
    # the names go) instead of guessing, and per-server overrides keyed by the profile's labels fix it.
    from netfab.design.errors import DesignError

    data = copy.deepcopy(SMALL_RAIL)
    data["servers"] = {"profile": "dgx-b200"}
    with pytest.raises(DesignError) as err:
        plan_of(data)
    finding = err.value.findings[0]
    assert finding.rule_id == "DESIGN006" and err.value.field == ("servers", "profile")
    assert "CX7 1" in finding.message and "servers.overrides" in (finding.hint or "")
    servers = [f"su1-srv{i}" for i in range(1, 9)]
    data["servers"]["overrides"] = {s: {"nics": B200_NAMES} for s in servers[:-1]}
    with pytest.raises(DesignError):
        plan_of(data)  # the last server still has no names
    data["servers"]["overrides"][servers[-1]] = {"nics": B200_NAMES}
    plan = plan_of(data)
    assert [n.rdma_device for n in plan.servers[-1].nics] == [f"mlx5_{i}" for i in range(8)]
    assert [n.netdev for n in plan.servers[0].nics][:2] == ["ens1np0", "ens2np0"]


def test_hgx_template_names_nothing() -> None:
    from netfab.intent.servers import builtin_profiles

    for name in ("dgx-b200", "hgx-8gpu"):
        backend = builtin_profiles()[name].for_network("backend")
        assert backend and all(n.netdev is None and n.rdma_device is None for n in backend), name


@pytest.mark.parametrize(("knob", "expected"), [(None, None), ("adaptive_routing", "1"), ("packet_spraying", "1")])
def test_switch_side_reordering_asks_nccl_for_adaptive_routing_qps(knob: str | None, expected: str | None) -> None:
    # HOST-5: with AR or spraying on the switches, the NIC side is NCCL's per-QP adaptive-routing mode (the
    # receiving ConnectX places packets out of order per QP); without them NCCL keeps its RoCE default.
    data = copy.deepcopy(SMALL_RAIL)
    if knob is not None:
        data["load_balancing"] = {knob: True}
    env = {v.name: v for v in plan_of(data).host_env[0].nccl}
    got = env.get("NCCL_IB_ADAPTIVE_ROUTING")
    assert (got.value if got else None) == expected
    if got is not None:
        assert "Out-of-Order (OOO) Data Placement" in got.why


RAIL_3TIER: dict[str, Any] = {
    "version": 1,
    "fabric": {"name": "r3"},
    "topology": {
        "scalable_units": 3,
        "sus_per_pod": 2,
        "servers_per_su": 4,
        "rails": 4,
        "servers": {"gpus_per_server": 4, "nic_speed": "400G"},
        "leaf": {"ports": 16, "uplinks": 4},
        "spine": {"count": 4, "ports": 32, "uplinks": 8},
        "superspine": {"count": 4, "ports": 64},
    },
    "underlay": {"asn": {"superspine": 64900, "spine": 65000, "leaf_base": 65100}},
}


def test_rail_optimized_3_tier_pods_meet_only_at_the_superspines() -> None:
    plan = plan_of(RAIL_3TIER)
    roles = Counter(d.role for d in plan.devices.values())
    assert roles == {"leaf": 12, "spine": 8, "superspine": 4}  # 3 SUs in 2 pods: pod 2 is half full
    spines = {d.name: d for d in plan.devices.values() if d.role == "spine"}
    assert sorted(spines) == [f"pod{p}-spine{i}" for p in (1, 2) for i in range(1, 5)]
    # RFC 7938: leaves unique, one ASN per pod's spines, one for every superspine (valley-free routing).
    assert {d.asn for d in spines.values() if d.pod == 1} == {65000}
    assert {d.asn for d in spines.values() if d.pod == 2} == {65001}
    assert {d.asn for d in plan.devices.values() if d.role == "superspine"} == {64900}
    leaves = [d for d in plan.devices.values() if d.role == "leaf"]
    assert len({d.asn for d in leaves}) == 12
    # A leaf's uplinks stay in its pod; a spine's uplinks all go to superspines, after its pod's full
    # capacity of leaf ports (2 SUs x 4 leaves x 1 link), so filling pod 2 never moves them.
    for leaf in leaves:
        ups = {i.peer_device for i in leaf.interfaces if i.role == "fabric_up"}
        assert ups == {f"pod{leaf.pod}-spine{i}" for i in range(1, 5)}, leaf.name
    half_full = spines["pod2-spine1"]
    down = [i for i in half_full.interfaces if i.role == "fabric_down"]
    up = [i for i in half_full.interfaces if i.role == "fabric_up"]
    assert {i.peer_device for i in down} == {f"su3-leaf{r}" for r in range(1, 5)}
    assert {i.peer_device for i in up} == {f"superspine{i}" for i in range(1, 5)}
    assert min(i.port for i in up) == 2 * 4 * 1 + 1
    # Every leaf-to-leaf path across pods climbs leaf -> spine -> superspine: no spine links another pod.
    for link in plan.links:
        if link.tier == "leaf_spine":
            assert plan.devices[link.a_device].pod == plan.devices[link.b_device].pod


def test_rail_optimized_3_tier_growth_only_adds() -> None:
    # Filling pod 2 (3 -> 4 SUs), then opening pod 3 (4 -> 5 SUs): existing names, ports, addresses and
    # ASNs stay; so does a two-plane variant (each plane's spines and superspines never meet the other's).
    sizes = [(3, 4), (4, 5)]
    for planes in (1, 2):
        base = copy.deepcopy(RAIL_3TIER)
        if planes == 2:
            base["topology"]["planes"] = 2
            base["topology"]["superspine"]["count"] = 4
        for small_n, big_n in sizes:
            small, big = copy.deepcopy(base), copy.deepcopy(base)
            small["topology"]["scalable_units"] = small_n
            big["topology"]["scalable_units"] = big_n
            assert_growth_only_adds(small, big)


def test_two_plane_rail_3_tier_keeps_planes_apart() -> None:
    data = copy.deepcopy(RAIL_3TIER)
    data["topology"]["planes"] = 2
    plan = plan_of(data)
    for link in plan.links:
        if link.tier != "host":
            assert plan.devices[link.a_device].plane == plan.devices[link.b_device].plane, link


def test_rail_top_tier_is_optional_for_one_pod_only() -> None:
    one_pod = copy.deepcopy(RAIL_3TIER)
    one_pod["topology"]["scalable_units"] = 2
    del one_pod["topology"]["superspine"]
    one_pod["topology"]["spine"]["uplinks"] = 0
    plan = plan_of(one_pod)
    assert {d.role for d in plan.devices.values()} == {"leaf", "spine"}
    two_pods = copy.deepcopy(one_pod)
    two_pods["topology"]["scalable_units"] = 3
    with pytest.raises(ValueError, match="2 pods need a superspine tier to join them; without one, use sus_per_pod"):
        Intent.model_validate(two_pods)
    no_pods = copy.deepcopy(RAIL_3TIER)
    del no_pods["topology"]["sus_per_pod"]
    with pytest.raises(ValueError, match=r"set topology\.sus_per_pod"):
        Intent.model_validate(no_pods)


def test_rail_3tier_example_is_deadlock_free_and_an_asn_per_spine_is_not() -> None:
    # The numbering the design keeps (one ASN per pod's spines, one for the superspines) is what keeps every
    # route valley-free, so the lossless class has no cyclic buffer dependency under any single failure
    # (analyze's ANALYZE006 check); an ASN per spine lets BGP install down-up routes that close a cycle.
    from netfab.analyze.deadlock import check_deadlock

    data = yaml.safe_load((INTENTS / "rail-3tier.yaml").read_text())
    result = check_deadlock(plan_of(data))
    assert result.lossless and result.scenarios > 0
    assert not result.valleys and not result.cycles
    data["underlay"]["asn"]["spine_per_switch"] = True
    assert check_deadlock(plan_of(data)).cycles
