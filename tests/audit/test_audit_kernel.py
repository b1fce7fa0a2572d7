"""The frr platform's Linux side: the host script's intent against the kernel state, in each ECN mode."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from audit_helpers import drift_paths, intended, kernel_state, leaf, plan_for, run

from netfab.audit.engine import device_meta
from netfab.audit.facts.linux import hash_fields
from netfab.audit.group import group_details, group_drifts, sentence

FIVE_TUPLE = "dst_ip,dst_port,ip_protocol,src_ip,src_port"


def audit_kernel(state: dict[str, Any]):  # type: ignore[no-untyped-def]
    return run("frr", {".conf": intended("frr")[".conf"]}, state)


def state(mode: str = "nftables") -> dict[str, Any]:
    return copy.deepcopy(kernel_state(leaf("frr"), mode=mode))


def test_hash_policy_zero_means_addresses_only() -> None:
    s = state()
    s["sysctl"]["net.ipv4.fib_multipath_hash_policy"] = 0
    result = audit_kernel(s)
    assert drift_paths(result) == {"hash.fields[ipv4]": ("dst_ip,src_ip", FIVE_TUPLE)}
    assert result.kernel_drift and "host.sh" in result.remediation
    assert result.raw[0].text == "sysctl net.ipv4.fib_multipath_hash_policy = 0; host script: 1"


@pytest.mark.parametrize(
    ("family", "policy", "mask", "fields"),
    [
        ("ipv4", 1, 0x3, FIVE_TUPLE),  # built-in policy: the mask is not read
        ("ipv4", 3, 0x3, "dst_ip,src_ip"),
        ("ipv4", 3, 0x3F, FIVE_TUPLE),  # the flow-label bit means nothing for IPv4
        ("ipv6", 3, 0x3F, "dst_ip,dst_port,ip_protocol,ipv6_flow_label,src_ip,src_port"),
        ("ipv6", 0, 0, "dst_ip,ip_protocol,ipv6_flow_label,src_ip"),
    ],
)
def test_effective_hash_fields(family: str, policy: int, mask: int, fields: str) -> None:
    assert hash_fields(family, policy, mask) == fields


def test_a_custom_policy_hashing_the_same_fields_is_not_drift() -> None:
    s = state()
    s["sysctl"]["net.ipv4.fib_multipath_hash_policy"] = 3  # 0x37 = the 5-tuple, as policy 1
    assert audit_kernel(s).status == "in_sync"


def test_nftables_burst_is_kmin_in_packets() -> None:
    s = state()
    s["ecn"]["ports"]["swp1"]["nftables"]["3"]["burst_packets"] = 267
    result = audit_kernel(s)
    assert drift_paths(result) == {"interface[swp1].queue[3].ecn.kmin_bytes": (400_500, 150_000)}
    assert "nft limit pq3_swp1: rate over 7916666/second burst 267 packets" in result.raw[0].text


def test_nftables_drain_rate_and_marked_dscps() -> None:
    s = state()
    s["ecn"]["ports"]["swp2"]["nftables"]["3"]["rate_pps"] = 1000
    s["ecn"]["dscp"]["ipv4"]["3"] = [24, 26]
    assert drift_paths(audit_kernel(s)) == {
        "interface[swp2].queue[3].ecn.drain_pps": (1000, 7_916_666),
        "queue[3].ecn.dscp[ipv4]": ("24,26", "26"),
    }


@pytest.mark.parametrize(("gone", "stays"), [("ipv4", "ipv6"), ("ipv6", "ipv4")])
def test_one_address_family_rule_deleted_is_drift(gone: str, stays: str) -> None:
    """RELIABILITY_TRIAL: `nft delete rule ... handle 13` (the IPv4 marking rule) read "in sync" because the
    families were merged. Each family's rule is its own fact now."""
    s = state()
    del s["ecn"]["dscp"][gone]
    result = audit_kernel(s)
    assert drift_paths(result) == {f"queue[3].ecn.dscp[{gone}]": (None, "26")}
    nft = "ip" if gone == "ipv4" else "ip6"
    assert f"nft {nft} rule for queue 3: no rule; host script: marks DSCP 26" in result.raw[0].text
    assert f"queue[3].ecn.dscp[{stays}]" not in drift_paths(result)


def test_an_intended_script_without_the_ipv6_rule_is_drift_against_a_kernel_that_has_it() -> None:
    want = intended("frr")
    lines = [x for x in want[".sh"].splitlines() if not x.lstrip().startswith("ip6 dscp")]
    assert len(lines) < len(want[".sh"].splitlines())
    want[".sh"] = "\n".join(lines) + "\n"
    result = run("frr", {".conf": want[".conf"]}, state(), want=want)
    assert drift_paths(result) == {"queue[3].ecn.dscp[ipv6]": ("26", None)}


def test_a_saved_state_with_merged_families_is_refused_not_misread() -> None:
    s = state()
    s["ecn"]["dscp"] = {"3": [26]}  # written by netfab before per-family DSCPs
    result = audit_kernel(s)
    assert result.status == "unreadable" and "per address family" in (result.error or "")


def test_avpkt_and_shaper_from_the_host_script_environment() -> None:
    s = state()
    s["env"] = {"NETFAB_ECN_AVPKT": "4150", "NETFAB_SHAPE_MBIT": "20"}
    for port in s["ecn"]["ports"].values():
        port["nftables"]["3"] = {"rate_pps": 20 * 1_000_000 * 95 // 100 // 8 // 4150, "burst_packets": 37}
    assert audit_kernel(s).status == "in_sync"


def test_red_thresholds_are_compared_exactly() -> None:
    s = state("red")
    s["ecn"]["ports"]["swp3"]["red"]["min"] = 400_000
    s["ecn"]["ports"]["swp3"]["red"]["probability"] = 0.5
    assert drift_paths(audit_kernel(s)) == {
        "interface[swp3].queue[3].ecn.kmin_bytes": (400_000, 150_000),
        "interface[swp3].queue[3].ecn.pmax_percent": (50, 100),
    }


def test_marking_off_is_one_missing_queue_per_port_grouped_as_one_finding() -> None:
    s = state()
    s["ecn"] = {"mode": "off", "ports": {}, "dscp": {}}
    result = audit_kernel(s)
    assert {d.path for d in result.drifts} == {f"interface[swp{n}].queue[3].ecn" for n in range(1, 5)}
    [group] = group_drifts([result])
    assert sentence(group, device_meta(plan_for("frr")), group_details(group, {"leaf1": result})) == (
        "ECN marking on queue 3 is missing on leaf1 (swp1, swp2, swp3, swp4); the intent has it (kmin_bytes 150 KB)"
    )


def test_port_mtu_and_seed() -> None:
    s = state()
    s["links"]["swp4"]["mtu"] = 1500
    s["links"]["mgmt0"]["mtu"] = 9000  # not a port the script manages
    s["sysctl"]["net.ipv4.fib_multipath_hash_seed"] = 7
    assert drift_paths(audit_kernel(s)) == {
        "interface[swp4].mtu": (1500, 9216),
        "hash.seed": (7, leaf("frr").hash_seed),
    }


def test_kernel_not_collected_is_a_note() -> None:
    result = audit_kernel(None)  # type: ignore[arg-type]
    assert result.status == "in_sync"
    assert result.notes == ["kernel state not collected: ECMP hash, ECN marking and port MTUs were not audited"]


def test_knobs_this_kernel_lacks_are_not_compared() -> None:
    s = state()
    del s["sysctl"]["net.ipv4.fib_multipath_hash_seed"]  # kernel < 6.11: the script skips it too
    assert audit_kernel(s).status == "in_sync"
