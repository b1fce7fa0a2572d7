"""Rules that read the fabric plan (needs_plan), and `netfab lint` running them after a clean intent lint.

Each row is (rule id, base intent, what breaks it, what fixes it). A break is an intent patch, or a function
that damages the designed plan (what a design regression would do: the intent rules would not see it). The
rule runs on its own against LintContext.build(intent, source, plan), exactly as the CLI runs it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lint_helpers import CLOS3, EXAMPLES, RAIL, REPO, merged, write_intent
from typer.testing import CliRunner

from netfab.cli import app as app_module
from netfab.core.findings import Finding
from netfab.design import FabricPlan, design
from netfab.lint import LintContext, default_registry, lint_source
from netfab.lint.api import run_rules
from netfab.lint.registry import RuleRegistry
from netfab.lint.rules.plan_addressing import ledgers_prove_unique
from netfab.load import load_intent_source

Damage = Callable[[FabricPlan], None]
Break = dict[str, Any] | Damage


def _lower_one_mtu(plan: FabricPlan) -> None:
    leaf = plan.devices_of("leaf")[0]
    uplink = next(i for i in leaf.interfaces if i.role == "fabric_up")
    uplink.mtu = 1500


def _one_sided_pfc(plan: FabricPlan) -> None:
    spine = plan.devices_of("spine")[0]
    spine.interfaces[0].lossless = False


def _nics_without_pfc(plan: FabricPlan) -> None:
    congestion = dataclasses.replace(plan.nic, pfc_vector=(0,) * 8)
    for server in plan.servers[:3]:
        server.congestion = congestion


def _port_past_faceplate(plan: FabricPlan) -> None:
    leaf = plan.devices_of("leaf")[0]
    leaf.interfaces.append(dataclasses.replace(leaf.interfaces[-1], port=99, name="Ethernet784"))


def _same_loopback(plan: FabricPlan) -> None:
    first, second = plan.devices_of("leaf")[:2]
    second.loopback = first.loopback


def _index_handed_out_twice(plan: FabricPlan) -> None:
    """A pool handing one /31 to two host links: what an off-by-one in the design's indices does."""
    first, second = [link for link in plan.links if link.tier == "host"][:2]
    second.a_address, second.b_address = first.a_address, first.b_address
    ledger = next(ledger for ledger in plan.addresses if ledger.pairs)
    ledger.pairs[1] = ledger.pairs[0]


def _address_outside_the_ledger(plan: FabricPlan) -> None:
    """An unnumbered fabric link given an address already in use, by something other than the pools."""
    unnumbered = next(link for link in plan.links if link.tier != "host" and link.a_address is None)
    unnumbered.a_address = next(link for link in plan.links if link.tier == "host").a_address


def _same_leaf_asn(plan: FabricPlan) -> None:
    first, second = plan.devices_of("leaf")[:2]
    second.asn = first.asn


def _superspine_asn_on_a_spine(plan: FabricPlan) -> None:
    plan.devices_of("spine")[0].asn = plan.devices_of("superspine")[0].asn


CUMULUS = {"topology": {"leaf": {"platform": "nvidia_cumulus"}, "spine": {"platform": "nvidia_cumulus"}}}
NONE: dict[str, Any] = {}

# fmt: off
CASES: list[tuple[str, dict[str, Any], Break, dict[str, Any]]] = [
    # 4 leaves x 6 uplinks over 4 spines: 6 ports each by the counts, but blocks of 2 per leaf reach port 8.
    ("PLAN001", RAIL, {"topology": {"leaf": {"uplinks": 6}, "spine": {"ports": 6}}},
     {"topology": {"leaf": {"uplinks": 4}, "spine": {"ports": 6}}}),
    ("PLAN001", RAIL, _port_past_faceplate, NONE),
    ("PLAN002", RAIL, _lower_one_mtu, NONE),
    ("PLAN003", RAIL, _one_sided_pfc, NONE),
    ("PLAN003", RAIL, _nics_without_pfc, NONE),
    ("PLAN004", RAIL, {**CUMULUS, "load_balancing": {"hash_fields": ["src_ip", "dst_ip", "rocev2_dest_qp"]}},
     {**CUMULUS, "load_balancing": {"hash_fields": ["src_ip", "dst_ip", "src_port", "dst_port",
                                                     "rocev2_dest_qp"]}}),
    ("PLAN005", RAIL, {"underlay": {"hosts": "192.168.0.0/16"}}, {"underlay": {"hosts": "10.64.0.0/12"}}),
    ("PLAN005", CLOS3, _same_loopback, {"underlay": {"addressing": "p2p31"}}),
    ("PLAN005", RAIL, _index_handed_out_twice, NONE),
    ("PLAN005", CLOS3, _address_outside_the_ledger, NONE),
    ("PLAN006", RAIL, _same_leaf_asn, NONE),
    ("PLAN006", CLOS3, _superspine_asn_on_a_spine, NONE),
]
# fmt: on


def plan_findings(data: dict[str, Any], tmp_path: Path, damage: Damage | None = None) -> list[Finding]:
    source = load_intent_source([write_intent(data, tmp_path / "intent.yaml")])
    result = lint_source(source)
    assert result.intent is not None
    plan = design(result.intent)
    if damage is not None:
        damage(plan)
    rules = RuleRegistry(r for r in default_registry() if r.needs_plan)
    findings, skipped = run_rules(rules, LintContext.build(result.intent, source, plan))
    assert skipped == []
    return findings


def _case_id(case: tuple[str, dict[str, Any], Break, dict[str, Any]]) -> str:
    how = case[2].__name__.strip("_") if callable(case[2]) else "intent"
    return f"{case[0]}-{how}"


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_rule_fails_then_passes(case: tuple[str, dict[str, Any], Break, dict[str, Any]], tmp_path: Path) -> None:
    rule_id, base, bad, good = case
    if callable(bad):
        failing = plan_findings(merged(base, good), tmp_path, bad)
    else:
        failing = plan_findings(merged(base, bad), tmp_path)
    found = [f for f in failing if f.rule_id == rule_id]
    assert found, [f"{f.rule_id} {f.message}" for f in failing]
    assert all(f.location.file.endswith("intent.yaml") and f.location.line >= 1 for f in found)
    passing = plan_findings(merged(base, good), tmp_path)
    assert rule_id not in {f.rule_id for f in passing}, [f"{f.rule_id} {f.message}" for f in passing]


def test_every_plan_rule_has_a_case() -> None:
    plan_rules = {r.id for r in default_registry() if r.needs_plan}
    assert plan_rules and plan_rules - {c[0] for c in CASES} == set()


def test_messages_name_devices_and_numbers(tmp_path: Path) -> None:
    (finding,) = [f for f in plan_findings(RAIL, tmp_path, _port_past_faceplate) if f.rule_id == "PLAN001"]
    assert "su1-leaf1 uses 9 ports, up to port 99" in finding.message
    assert "topology.leaf.ports is 16" in finding.message and finding.path == "topology.leaf.ports"


def test_intent_findings_are_not_repeated(tmp_path: Path) -> None:
    """MTU001 and NIC002 report these from the intent; the plan rules stay quiet."""
    data = merged(RAIL, {"underlay": {"mtu": 4096}, "nic": {"pfc_priorities": [4]}})
    ids = {f.rule_id for f in plan_findings(data, tmp_path)}
    assert not ids & {"PLAN002", "PLAN003"}


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_plans_are_clean(example: Path) -> None:
    """Every example's expanded plan passes the plan rules (their speed is measured in bench/lint_bench.py)."""
    source = load_intent_source([example])
    result = lint_source(source)
    assert result.intent is not None
    plan = design(result.intent)
    ctx = LintContext.build(result.intent, source, plan)
    rules = RuleRegistry(r for r in default_registry() if r.needs_plan)
    findings, _ = run_rules(rules, ctx)
    assert findings == []
    # PLAN005 answers a designed plan from the pools' ledgers, not the 420,000 strings of the 100k example.
    assert ledgers_prove_unique(plan)


# --- `netfab lint` runs them ------------------------------------------------------------------------------

runner = CliRunner()


@pytest.fixture(scope="module", autouse=True)
def verbs() -> None:
    if not any(c.name == "lint" for c in app_module.app.registered_commands):
        app_module._register_verbs()


def _lint(*args: str) -> tuple[int, str]:
    result = runner.invoke(app_module.app, ["lint", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout


def test_cli_reports_a_design_failure_at_its_field(tmp_path: Path) -> None:
    """Two SUs with a leaf name template without {su}: the intent lints clean, the design cannot name leaves."""
    path = write_intent(merged(RAIL, {"naming": {"leaf": "leaf{rail}"}}), tmp_path / "names.yaml")
    lines = path.read_text(encoding="utf-8").splitlines()
    line = next(n for n, text in enumerate(lines, start=1) if "leaf{rail}" in text)
    code, out = _lint(str(path))
    assert code == 1 and "error[DESIGN001]" in out and f"names.yaml:{line}:" in out
    assert _lint("--no-plan", str(path))[0] == 0


def test_build_reports_a_design_failure_at_its_field(tmp_path: Path) -> None:
    """The verbs that design (build, deploy, lab) locate a design failure as lint does, not at line 0."""
    path = write_intent(merged(RAIL, {"naming": {"leaf": "leaf{rail}"}}), tmp_path / "names.yaml")
    lines = path.read_text(encoding="utf-8").splitlines()
    line = next(n for n, text in enumerate(lines, start=1) if "leaf{rail}" in text)
    result = runner.invoke(app_module.app, ["build", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1, result.output
    assert "error[DESIGN001]" in result.stderr and f"names.yaml:{line}:" in result.stderr
    assert not (tmp_path / "out").exists()


def test_cli_runs_plan_rules_only_after_a_clean_intent(tmp_path: Path) -> None:
    code, out = _lint("--format", "json", str(REPO / "intent" / "lab.yaml"))
    assert code == 0, out
    broken = write_intent(merged(RAIL, {"nic": {"trust": "pcp"}}), tmp_path / "b.yaml")
    code, out = _lint(str(broken))
    assert code == 1 and "NIC001" in out and "PLAN" not in out


def test_cli_reports_pool_exhaustion_from_the_design(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The design raises DESIGN002 for a pool it runs out of: lint shows it at the pool's line, exit 1."""
    import netfab.design
    from netfab.design import DesignError

    def exhausted(*_: object) -> FabricPlan:
        raise DesignError("DESIGN002", "pool 10.64.0.0/12 has room for ...", ("underlay", "hosts"),
                          hint="give underlay.hosts a larger prefix", source_file="x.yaml")  # fmt: skip

    monkeypatch.setattr(netfab.design, "design", exhausted)
    path = write_intent(merged(RAIL, {"underlay": {"hosts": "10.64.0.0/12"}}), tmp_path / "pool.yaml")
    line = next(n for n, text in enumerate(path.read_text().splitlines(), start=1) if "10.64.0.0/12" in text)
    code, out = _lint(str(path))
    assert code == 1 and f"pool.yaml:{line}:" in out and "error[DESIGN002]" in out
