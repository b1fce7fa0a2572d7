"""The audit against the real lab: a fresh lab is in sync; drift injected by hand on three switches is found
exactly (nothing else); --remediate fixes it through the staged, commit-confirmed deploy; a second audit
is clean.

Injected, one per switch and one per layer:
- leaf2, kernel ECN: the queue-3 marking threshold on swp1. On kernels without sch_red the host script
  marks with an nftables phantom queue, where Kmin is the limit's burst in packets (x avpkt 1500 B): 267
  packets = 400.5 KB instead of 100 = 150 KB. With tc RED, Kmin is RED's `min`: 400,000 B instead of 150,000.
- leaf3, FRR: `no neighbor swp3` (the session to spine1 goes away with it).
- leaf4, kernel hash: net.ipv4.fib_multipath_hash_policy=0 (addresses only instead of the 5-tuple).
- leaf4 too, kernel ECN, one address family: the IPv4 CE-marking nft rule deleted, the IPv6 one kept
  (RELIABILITY_TRIAL's false negative: it read "in sync"). Only on kernels where the script marks with nft.
  On a switch already drifted, so the remediation waves (and their post-checks) stay as they were.
Tests run in order and share the lab.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from netfab.lab import exec as lab_exec
from tests.e2e.conftest import RunningLab

pytestmark = pytest.mark.lab

EXPECTED = {
    ("leaf3", "bgp.neighbor[swp3]"): (None, "present"),
    ("leaf4", "hash.fields[ipv4]"): ("dst_ip,src_ip", "dst_ip,dst_port,ip_protocol,src_ip,src_port"),
}
KMIN = ("leaf2", "interface[swp1].queue[3].ecn.kmin_bytes")


def run_json(lab: RunningLab, *args: str) -> tuple[int, dict[str, Any]]:
    res = lab.netfab("audit", str(lab.intent), "--lab", lab.prefix, "--format", "json", *args, timeout=600)
    assert res.stdout.strip(), res.stderr
    envelope = json.loads(res.stdout)
    assert envelope["verb"] == "audit" and envelope["schema_version"] == 2
    return res.returncode, envelope["details"]  # the complete audit record


def found(report: dict[str, Any]) -> dict[tuple[str, str], tuple[Any, Any]]:
    return {
        (name, d["path"]): (d["actual"], d["intended"]) for name, dev in report["devices"].items() for d in dev["drift"]
    }


def sh(lab: RunningLab, node: str, *argv: str, stdin: str | None = None) -> str:
    res = lab_exec(lab.prefix, node, list(argv), input=stdin)
    assert res.returncode == 0, f"{node}: {argv}: {res.stderr}"
    return res.stdout


def red_mode(lab: RunningLab) -> bool:
    return '"kind":"red"' in sh(lab, "leaf2", "tc", "-j", "qdisc", "show", "dev", "swp1").replace(" ", "")


def inject_ecn(lab: RunningLab) -> int:
    """Raise leaf2 swp1's queue-3 Kmin; returns the Kmin the kernel now holds, in bytes."""
    if red_mode(lab):
        sh(lab, "leaf2", "tc", "qdisc", "replace", "dev", "swp1", "root", "handle", "1:", "red", "limit", "6000000",
           "min", "400000", "max", "1500000", "avpkt", "1500", "burst", "267", "probability", "0.99999999",
           "bandwidth", "34000mbit", "ecn")  # fmt: skip
        return 400_000
    table = sh(lab, "leaf2", "nft", "list", "table", "inet", "netfab_ecn")
    start = table.index("limit pq3_swp1 {")
    end = table.index("}", start)
    edited = table[:start] + table[start:end].replace("burst 100 packets", "burst 267 packets") + table[end:]
    assert edited != table
    sh(lab, "leaf2", "nft", "-f", "-", stdin="delete table inet netfab_ecn\n" + edited)
    return 267 * 1500


def delete_ipv4_marking_rule(lab: RunningLab) -> bool:
    """Delete leaf4's IPv4 ECN rule by handle, as the trial did; False where the kernel marks with RED."""
    if '"kind":"red"' in sh(lab, "leaf4", "tc", "-j", "qdisc", "show", "dev", "swp1").replace(" ", ""):
        return False
    listing = sh(lab, "leaf4", "nft", "-a", "list", "chain", "inet", "netfab_ecn", "postrouting")
    handles = [line.rsplit("# handle ", 1)[1] for line in listing.splitlines() if line.strip().startswith("ip dscp")]
    assert len(handles) == 1, listing
    sh(lab, "leaf4", "nft", "delete", "rule", "inet", "netfab_ecn", "postrouting", "handle", handles[0])
    assert "ip6 dscp" in sh(lab, "leaf4", "nft", "list", "chain", "inet", "netfab_ecn", "postrouting")
    return True


def test_a_fresh_lab_is_in_sync(audit_lab: RunningLab) -> None:
    rc, report = run_json(audit_lab)
    assert rc == 0, report
    assert report["summary"]["drift"] == 0 and report["summary"]["devices"] == 6


def test_injected_drift_is_found_exactly(audit_lab: RunningLab) -> None:
    kmin = inject_ecn(audit_lab)
    sh(audit_lab, "leaf3", "vtysh", "-c", "conf t", "-c", "router bgp 65102", "-c", "no neighbor swp3", "-c", "end")
    sh(audit_lab, "leaf4", "sysctl", "-w", "net.ipv4.fib_multipath_hash_policy=0")
    v4_gone = delete_ipv4_marking_rule(audit_lab)
    rc, report = run_json(audit_lab)
    assert rc == 1
    v4 = {("leaf4", "queue[3].ecn.dscp[ipv4]"): (None, "26")} if v4_gone else {}
    assert found(report) == {**EXPECTED, KMIN: (kmin, 150_000), **v4}
    n = 4 if v4_gone else 3  # leaf4 drifts twice; findings and groups count each
    summary = {"devices": 6, "in_sync": 3, "drift": 3, "unreadable": 0, "findings": n, "groups": n}
    assert report["summary"] == summary
    messages = {g["message"] for g in report["groups"]}
    assert "BGP neighbor is missing on leaf3 (swp3); the intent has it (" in " ".join(messages)
    assert (
        "ECMP hash fields (ipv4) is dst_ip,src_ip on leaf4; the intent says dst_ip,dst_port,ip_protocol,src_ip,src_port"
        in messages
    )
    assert report["devices"]["leaf3"]["remediation"] == ["frr-reload-test.txt", "frr.conf"]
    assert report["devices"]["leaf4"]["remediation"] == ["host.sh"]


def test_remediate_fixes_exactly_the_drifted_switches(audit_lab: RunningLab) -> None:
    rc, report = run_json(audit_lab, "--remediate", "--confirm-timeout", "120")
    outcome = report["remediation"]
    assert rc == 0, outcome
    assert outcome["ok"] and outcome["changed"] == ["leaf2", "leaf3", "leaf4"]
    assert outcome["still_drifted"] == [] and not outcome["failed"]
    run = json.loads((audit_lab.work / outcome["journal"] / "run.json").read_text())
    assert {d["state"] for d in run["devices"].values()} == {"confirmed"}
    assert sh(audit_lab, "leaf4", "sysctl", "-n", "net.ipv4.fib_multipath_hash_policy").strip() == "1"


def test_a_second_audit_is_clean(audit_lab: RunningLab, check_report_json) -> None:
    rc, report = run_json(audit_lab)
    assert rc == 0, found(report)
    verify = audit_lab.netfab("verify", str(audit_lab.intent), "--lab", audit_lab.prefix, "--format", "json")
    summary = check_report_json(verify.stdout, "verify")["summary"]
    assert verify.returncode == 0 and summary["fail"] == 0, verify.stdout
