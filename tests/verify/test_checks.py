"""Post-checks against recorded getter outputs (no device): each check passes on a healthy fabric and
names the exact problem on a broken one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from netfab.cli.report_options import report_context
from netfab.design import FabricPlan, design
from netfab.intent import Intent
from netfab.report import render
from netfab.verify.checks import RULES, BgpSessions, Cabling, EcmpWidth, InterfacesUp, QosState, run_checks
from netfab.verify.results import failed

INTENT = Path(__file__).resolve().parents[2] / "intent" / "lab.yaml"


@pytest.fixture(scope="module")
def plan() -> FabricPlan:
    return design(Intent.model_validate(yaml.safe_load(INTENT.read_text())))


class HealthyDevice:
    """Getter outputs a correctly built and cabled device returns (NAPALM shapes)."""

    def __init__(self, plan: FabricPlan, name: str) -> None:
        self.plan = plan
        self.dev = plan.devices[name]
        self.arp: list[dict[str, Any]] = [
            {"interface": i.name, "ip": i.peer_address, "mac": "02:00:00:00:00:01", "age": 1.0}
            for i in self.dev.interfaces
            if i.role == "host"
        ]

    def get_bgp_neighbors(self) -> dict[str, Any]:
        peers = {}
        for n in self.dev.bgp.neighbors:
            peer = self.plan.devices[n.peer_device]
            peers[n.address or n.interface] = {"is_up": True, "remote_as": n.remote_as, "remote_id": peer.loopback}
        return {"global": {"peers": peers}}

    def get_interfaces(self) -> dict[str, Any]:
        return {i.name: {"is_up": True, "mtu": i.mtu} for i in self.dev.interfaces}

    def get_route_ecmp_width(self, prefixes: list[str]) -> dict[str, int]:
        return dict.fromkeys(prefixes, len(self.dev.interfaces_by_role("fabric_up")))

    def get_arp_table(self) -> list[dict[str, Any]]:
        return self.arp


def test_healthy_fabric_passes_every_check(plan: FabricPlan) -> None:
    for name in plan.devices:
        results = run_checks(plan.devices[name], HealthyDevice(plan, name), plan)
        assert not failed(results), [r.message for r in failed(results)]
        assert any(r.status == "pass" for r in results)


def test_missing_and_down_sessions_are_named(plan: FabricPlan) -> None:
    conn = HealthyDevice(plan, "leaf1")
    peers = conn.get_bgp_neighbors()
    del peers["global"]["peers"]["swp3"]
    peers["global"]["peers"]["swp4"]["is_up"] = False
    peers["global"]["peers"]["swp9"] = {"is_up": True, "remote_as": 1, "remote_id": "1.1.1.1"}
    conn.get_bgp_neighbors = lambda: peers  # type: ignore[method-assign]
    messages = [r.message for r in failed(BgpSessions().run(plan.devices["leaf1"], conn, plan))]
    assert messages == [
        "no BGP session to spine1 on swp3",
        "BGP session to spine2 on swp4 is down",
        "unexpected BGP peer swp9",
    ]


def test_interface_mtu_and_state(plan: FabricPlan) -> None:
    conn = HealthyDevice(plan, "leaf1")
    interfaces = conn.get_interfaces()
    interfaces["swp1"]["mtu"] = 1500
    interfaces["swp2"]["is_up"] = False
    conn.get_interfaces = lambda: interfaces  # type: ignore[method-assign]
    messages = [r.message for r in failed(InterfacesUp().run(plan.devices["leaf1"], conn, plan))]
    assert messages == ["swp1 MTU is 1500, intended 9216", "swp2 (to host2) is down"]


def test_ecmp_width_below_design(plan: FabricPlan) -> None:
    conn = HealthyDevice(plan, "leaf1")
    conn.get_route_ecmp_width = lambda prefixes: dict.fromkeys(prefixes, 1)  # type: ignore[method-assign]
    results = failed(EcmpWidth().run(plan.devices["leaf1"], conn, plan))
    assert len(results) == 3 and results[0].message.endswith("1 next hops, designed 2")


def test_swapped_uplinks_are_named_against_the_cabling_plan(plan: FabricPlan) -> None:
    conn = HealthyDevice(plan, "leaf1")
    peers = conn.get_bgp_neighbors()
    a, b = peers["global"]["peers"]["swp3"], peers["global"]["peers"]["swp4"]
    a["remote_id"], b["remote_id"] = b["remote_id"], a["remote_id"]
    conn.get_bgp_neighbors = lambda: peers  # type: ignore[method-assign]
    messages = [r.message for r in failed(Cabling().run(plan.devices["leaf1"], conn, plan))]
    assert messages == [
        "swp3 reaches spine2; the cabling plan says spine1 swp1",
        "swp4 reaches spine1; the cabling plan says spine2 swp1",
    ]


def test_miscabled_rail_names_the_server_and_nic(plan: FabricPlan) -> None:
    # host3's first NIC (rail 1) is plugged into leaf2 (rail 2's leaf in SU 1), port swp1.
    conn = HealthyDevice(plan, "leaf2")
    host3 = next(s for s in plan.servers if s.name == "host3")
    conn.arp[0]["ip"] = host3.nics[0].address.split("/")[0]
    messages = [r.message for r in failed(Cabling().run(plan.devices["leaf2"], conn, plan))]
    assert messages == ["server host3 NIC 0 is on rail 2's leaf (leaf2 swp1); the plan puts it on leaf3 swp1"]


def test_qos_state_skips_without_a_getter_and_compares_with_one(plan: FabricPlan) -> None:
    dev = plan.devices["leaf1"]
    assert [r.status for r in QosState().run(dev, HealthyDevice(plan, "leaf1"), plan)] == ["skip"]
    conn = HealthyDevice(plan, "leaf1")
    conn.get_qos_state = lambda: {  # type: ignore[attr-defined]
        "expected": {"fib_multipath_hash_policy": 1},
        "actual": {"fib_multipath_hash_policy": 0},
        "notes": ["PFC cannot run on veth"],
    }
    statuses = [r.status for r in QosState().run(dev, conn, plan)]
    assert statuses == ["fail", "skip"]


def test_a_crashing_getter_is_an_error_result_not_a_crash(plan: FabricPlan) -> None:
    conn = HealthyDevice(plan, "leaf1")

    def boom() -> dict[str, Any]:
        raise ConnectionError("session dropped")

    conn.get_interfaces = boom  # type: ignore[method-assign]
    results = run_checks(plan.devices["leaf1"], conn, plan)
    errors = [r for r in results if r.status == "error"]
    assert [(r.rule_id, r.message) for r in errors] == [("VERIFY-INTERFACES", "ConnectionError: session dropped")]
    assert "<error" in render("junit", results, report_context("verify", rules=RULES))


def test_every_format_of_a_verify_run_validates(plan: FabricPlan, check_report_json, check_sarif) -> None:
    """Verify reports through the shared writers: the JSON envelope and SARIF validate against their schemas,
    JUnit parses even when a device sends an ANSI escape, and text uses the one style."""
    import xml.etree.ElementTree as ET

    from netfab.verify.results import check_result

    conn = HealthyDevice(plan, "leaf1")
    conn.get_interfaces = lambda: {i.name: {"is_up": True, "mtu": 1500} for i in conn.dev.interfaces}  # type: ignore[method-assign]
    results = run_checks(plan.devices["leaf1"], conn, plan)
    results.append(check_result("spine1", "VERIFY-CONNECT", "error", "cannot check: \x1b[31mTimeoutError\x1b[0m"))
    context = report_context("verify", rules=RULES)
    envelope = check_report_json(render("json", results, context), "verify")
    mtu = next(f for f in envelope["findings"] if f["rule_id"] == "VERIFY-INTERFACES" and f["status"] == "fail")
    assert (mtu["subject"], mtu["expected"], mtu["actual"]) == ("leaf1", 9216, 1500)
    assert envelope["summary"]["pass"] > 0 and envelope["summary"]["error"] == 1
    sarif = check_sarif(render("sarif", results, context))
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} == {"VERIFY-INTERFACES", "VERIFY-CONNECT"}
    assert sarif["runs"][0]["automationDetails"]["id"] == "netfab/verify/"
    root = ET.fromstring(render("junit", results, context))
    assert root.find(".//testcase[@name='VERIFY-CONNECT: spine1']/error") is not None
    text = render("text", results, context).splitlines()
    assert text[0].startswith("leaf1: error[VERIFY-INTERFACES] ") and "MTU is 1500, intended 9216" in text[0]
    assert text[-1].endswith("could not run") and "passed" in text[-1]
    assert all(r.id.startswith("VERIFY-") and r.doc for r in RULES)  # one id scheme, every check documented
