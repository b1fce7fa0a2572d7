"""The capability gate table (netfab.lint.rules.platform_gates): one shape of rule, written as data."""

from __future__ import annotations

from pathlib import Path

import yaml
from lint_helpers import REPO, lint_data, merged

from netfab.lint import default_registry
from netfab.lint.rules.platform_gates import GATES, GateRule


def test_every_capability_rule_is_still_registered() -> None:
    ids = {rule_id for rule_id in default_registry().ids if rule_id.startswith("CAP")}
    assert ids == {f"CAP{n:03d}" for n in range(1, 28)}
    gates = {g.id for g in GATES}
    assert gates == {"CAP002", "CAP003", "CAP004", "CAP005", "CAP008", "CAP009", "CAP013", "CAP017", "CAP020", "CAP023"}
    for gate in GATES:
        rule = default_registry().get(gate.id)
        assert issubclass(rule, GateRule) and rule.__name__ == gate.name
        assert "```yaml" in rule.doc() and "# fixed" in rule.doc()


def test_a_gate_reports_every_ask_on_every_lacking_tier(tmp_path: Path) -> None:
    # frr (the lab's platform) has no QP or opcode hashing: one finding per field, each at its list index,
    # with the record's reason, and the generic hint.
    lab = yaml.safe_load((REPO / "intent" / "lab.yaml").read_text())
    fields = ["src_ip", "dst_ip", "rocev2_dest_qp", "src_port", "rocev2_opcode"]
    result = lint_data(merged(lab, {"load_balancing": {"hash_fields": fields}}), tmp_path)
    found = [f for f in result.findings if f.rule_id == "CAP002"]
    assert [f.path for f in found] == ["load_balancing.hash_fields[2]", "load_balancing.hash_fields[4]"]
    assert found[0].message == (
        "hash field rocev2_dest_qp is not supported by the leaf and spine tiers (frr): the Linux FIB hash cannot "
        "read the RoCEv2 BTH (destination QP); use src_port, which NICs vary per QP"
    )
    assert found[0].hint == "remove the field from load_balancing.hash_fields"


def test_an_open_gate_still_checks_its_limits(tmp_path: Path) -> None:
    # Cumulus has adaptive routing, at 200G/400G only: a 100G fabric gets the speed finding, not "unsupported".
    lab = yaml.safe_load((REPO / "intent" / "lab.yaml").read_text())
    for tier in ("leaf", "spine"):
        lab["topology"][tier]["platform"] = "nvidia_cumulus"
    result = lint_data(merged(lab, {"load_balancing": {"adaptive_routing": True}}), tmp_path)
    messages = [f.message for f in result.findings if f.rule_id == "CAP003"]
    assert messages and all("works at 200G/400G only" in m for m in messages), messages
