"""Every report format renders the same audit: text and markdown for people, JSON/JUnit/SARIF for machines."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from audit_helpers import intended, kernel_state, leaf, plan_for, run

from netfab.audit.engine import device_meta
from netfab.audit.group import group_drifts
from netfab.audit.model import AuditReport, DeviceAudit
from netfab.audit.output import write_audit_dir
from netfab.audit.report import FORMATS, render
from netfab.audit.report.findings import area


@pytest.fixture(scope="module")
def report() -> AuditReport:
    conf1, conf2 = intended("frr")[".conf"], intended("frr", "leaf2")[".conf"]
    state2 = kernel_state(leaf("frr", "leaf2"))
    bad = {**state2, "sysctl": {**state2["sysctl"], "net.ipv4.fib_multipath_hash_policy": 0}}
    drifted = {".conf": conf2.replace("maximum-paths 64", "maximum-paths 8")}
    devices = [
        run("frr", {".conf": conf1}, kernel_state(leaf("frr"))),
        run("frr", drifted, bad, name="leaf2"),
        DeviceAudit("leaf3", "frr", "unreadable", error="cannot collect: ConnectionException: timed out"),
    ]
    return AuditReport(
        fabric="lab",
        source="saved configs in ci/running",
        devices=devices,
        meta=device_meta(plan_for("frr")),
        groups=group_drifts(devices),
        seconds=0.42,
        locations={"leaf1": "ci/running/leaf1.conf", "leaf2": "ci/running/leaf2.conf"},
    )


def test_text_reads_top_down(report: AuditReport) -> None:
    text = render("text", report)
    lines = text.splitlines()
    assert lines[0] == (
        "netfab audit lab: DRIFT - 3 devices from saved configs in ci/running in 0.4 s: 1 in sync, 1 drifted "
        "(2 findings in 2 groups), 1 unreadable"
    )
    assert "  1. BGP maximum-paths is 8 on leaf2; the intent says 64" in lines
    assert "--- leaf2 (frr, leaf, rail 2): 2 drifted facts" in lines
    assert "    sysctl net.ipv4.fib_multipath_hash_policy = 0; host script: 1" in lines
    # then, in the style every verb shares, one line per finding and the summary line
    assert lines[-4:] == [
        "leaf2: error[AUDIT-BGP] BGP maximum-paths is 8; the intent says 64 (bgp.max_paths)",
        "leaf2: error[AUDIT-HASH] ECMP hash fields (ipv4) is dst_ip,src_ip; the intent says "
        "dst_ip,dst_port,ip_protocol,src_ip,src_port (hash.fields[ipv4])",
        "leaf3: error[AUDIT-UNREADABLE] could not be audited: cannot collect: ConnectionException: timed out",
        "3 errors, 0 warnings on 2 devices",
    ]


def test_json_is_the_complete_record(report: AuditReport, check_report_json) -> None:
    envelope = check_report_json(render("json", report), "audit")
    assert envelope["summary"]["errors"] == 3 and envelope["summary"]["error"] == 1  # leaf3: unknown, not drift
    by_rule = {f["rule_id"]: f for f in envelope["findings"]}
    assert by_rule["AUDIT-BGP"]["subject"] == "leaf2"
    assert (by_rule["AUDIT-BGP"]["actual"], by_rule["AUDIT-BGP"]["expected"]) == (8, 64)
    assert by_rule["AUDIT-UNREADABLE"]["status"] == "error"
    data = envelope["details"]
    assert data["summary"] == {"devices": 3, "in_sync": 1, "drift": 1, "unreadable": 1, "findings": 2, "groups": 2}
    leaf2 = data["devices"]["leaf2"]
    assert {d["path"] for d in leaf2["drift"]} == {"bgp.max_paths", "hash.fields[ipv4]"}
    assert {r["kind"] for r in leaf2["raw"]} == {"frr-reload", "kernel"}
    assert leaf2["remediation"] == ["frr-reload-test.txt", "frr.conf", "host.sh"]
    assert data["groups"][0]["members"][0]["device"] == "leaf2"


def test_junit_has_a_case_per_area_and_device(report: AuditReport) -> None:
    root = ET.fromstring(render("junit", report))
    # every audited device gets a case per drift area, so the dashboard shows the whole fleet
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("24", "2", "1")
    failure = root.find(".//testcase[@name='AUDIT-HASH: leaf2']/failure")
    assert failure is not None and "hash.fields[ipv4]" in (failure.text or "")
    assert root.find(".//testcase[@name='AUDIT-UNREADABLE: leaf3']/error") is not None
    assert list(root.find(".//testcase[@name='AUDIT-HASH: leaf1']")) == []  # in sync: a passing case


def test_sarif_results_point_at_the_device_file(report: AuditReport, check_sarif) -> None:
    sarif = check_sarif(render("sarif", report))
    results = sarif["runs"][0]["results"]
    assert sorted(r["ruleId"] for r in results) == ["AUDIT-BGP", "AUDIT-HASH", "AUDIT-UNREADABLE"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert "ci/running/leaf2.conf" in uris


def test_markdown_table(report: AuditReport) -> None:
    md = render("markdown", report)
    assert md.startswith("# Drift audit: lab\n")
    assert "| 1 | BGP maximum-paths is 8 on leaf2; the intent says 64 | leaf2 |" in md
    assert md.endswith("\n\n**3 errors, 0 warnings on 2 devices**\n")


def test_unknown_format() -> None:
    assert FORMATS == ("text", "json", "junit", "sarif", "markdown")  # the shared vocabulary
    with pytest.raises(ValueError, match="unknown report format"):
        render("yaml", AuditReport("f", "s", [], {}, []))


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("profile[P].queue[3].ecn.kmax_bytes", "AUDIT-ECN"),
        ("interface[swp1].queue[3].ecn", "AUDIT-ECN"),
        ("watchdog.detect_ms", "AUDIT-PFC"),
        ("interface[Ethernet1].pfc", "AUDIT-PFC"),
        ("hash.fields[ipv4]", "AUDIT-HASH"),
        ("dscp_map[26]", "AUDIT-QOS"),
        ("frr.bgp.neighbor[10.0.0.1]", "AUDIT-BGP"),
        ("interface[swp1].mtu", "AUDIT-INTERFACE"),
        ("line[ip routing]", "AUDIT-CONFIG"),
    ],
)
def test_drift_areas(path: str, rule: str) -> None:
    assert area(path) == rule


def test_audit_dir_is_contained_and_complete(report: AuditReport, tmp_path: Path) -> None:
    out = tmp_path / "build" / "lab" / "audit"
    assert write_audit_dir(report, out).refused == []
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert files == [
        ".netfab-output",  # the marker that lets the next audit replace this directory
        "devices/leaf2/diff.txt",
        "devices/leaf2/frr-reload-test.txt",
        "devices/leaf2/frr.conf",
        "devices/leaf2/host.sh",
        "report.json",
        "report.txt",
    ]
    evil = DeviceAudit("../../etc", "frr", "drift", remediation={"host.sh": "x"})
    sneaky = DeviceAudit("a/b", "frr", "drift", remediation={"host.sh": "x"})
    refused = write_audit_dir(AuditReport("lab", "s", [evil, sneaky], {}, []), out).refused
    assert refused == ["../../etc", "a/b"]
    assert not (tmp_path / "etc").exists() and not (out / "devices" / "a").exists()
