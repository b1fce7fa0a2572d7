"""Drift is found as facts in the plan's terms, and each platform's remediation is the minimal fix.

Remediations are checked for what hier_config's stock rules get wrong on AI-fabric syntax: a changed ECN
threshold, description or MTU is replaced in place, never negated first.
"""

from __future__ import annotations

import json
import re

import jsonpatch
import yaml
from audit_helpers import drift_paths, frr_running, intended, kernel_state, leaf, run


def test_eos_ecn_kmax_and_description_drift_are_facts_and_replaced_in_place() -> None:
    text = intended("arista_eos")[".cfg"]
    running = text.replace("maximum-threshold 1500 kbytes", "maximum-threshold 400 kbytes").replace(
        "description host: host1 eth0", "description temp: swapped optic"
    )
    result = run("arista_eos", {".cfg": running})
    assert drift_paths(result) == {
        "profile[NETFAB-LOSSLESS].queue[3].ecn.kmax_bytes": (400_000, 1_500_000),
        "interface[Ethernet1/1].description": ("temp: swapped optic", "host: host1 eth0"),
    }
    fix = result.remediation["remediation.cfg"]
    assert "random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes" in fix
    assert "no random-detect" not in fix and "no description" not in fix
    unified = result.raw[0].text
    assert "- random-detect ecn minimum-threshold 150 kbytes maximum-threshold 400 kbytes" in unified


def test_eos_missing_bgp_neighbor_is_one_finding_with_what_it_carried() -> None:
    text = intended("arista_eos")[".cfg"]
    running = "\n".join(ln for ln in text.splitlines() if "neighbor 10.128.0.2 " not in ln) + "\n"
    result = run("arista_eos", {".cfg": running})
    [drift] = result.drifts
    assert (drift.path, drift.actual, drift.intended) == ("bgp.neighbor[10.128.0.2]", None, "present")
    assert set(drift.detail) == {"peer_group fabric", "remote_as 65000", "description spine2"}
    assert "neighbor 10.128.0.2 remote-as 65000" in result.remediation["remediation.cfg"]


def test_eos_strict_queue_turned_dwrr_is_one_knob() -> None:
    text = intended("arista_eos")[".cfg"]
    running = text.replace("      priority strict\n", "      no priority\n")
    result = run("arista_eos", {".cfg": running})
    assert drift_paths(result) == {"profile[NETFAB-LOSSLESS].queue[6].scheduling": ("dwrr", "strict")}
    fix = result.remediation["remediation.cfg"]
    assert "priority strict" in fix and "no priority" not in fix


def test_nxos_ecn_mtu_and_dscp_classification() -> None:
    text = intended("cisco_nxos")[".cfg"]
    running = (
        text.replace("minimum-threshold 150 kbytes", "minimum-threshold 50 kbytes")
        .replace("  mtu 9216\n  ip address 10.64.0.0/31", "  mtu 1500\n  ip address 10.64.0.0/31")
        .replace("  match dscp 26\n", "  match dscp 24\n")
    )
    result = run("cisco_nxos", {".cfg": running})
    assert drift_paths(result) == {
        "policy[NETFAB-EGRESS].queue[3].ecn.kmin_bytes": (50_000, 150_000),
        "interface[Ethernet1/1].mtu": (1500, 9216),
        "dscp_map[24]": (3, None),
        "dscp_map[26]": (None, 3),
    }
    fix = result.remediation["remediation.cfg"]
    assert "no random-detect" not in fix and "no mtu" not in fix
    assert "match dscp 26" in fix


def test_junos_mtu_and_scheduler_share_are_set_not_deleted_first() -> None:
    text = intended("juniper_junos")[".set"]
    # Junos' mtu is the media MTU: 9230 carries the intent's 9216-byte IP MTU (FIDELITY_REVIEW JUN-5).
    running = text.replace("et-0/0/0 mtu 9230", "et-0/0/0 mtu 1514").replace(
        "NETFAB-ROCE transmit-rate percent 50", "NETFAB-ROCE transmit-rate percent 40"
    )
    result = run("juniper_junos", {".set": running})
    assert drift_paths(result) == {"interface[et-0/0/0].mtu": (1514, 9230), "scheduler[NETFAB-ROCE].weight": (40, 50)}
    fix = result.remediation["remediation.set"]
    assert "set interfaces et-0/0/0 mtu 9230" in fix and "delete" not in fix


def test_frr_removed_neighbor_and_frr_reload_style_diff() -> None:
    conf = intended("frr")[".conf"]
    running = frr_running(re.sub(r" neighbor swp3 .*\n", "", conf))
    result = run("frr", {".conf": running}, kernel_state(leaf("frr")))
    [drift] = result.drifts
    assert drift.path == "bgp.neighbor[swp3]" and drift.actual is None
    diff = result.raw[0].text
    assert diff.startswith("Lines To Add\n============\nrouter bgp 65100\n neighbor swp3 interface peer-group fabric")
    assert "service integrated-vtysh-config" not in diff  # FRR adds it itself
    assert result.remediation["frr.conf"] == conf


def test_frr_extra_line_is_deleted_in_the_reload_diff() -> None:
    conf = intended("frr")[".conf"]
    running = frr_running(conf.replace("interface swp1\n", "interface swp1\n shutdown\n"))
    result = run("frr", {".conf": running}, kernel_state(leaf("frr")))
    assert drift_paths(result) == {"interface[swp1].line[shutdown]": ("present", None)}
    assert "Lines To Delete\n===============\ninterface swp1\n no shutdown" in result.raw[0].text


def test_sonic_wred_threshold_and_pfc_as_json_patch() -> None:
    files = intended("sonic")
    db = json.loads(files[".json"])
    db["WRED_PROFILE"]["ECN_Q3"]["green_max_threshold"] = "400000"
    db["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "3,4"
    result = run("sonic", {".json": json.dumps(db), ".frr.conf": frr_running(files[".frr.conf"])})
    assert drift_paths(result) == {
        "wred_profile[ECN_Q3].ecn.kmax_bytes": (400_000, 1_500_000),
        "interface[Ethernet0].pfc.priorities": ("3,4", "3"),
    }
    ops = result.raw[0].ops
    assert {"op": "replace", "path": "/WRED_PROFILE/ECN_Q3/green_max_threshold", "value": "1500000"} in ops
    assert jsonpatch.apply_patch(db, ops) == json.loads(files[".json"])


def test_sonic_frr_part_is_prefixed() -> None:
    files = intended("sonic")
    frr = files[".frr.conf"].replace("maximum-paths 64", "maximum-paths 8")
    result = run("sonic", {".json": files[".json"], ".frr.conf": frr})
    assert drift_paths(result) == {"frr.bgp.max_paths": (8, 64)}
    assert set(result.remediation) == {"bgp-frr.conf", "bgp-frr-reload-test.txt"}


def test_nvue_ecn_min_threshold_and_extra_interface() -> None:
    doc = yaml.safe_load(intended("nvidia_cumulus")[".yaml"])
    tree = doc[0]["set"]
    tree["qos"]["congestion-control"]["default-global"]["traffic-class"]["3"]["min-threshold"] = 40000
    tree["interface"]["swp9"] = {"type": "swp", "link": {"mtu": 1500}}
    result = run("nvidia_cumulus", {".yaml": yaml.safe_dump(doc)})
    assert drift_paths(result) == {
        "queue[3].ecn.kmin_bytes": (40_000, 150_000),
        "interface[swp9]": ("present", None),
    }
    commands = result.raw[0].text.splitlines()
    assert commands == [
        "nv unset interface swp9",
        "nv set qos congestion-control default-global traffic-class 3 min-threshold 150000",
    ]
    patch = yaml.safe_load(result.remediation["nvue-patch.yaml"])
    ecn = {"congestion-control": {"default-global": {"traffic-class": {"3": {"min-threshold": 150000}}}}}
    assert patch == [{"unset": {"interface": {"swp9": {}}}}, {"set": {"qos": ecn}}]


def test_unparseable_running_config_makes_the_device_unreadable() -> None:
    result = run("sonic", {".json": "{not json", ".frr.conf": ""})
    assert result.status == "unreadable" and "running .json" in (result.error or "")


def test_a_missing_companion_is_a_note_not_drift() -> None:
    result = run("sonic", {".json": intended("sonic")[".json"]})
    assert result.status == "in_sync"
    assert result.notes == [".frr.conf not collected: that part was not audited"]
