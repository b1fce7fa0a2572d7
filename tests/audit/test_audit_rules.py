"""Declared exclusions: unmanaged line prefixes (CLI, FRR, Junos) and JSON-pointer excludes (SONiC, NVUE)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from audit_helpers import ROOT, drift_paths, frr_running, intended, kernel_state, leaf, run

from netfab.audit.rules import AuditPlaybook, AuditRules, load_audit_playbook, split_pointer
from netfab.load.document import DocumentError

SHIPPED = load_audit_playbook(ROOT / "playbooks" / "audit.yaml")


def test_the_shipped_runbook_loads() -> None:
    assert "snmp-server " in SHIPPED.unmanaged and SHIPPED.parallelism >= 1


def test_unmanaged_sections_are_neither_drift_nor_remediated() -> None:
    text = intended("arista_eos")[".cfg"]
    running = text.replace(
        "ip routing\n",
        "ip routing\n!\nsnmp-server community ops-ro ro\nlogging host 192.0.2.50\n"
        "username admin privilege 15 role network-admin secret sha512 $6$abc\nntp server 192.0.2.1\n",
    )
    assert run("arista_eos", {".cfg": running}, rules=AuditRules.from_playbook(SHIPPED)).status == "in_sync"
    unmanaged_off = run("arista_eos", {".cfg": running})
    assert {"line[snmp-server community ops-ro ro]", "line[logging host 192.0.2.50]"} <= set(drift_paths(unmanaged_off))


def test_an_unmanaged_prefix_drops_the_whole_section() -> None:
    text = intended("arista_eos")[".cfg"]
    running = text + "management api http-commands\n   no shutdown\n   vrf MGMT\n      no shutdown\n"
    rules = AuditRules.from_playbook(AuditPlaybook(unmanaged=["management api "]))
    assert run("arista_eos", {".cfg": running}, rules=rules).status == "in_sync"
    assert run("arista_eos", {".cfg": running}).status == "drift"


def test_junos_prefixes_match_with_or_without_set() -> None:
    text = intended("juniper_junos")[".set"]
    running = text + "set snmp community public authorization read-only\nset system ntp server 192.0.2.1\n"
    rules = AuditRules.from_playbook(AuditPlaybook(unmanaged=["snmp ", "set system ntp "]))
    assert run("juniper_junos", {".set": running}, rules=rules).status == "in_sync"


def test_frr_unmanaged_prefix() -> None:
    conf = intended("frr")[".conf"]
    running = frr_running(conf.replace("hostname leaf1\n", "hostname leaf1\nlog file /var/log/frr/bgpd.log\n"))
    rules = AuditRules.from_playbook(AuditPlaybook(unmanaged=["log file "]))
    assert run("frr", {".conf": running}, kernel_state(leaf("frr")), rules=rules).status == "in_sync"


def test_sonic_json_pointer_excludes_with_wildcards() -> None:
    files = intended("sonic")
    db = json.loads(files[".json"])
    for port in db["PORT"].values():
        port["fec"] = "rs"
    running = {".json": json.dumps(db), ".frr.conf": files[".frr.conf"]}
    assert set(drift_paths(run("sonic", running))) == {f"interface[{p}].config[/PORT/*/fec]" for p in db["PORT"]}
    rules = AuditRules.from_playbook(AuditPlaybook(exclude={"sonic": ["/PORT/*/fec"]}))
    result = run("sonic", running, rules=rules)
    assert result.status == "in_sync"


def test_nvue_excludes_and_device_owned_system_branches() -> None:
    doc = yaml.safe_load(intended("nvidia_cumulus")[".yaml"])
    doc[0]["set"]["system"]["timezone"] = "Europe/Amsterdam"  # system/* that netfab does not render: device-owned
    doc[0]["set"]["interface"]["swp1"]["link"]["speed"] = "400G"
    running = {".yaml": yaml.safe_dump(doc)}
    assert drift_paths(run("nvidia_cumulus", running)) == {
        "interface[swp1].config[/interface/*/link/speed]": ("400G", None)
    }
    rules = AuditRules.from_playbook(AuditPlaybook(exclude={"nvidia_cumulus": ["/interface/*/link/speed"]}))
    assert run("nvidia_cumulus", running, rules=rules).status == "in_sync"


def test_runbook_errors_are_reported(tmp_path: Path) -> None:
    bad = tmp_path / "audit.yaml"
    bad.write_text("name: x\nunmanaged: [a]\nexlude: {}\n")
    with pytest.raises(DocumentError, match=r"audit.yaml:3:1: SCHEMA-extra .*exlude"):
        load_audit_playbook(bad)
    with pytest.raises(ValueError, match="must start with '/'"):
        AuditRules.from_playbook(AuditPlaybook(exclude={"sonic": ["PORT/*/fec"]}))


def test_pointer_escaping() -> None:
    assert split_pointer("/a~1b/c~0d") == ("a/b", "c~d")
