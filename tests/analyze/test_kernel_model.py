"""The Linux kernel ECMP model the namespace lab is compared with (LAB.md: 16 UDP flows over leaf1's 2 uplinks)."""

from __future__ import annotations

from math import comb

import pytest
from analyze_helpers import example

from netfab.analyze import KernelFlow, predict_uplink_split, uplink_split_forecast
from netfab.analyze.hashing import FIVE_TUPLE, kernel_hash_fields, kernel_policy_for


def _sixteen_flows() -> list[KernelFlow]:
    _, plan = example("lab")
    src = plan.servers[0].nics[0].address.split("/")[0]  # host1 eth0 on leaf1
    dst = plan.servers[2].nics[0].address.split("/")[0]  # host3 eth0 on leaf3
    return [KernelFlow(src, dst, src_port=40_000 + k) for k in range(16)]


def _busier_half_pmf(n: int) -> dict[int, float]:
    pmf: dict[int, float] = {}
    for x in range(n + 1):
        pmf[max(x, n - x)] = pmf.get(max(x, n - x), 0.0) + comb(n, x) / 2**n
    return pmf


def test_policy_0_puts_every_flow_between_two_hosts_on_one_uplink() -> None:
    _, plan = example("lab")
    split = predict_uplink_split(plan, _sixteen_flows(), policy=0)
    ((leaf, counts),) = split.items()
    assert leaf == "leaf1"
    assert sorted(counts.values()) == [0, 16]
    assert set(counts) == {i.name for i in plan.devices["leaf1"].interfaces_by_role("fabric_up")}
    forecast = uplink_split_forecast(plan, _sixteen_flows(), policy=0)["leaf1"]
    assert forecast.distinct_keys == 1
    assert forecast.p_all_on_one == 1.0
    # Custom policy with addresses only behaves the same (LAB.md: 16/0).
    assert sorted(predict_uplink_split(plan, _sixteen_flows(), 3, fields_mask=0x0003)["leaf1"].values()) == [0, 16]


@pytest.mark.parametrize(("policy", "mask"), [(1, 0x0007), (3, 0x0037)])
def test_l4_policies_split_like_a_fair_coin(policy: int, mask: int) -> None:
    _, plan = example("lab")
    forecast = uplink_split_forecast(plan, _sixteen_flows(), policy, fields_mask=mask, trials=4000, seed=1)["leaf1"]
    assert forecast.distinct_keys == 16
    expected = sum(k * p for k, p in _busier_half_pmf(16).items())  # 9.57
    assert forecast.busiest.mean == pytest.approx(expected, abs=0.15)
    # LAB.md measured 5/11 with the 5-tuple: a busiest count of 11 is ordinary (p ~ 0.21), 16/0 is not.
    assert forecast.p_at_least(11) == pytest.approx(2 * sum(comb(16, x) for x in range(11, 17)) / 2**16, abs=0.03)
    assert forecast.p_all_on_one < 0.01
    split = predict_uplink_split(plan, _sixteen_flows(), policy, fields_mask=mask)
    assert sum(split["leaf1"].values()) == 16


def test_same_leaf_flows_take_no_uplink_and_unknown_addresses_are_refused() -> None:
    _, plan = example("lab")
    a = plan.servers[0].nics[0].address.split("/")[0]
    b = plan.servers[1].nics[0].address.split("/")[0]  # host2 eth0 is also on leaf1
    assert predict_uplink_split(plan, [KernelFlow(a, b, 50_000)], policy=1) == {}
    with pytest.raises(ValueError, match="not a GPU NIC address"):
        predict_uplink_split(plan, [KernelFlow("192.0.2.1", b, 50_000)], policy=1)


def test_policy_mapping_matches_the_frr_templates() -> None:
    assert kernel_hash_fields(1) == FIVE_TUPLE
    assert kernel_hash_fields(0) == {"src_ip", "dst_ip"}
    assert kernel_hash_fields(3, 0x0037) == FIVE_TUPLE
    assert kernel_policy_for(FIVE_TUPLE) == (1, 0x0037)
    assert kernel_policy_for({"src_ip", "dst_ip"}) == (0, 0x0003)
    assert kernel_policy_for(FIVE_TUPLE | {"rocev2_dest_qp"}) == (1, 0x0037)  # the kernel cannot read the BTH
    assert kernel_policy_for({"src_ip", "dst_ip", "src_port"}) == (3, 0x0013)
    with pytest.raises(ValueError):
        kernel_hash_fields(4)
