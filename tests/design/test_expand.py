"""Design expansion: counts, cabling, addressing, and stability under growth."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from netfab.design import DesignError, FabricPlan, design
from netfab.intent import Intent

INTENTS = Path(__file__).resolve().parents[2] / "intent"


def load(name: str) -> dict[str, Any]:
    return yaml.safe_load((INTENTS / name).read_text())


def plan_of(data: dict[str, Any]) -> FabricPlan:
    return design(Intent.model_validate(data))


def device_facts(plan: FabricPlan) -> dict[str, tuple]:
    """Everything about a device that growth must not change: name, ASN, loopback, mgmt, every port."""
    return {
        d.name: (
            d.asn,
            d.loopback,
            d.mgmt_ip,
            tuple((i.name, i.peer_device, i.peer_port, i.address, i.peer_address) for i in d.interfaces),
        )
        for d in plan.devices.values()
    }


def server_facts(plan: FabricPlan) -> dict[str, tuple]:
    return {s.name: tuple((n.netdev, n.leaf, n.leaf_port, n.address, n.gateway) for n in s.nics) for s in plan.servers}


def test_lab_counts_and_rails() -> None:
    plan = plan_of(load("lab.yaml"))
    assert sorted(plan.devices) == ["leaf1", "leaf2", "leaf3", "leaf4", "spine1", "spine2"]
    assert len(plan.servers) == 4
    # NIC i of every server in an SU lands on leaf i of that SU (the rail).
    for server in plan.servers:
        leaves = [plan.devices[n.leaf] for n in server.nics]
        assert [leaf.rail for leaf in leaves] == [1, 2]
        assert {leaf.su for leaf in leaves} == {server.su}
    tiers = Counter(link.tier for link in plan.links)
    assert tiers == {"leaf_spine": 8, "host": 8}


def test_every_link_is_consistent_on_both_ends() -> None:
    plan = plan_of(load("rail-4su.yaml"))
    ports: dict[tuple[str, str], tuple[str, str]] = {}
    for dev in plan.devices.values():
        for i in dev.interfaces:
            key = (dev.name, i.name)
            assert key not in ports, f"port used twice: {key}"
            ports[key] = (i.peer_device, i.peer_port)
    for link in plan.links:
        assert ports[(link.a_device, link.a_port)] == (link.b_device, link.b_port)
        if link.tier != "host":
            assert ports[(link.b_device, link.b_port)] == (link.a_device, link.a_port)


def test_leaf_spine_bgp_peers_match_cabling() -> None:
    plan = plan_of(load("rail-4su.yaml"))
    leaf = plan.devices["su1-leaf1"]
    assert leaf.bgp is not None
    peers = Counter(n.peer_device for n in leaf.bgp.neighbors)
    # 32 uplinks over 16 spines: two sessions to each spine, all unnumbered.
    assert len(peers) == 16 and set(peers.values()) == {2}
    assert all(n.address is None for n in leaf.bgp.neighbors)
    assert {n.remote_as for n in leaf.bgp.neighbors} == {65000}


def test_p2p31_addresses_pair_up() -> None:
    data = load("lab.yaml")
    data["underlay"]["addressing"] = "p2p31"
    plan = plan_of(data)
    for link in plan.links:
        assert link.a_address and link.b_address
        a, b = link.a_address.split("/")[0], link.b_address.split("/")[0]
        assert int(a.split(".")[-1]) + 1 == int(b.split(".")[-1])
    addresses = [i.address for d in plan.devices.values() for i in d.interfaces if i.address]
    assert len(addresses) == len(set(addresses))


def test_the_pools_ledgers_hold_every_address_the_plan_holds() -> None:
    """PLAN005's fast path rests on this: each address in the plan is one its pool's ledger entered, by index."""
    from ipaddress import IPv4Address

    data = load("lab.yaml")
    data["underlay"]["addressing"] = "p2p31"
    plan = plan_of(data)
    entered: list[str] = []
    for ledger in plan.addresses:
        entered += [str(IPv4Address(ledger.base + i + 1)) for i in ledger.hosts]
        entered += [f"{IPv4Address(ledger.base + 2 * i + end)}/31" for i in ledger.pairs for end in (0, 1)]
    held = [d.loopback for d in plan.devices.values()] + [d.mgmt_ip for d in plan.devices.values()]
    held += [a for link in plan.links for a in (link.a_address, link.b_address) if a is not None]
    assert sorted(entered) == sorted(held) and len(set(held)) == len(held)


def test_a_pool_enters_only_what_it_handed_out() -> None:
    from ipaddress import IPv4Network

    from netfab.design.addressing import PoolExhausted, PoolText

    pool = PoolText(IPv4Network("10.0.0.0/30"), {})
    assert pool.p2p(1, "links")[0] == "10.0.0.2" and pool.host(0, "loopbacks") == "10.0.0.1"
    with pytest.raises(PoolExhausted):
        pool.p2p(2, "links")
    assert pool.ledger.pairs == [1] and pool.ledger.hosts == [0] and pool.ledger.base == int(pool.pool[0])


def test_unique_asns_per_leaf_shared_per_spine_tier() -> None:
    plan = plan_of(load("rail-4su.yaml"))
    leaf_asns = [d.asn for d in plan.devices_of("leaf")]
    assert len(set(leaf_asns)) == len(leaf_asns)
    assert {d.asn for d in plan.devices_of("spine")} == {65000}


@pytest.mark.parametrize(
    ("intent", "grow"),
    [
        ("lab.yaml", ("topology", "scalable_units")),
        ("rail-4su.yaml", ("topology", "scalable_units")),
    ],
)
def test_adding_a_scalable_unit_keeps_every_existing_device(intent: str, grow: tuple[str, str]) -> None:
    small = load(intent)
    big = copy.deepcopy(small)
    big[grow[0]][grow[1]] += 1
    before, after = plan_of(small), plan_of(big)
    old, new = device_facts(before), device_facts(after)
    assert len(after.devices) > len(before.devices)
    for name, facts in old.items():
        if before.devices[name].role == "leaf":
            assert new[name] == facts, name
        else:
            # Spines gain ports for the new SU, but every existing port keeps its peer and address.
            assert new[name][:3] == facts[:3]
            assert set(facts[3]) <= set(new[name][3])
    old_servers, new_servers = server_facts(before), server_facts(after)
    assert all(new_servers[name] == facts for name, facts in old_servers.items())


def test_adding_a_pod_keeps_every_existing_device() -> None:
    small = load("clos3-24k.yaml")
    small["topology"].update(pods=2, racks_per_pod=4, servers_per_rack=1)
    small["topology"]["spine"].update(count=4, ports=32, uplinks=4)
    small["topology"]["superspine"].update(count=4, ports=32)
    small["topology"]["planes"] = 2
    big = copy.deepcopy(small)
    big["topology"]["pods"] = 3
    before, after = plan_of(small), plan_of(big)
    old, new = device_facts(before), device_facts(after)
    assert len(after.devices) == len(before.devices) + 4 + 4
    for name, facts in old.items():
        if before.devices[name].role == "superspine":
            assert new[name][:3] == facts[:3]
            assert set(facts[3]) <= set(new[name][3])
        else:
            assert new[name] == facts, name
    old_servers, new_servers = server_facts(before), server_facts(after)
    assert all(new_servers[name] == facts for name, facts in old_servers.items())


def test_clos3_planes_keep_spines_on_their_own_superspines() -> None:
    plan = plan_of(load("clos3-24k.yaml"))
    assert len(plan.devices) == 1536 + 128 + 28
    for spine in plan.devices_of("spine"):
        ups = [plan.devices[i.peer_device] for i in spine.interfaces_by_role("fabric_up")]
        assert len(ups) == 28
        assert {s.plane for s in ups} == {spine.plane}
    superspine = plan.devices["atsw01"]
    assert len(superspine.interfaces) == 128


def test_name_clash_is_a_design_error_pointing_at_naming() -> None:
    data = load("lab.yaml")
    data["naming"]["leaf"] = "leaf{rail}"  # two SUs -> two 'leaf1'
    with pytest.raises(DesignError) as err:
        plan_of(data)
    assert err.value.findings[0].path == "naming.leaf"


def test_exhausted_loopback_pool_is_a_design_error() -> None:
    data = load("rail-4su.yaml")
    data["underlay"]["loopbacks"] = {"leaf": "10.0.16.0/28"}
    with pytest.raises(DesignError) as err:
        plan_of(data)
    assert err.value.findings[0].path == "underlay.loopbacks.leaf"
    assert err.value.field == ("underlay", "loopbacks", "leaf")


@pytest.mark.parametrize("template", ["../{index}", "leaf/{index}", "leaf {index}", ".{index}", "a..{index}"])
def test_names_that_could_escape_the_output_dir_are_design_errors(template: str) -> None:
    data = load("lab.yaml")
    data["naming"]["leaf"] = template
    with pytest.raises(DesignError) as err:
        plan_of(data)
    assert err.value.findings[0].rule_id == "DESIGN003"
    assert err.value.findings[0].path == "naming.leaf"
