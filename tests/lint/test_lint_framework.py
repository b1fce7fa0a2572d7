"""The lint machinery: registry, crash isolation, plan-gated rules, locations, stages and exit codes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lint_helpers import EXAMPLES, RAIL, lint_data, merged, write_intent

from netfab.core.exitcodes import ExitCode
from netfab.core.findings import Finding, Severity
from netfab.lint import INTERNAL_RULE_ID, LintContext, Rule, RuleRegistry, default_registry, lint_paths, rule_infos
from netfab.lint.rules.qos import DscpInTwoClasses


class Crashes(Rule):
    """Always raises.

    ```yaml
    fabric: {name: x}
    ```
    """

    id = "TEST001"
    severity = Severity.ERROR
    title = "crashes"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        yield from ()
        raise KeyError("boom")


class NeedsPlan(Rule):
    """Reads the plan.

    ```yaml
    fabric: {name: x}
    ```
    """

    id = "TEST002"
    severity = Severity.WARNING
    title = "needs a plan"
    needs_plan = True

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        yield self.finding(ctx, ("fabric",), f"plan has {ctx.plan}")


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_intents_are_lint_clean(example: Path) -> None:
    result = lint_paths([example])
    assert result.exit_code is ExitCode.OK
    noisy = [f"{f.location} {f.rule_id} {f.message}" for f in result.findings if f.severity is not Severity.INFO]
    assert noisy == []


def test_registry_has_unique_documented_rules() -> None:
    registry = default_registry()
    assert len(registry) >= 40
    assert list(registry.ids) == sorted(registry.ids)
    for rule in registry:
        assert rule.hint, rule.id
        assert ("# bad" in rule.doc() and "# fixed" in rule.doc()) or "# noted" in rule.doc(), rule.id


def test_registry_rejects_malformed_and_duplicate_rules() -> None:
    class NoDoc(Rule):
        id = "bad id"
        severity = Severity.ERROR
        title = ""

    class Twin(DscpInTwoClasses):
        """Same id.

        ```yaml
        x: 1
        ```
        """

    with pytest.raises(ValueError, match="id must look like") as err:
        RuleRegistry([NoDoc])
    assert "```yaml" in str(err.value) and "check() is not implemented" in str(err.value)
    with pytest.raises(ValueError, match="already used"):
        RuleRegistry([DscpInTwoClasses, Twin])


def test_crashing_rule_becomes_internal_finding_and_others_still_run(tmp_path: Path) -> None:
    data = merged(RAIL, {"qos": {"classes": [*RAIL["qos"]["classes"], {"name": "x", "dscp": [26], "priority": 1,
                                                                         "weight": 0}]}})  # fmt: skip
    path = write_intent(data, tmp_path / "i.yaml")
    result = lint_paths([path], registry=RuleRegistry([Crashes, DscpInTwoClasses]))
    ids = [f.rule_id for f in result.findings]
    assert INTERNAL_RULE_ID in ids and "QOS001" in ids
    internal = next(f for f in result.findings if f.rule_id == INTERNAL_RULE_ID)
    assert "TEST001" in internal.message and "KeyError" in internal.message
    assert internal.location.file == str(path) and internal.location.line >= 1
    assert result.exit_code is ExitCode.INTERNAL


def test_plan_rules_are_skipped_without_a_plan(tmp_path: Path) -> None:
    path = write_intent(RAIL, tmp_path / "i.yaml")
    registry = RuleRegistry([NeedsPlan])
    without = lint_paths([path], registry=registry)
    assert without.findings == [] and without.skipped == ["TEST002"]
    with_plan = lint_paths([path], registry=registry, plan="a plan")
    assert [f.message for f in with_plan.findings] == ["plan has a plan"]


def test_unreadable_yaml_stops_before_schema(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("fabric: {name: x\n", encoding="utf-8")
    result = lint_paths([path])
    assert result.exit_code is ExitCode.USAGE and result.intent is None
    assert [f.rule_id for f in result.findings] == ["YAML000"]


def test_missing_file_is_usage_error(tmp_path: Path) -> None:
    assert lint_paths([tmp_path / "nope.yaml"]).exit_code is ExitCode.USAGE


def test_schema_errors_stop_before_rules(tmp_path: Path) -> None:
    data = merged(RAIL, {"qos": {"trust": "dscpp"}, "underlay": {"asn": {"leaf_base": 65000}}})
    result = lint_data(data, tmp_path)
    assert result.exit_code is ExitCode.FINDINGS and result.intent is None
    assert {f.rule_id for f in result.findings} == {"SCHEMA-value"}


def test_strict_fails_on_warnings(tmp_path: Path) -> None:
    path = write_intent(merged(RAIL, {"qos": {"pfc": {"watchdog": None}}}), tmp_path / "i.yaml")
    assert lint_paths([path]).exit_code is ExitCode.OK
    assert lint_paths([path], strict=True).exit_code is ExitCode.FINDINGS


def test_every_finding_is_collected_not_first_error_wins(tmp_path: Path) -> None:
    data = merged(RAIL, {"nic": {"trust": "pcp", "roce_dscp": 24}, "underlay": {"mtu": 4096, "max_paths": 2}})
    ids = {f.rule_id for f in lint_data(data, tmp_path).findings}
    assert {"NIC001", "NIC004", "MTU001", "LB002"} <= ids


def test_locations_point_at_values_keys_or_nearest_written_parent(tmp_path: Path) -> None:
    path = tmp_path / "i.yaml"
    path.write_text(
        "fabric:\n  name: t\nqos:\n  trust: dscp\n  classes:\n    - {name: a, dscp: [26, 27], priority: 3}\n",
        encoding="utf-8",
    )
    from netfab.lint.api import validate
    from netfab.load import load_intent_source

    source = load_intent_source([path])
    intent, _ = validate(source)
    assert intent is not None
    ctx = LintContext.build(intent, source)
    assert (ctx.at("qos", "trust").line, ctx.at("qos", "trust").column) == (4, 10)  # scalar: its value
    assert (ctx.at("qos", "classes").line, ctx.at("qos", "classes").column) == (5, 3)  # list: its key
    assert (ctx.at("qos", "classes", 0, "dscp", 1).line, ctx.at("qos", "classes", 0, "dscp", 1).column) == (6, 28)
    assert ctx.at("qos", "pfc", "watchdog").line == 3  # not written: the `qos:` key
    assert ctx.at("nic", "trust").line == 1  # nothing written above: the document
    assert ctx.first_written(("nic", "trust"), ("qos", "trust")) == ("qos", "trust")


def test_rule_infos_cover_load_schema_semantic_and_internal_ids() -> None:
    ids = {info.id for info in rule_infos()}
    assert {"YAML000", "SCHEMA-extra", "QOS001", "HDR001", INTERNAL_RULE_ID} <= ids
