"""intent/clos3-100k.yaml: the 100k-GPU example lints clean and has the size docs/scale.md measures (not timed:
its speed is bench/scale_bench.py's business)."""

from __future__ import annotations

from pathlib import Path

from netfab.cli.plan_lint import with_plan
from netfab.core.exitcodes import ExitCode
from netfab.design import design
from netfab.lint import lint_source
from netfab.load import load_intent_source

EXAMPLE = Path(__file__).resolve().parents[2] / "intent" / "clos3-100k.yaml"


def test_the_100k_example_is_lint_clean_with_its_plan_and_has_its_size() -> None:
    source = load_intent_source([EXAMPLE])
    result = with_plan(lint_source(source), source, strict=True)
    assert result.exit_code is ExitCode.OK, [f"{f.rule_id} {f.message}" for f in result.findings]
    assert result.intent is not None
    plan = design(result.intent)
    roles = [d.role for d in plan.devices.values()]
    assert (roles.count("leaf"), roles.count("spine"), roles.count("superspine")) == (6144, 512, 28)
    assert len(plan.servers) == 12288
    assert sum(len(s.nics) for s in plan.servers) == 98304
    # Every superspine terminates 32 pods x 4 spines x 4 cables and stays inside its chassis' 576 ports.
    supers = [d for d in plan.devices.values() if d.role == "superspine"]
    assert {len(d.interfaces) for d in supers} == {512}
