"""`netfab rules`: the ids of every reporting verb, and one rule explained (`netfab rules QOS004`)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from netfab.analyze.report import RULES as ANALYZE_RULES
from netfab.audit.report.findings import RULES as AUDIT_RULES
from netfab.cli import app as app_module
from netfab.health.report import RULES as HEALTH_RULES
from netfab.lint import rule_infos
from netfab.sot.findings import RULES as SOT_RULES
from netfab.verify.checks import ALL_CHECKS
from netfab.verify.checks import RULES as VERIFY_RULES


@pytest.fixture(scope="module", autouse=True)
def verbs() -> None:
    if not any(c.name == "rules" for c in app_module.app.registered_commands):
        app_module._register_verbs()


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app_module.app, ["rules", *args])
    return result.exit_code, result.stdout, result.stderr


def test_every_verbs_ids_are_listed_once() -> None:
    code, out, _ = invoke("--format", "json")
    assert code == 0
    listed = {(e["id"], e["verb"]) for e in json.loads(out)}
    expected = {(r.id, "lint") for r in rule_infos()}
    expected |= {(r.id, "verify") for r in VERIFY_RULES} | {(r.id, "audit") for r in AUDIT_RULES}
    expected |= {(r.id, "analyze") for r in ANALYZE_RULES} | {(r.id, "health") for r in HEALTH_RULES}
    expected |= {(r.id, "sot") for r in SOT_RULES}
    assert listed == expected
    ids = [e["id"] for e in json.loads(out)]
    assert len(ids) == len(set(ids)), "a rule id must name one rule across all verbs"
    assert {c.id for c in ALL_CHECKS} | {"VERIFY-CONNECT"} == {r.id for r in VERIFY_RULES}
    assert {"QOS004", "VERIFY-BGP", "AUDIT-ECN", "ANALYZE001"} <= set(ids)


def test_the_verb_filter() -> None:
    code, out, _ = invoke("--verb", "audit")
    assert code == 0 and "AUDIT-ECN" in out and "QOS004" not in out


@pytest.mark.parametrize(("rule_id", "verb"), [("QOS004", "lint"), ("verify-bgp", "verify"), ("ANALYZE001", "analyze")])
def test_one_rule_is_explained(rule_id: str, verb: str) -> None:
    code, out, _ = invoke(rule_id)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"{rule_id.upper()}: ")
    assert lines[1].startswith(f"reported by netfab {verb}, severity ")
    assert out.rstrip().splitlines()[-1].startswith("Fix: ")


def test_qos004_explanation_carries_its_example() -> None:
    code, out, _ = invoke("QOS004")
    assert code == 0 and "```yaml" in out and "priority: 6" in out
    code, out, _ = invoke("QOS004", "--format", "json")
    [entry] = json.loads(out)
    assert entry["id"] == "QOS004" and entry["verb"] == "lint" and entry["hint"]


def test_an_unknown_rule_is_a_usage_error_with_suggestions() -> None:
    code, out, err = invoke("QOS04")
    assert code == 2 and out == ""
    assert "no rule 'QOS04'; did you mean QOS004" in err
