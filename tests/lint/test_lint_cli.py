"""`netfab lint`, `netfab rules` and `netfab schema` through the CLI: exit codes, formats, atomic output, docs."""

from __future__ import annotations

import json
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from lint_helpers import RAIL, REPO, merged, write_intent
from typer.testing import CliRunner

from netfab.cli import app as app_module
from netfab.cli.rules_cmd import render_markdown, rule_docs
from netfab.cli.schema_cmd import schema_text
from netfab.lint import default_registry
from netfab.report.schema import report_schema_text

UPDATE = os.environ.get("NETFAB_UPDATE_GOLDEN") == "1"
runner = CliRunner()


@pytest.fixture(scope="module", autouse=True)
def verbs() -> None:
    if not any(c.name == "lint" for c in app_module.app.registered_commands):
        app_module._register_verbs()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app_module.app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    data = merged(RAIL, {"nic": {"trust": "pcp"}, "qos": {"pfc": {"watchdog": None}}})
    return write_intent(data, tmp_path / "b.yaml")


@pytest.fixture
def warns(tmp_path: Path) -> Path:
    return write_intent(merged(RAIL, {"qos": {"pfc": {"watchdog": None}}}), tmp_path / "w.yaml")


def test_clean_intent_exits_0() -> None:
    code, out = invoke("lint", str(REPO / "intent" / "rail-4su.yaml"))
    # Its Cumulus tiers carry one info note (CAP024: NVUE has no restore timer), which is not a problem.
    assert code == 0 and "0 errors, 0 warnings, 1 note in 1 file" in out


def test_errors_exit_1_and_warnings_only_with_strict(broken: Path, warns: Path) -> None:
    code, out = invoke("lint", str(broken))
    assert code == 1 and "error[NIC001]" in out and "warning[PFC001]" in out
    assert invoke("lint", str(warns))[0] == 0
    assert invoke("lint", "--strict", str(warns))[0] == 1


def test_retired_nic_model_is_refused_at_its_key_with_a_migration_hint(tmp_path: Path) -> None:
    # It used to be accepted and ignored: a user who set it believed it changed the NIC scripts.
    path = write_intent(merged(RAIL, {"topology": {"servers": {"nic_model": "connectx7"}}}), tmp_path / "n.yaml")
    line = next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if "nic_model:" in ln)
    col = path.read_text().splitlines()[line - 1].index("nic_model") + 1
    code, out = invoke("lint", str(path))
    assert code == 1
    assert f"{path}:{line}:{col}: error[SCHEMA-removed] topology.servers.nic_model: no longer part of the intent" in out
    assert "Delete the line" in out
    assert "SCHEMA-extra" not in out
    assert invoke("lint", "--format", "json", str(tmp_path / "n.yaml"))[0] == 1


def test_a_directory_of_separate_fabrics_is_said_and_each_lints_them_apart(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    write_intent(merged(RAIL, {"fabric": {"name": "alpha"}}), mine / "a.yaml")
    broken = write_intent(merged(RAIL, {"fabric": {"name": "beta"}, "nic": {"trust": "pcp"}}), mine / "b.yaml")
    code, out = invoke("lint", "--no-plan", str(mine))
    line = next(i for i, ln in enumerate(broken.read_text().splitlines(), 1) if "name: beta" in ln)
    assert f"{broken}:{line}:" in out and "warning[LOAD005]" in out
    assert "(a.yaml: alpha; b.yaml: beta)" in out and "netfab lint --each" in out
    assert code == 1  # b.yaml's NIC001 won the merge; the merge itself is only a warning
    code, out = invoke("lint", "--no-plan", "--each", str(mine))
    assert code == 1 and "LOAD005" not in out
    assert out.count("error[NIC001]") == 1 and str(broken) in out
    code, out = invoke("lint", "--no-plan", "--each", str(mine / "a.yaml"))
    assert code == 0


def test_files_that_agree_on_the_fabric_merge_without_a_warning(tmp_path: Path) -> None:
    write_intent(RAIL, tmp_path / "00-base.yaml")
    write_intent({"fabric": {"name": RAIL["fabric"]["name"]}, "underlay": {"mtu": 9216}}, tmp_path / "10-site.yaml")
    code, out = invoke("lint", "--no-plan", "--strict", str(tmp_path))
    assert "LOAD005" not in out
    assert code == invoke("lint", "--no-plan", "--strict", str(tmp_path / "00-base.yaml"))[0] == 0


def test_unreadable_input_and_bad_usage_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "x.yaml"
    bad.write_text("a: [\n", encoding="utf-8")
    assert invoke("lint", str(bad))[0] == 2
    assert invoke("lint", str(tmp_path / "missing.yaml"))[0] == 2
    assert invoke("lint", "--format", "xml", str(bad))[0] == 2
    assert invoke("lint")[0] == 2


def test_json_report(broken: Path, check_report_json) -> None:
    code, out = invoke("lint", "--format", "json", str(broken))
    doc = check_report_json(out, "lint")
    assert code == 1 and doc["summary"]["errors"] >= 1
    assert all(f["location"]["line"] >= 1 for f in doc["findings"])


def test_sarif_report(broken: Path, check_sarif) -> None:
    code, out = invoke("lint", "--format", "sarif", str(broken))
    run = check_sarif(out)["runs"][0]
    rule_ids = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert code == 1 and {"NIC001", "PFC001", "YAML000"} <= rule_ids
    levels = {r["ruleId"]: r["level"] for r in run["results"]}
    assert levels["NIC001"] == "error" and levels["PFC001"] == "warning"
    assert all(r["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1 for r in run["results"])


def test_junit_report(broken: Path) -> None:
    code, out = invoke("lint", "--format", "junit", str(broken))
    root = ET.fromstring(out.encode())
    failed = {case.get("classname") for case in root.iter("testcase") if case.find("failure") is not None}
    assert code == 1 and "netfab.lint.NIC001" in failed and "netfab.lint.PFC001" not in failed
    assert int(root.get("tests", "0")) >= len(default_registry())


def test_output_file_is_written_atomically(broken: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "report.sarif"
    target.write_text("old", encoding="utf-8")
    code, out = invoke("lint", "--format", "sarif", "--output", str(target), str(broken))
    assert code == 1 and out == ""
    assert json.loads(target.read_text(encoding="utf-8"))["version"] == "2.1.0"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report")] == []  # no temp left behind
    # An unwritable report path is exit 2 (core.fs.OutputError, mapped once in main() for every verb).
    (tmp_path / "afile").write_text("")
    monkeypatch.setattr(sys, "argv", ["netfab", "lint", "--output", str(tmp_path / "afile" / "r.txt"), str(broken)])
    with pytest.raises(SystemExit) as exc:
        app_module.main()
    assert exc.value.code == 2


def test_main_entry_point_in_process(broken: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.setattr(sys, "argv", ["netfab", "lint", str(broken)])
    with pytest.raises(SystemExit) as exc:
        app_module.main()
    assert exc.value.code == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "NIC001" in captured.out


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_rules_lists_every_rule(fmt: str) -> None:
    code, out = invoke("rules", "--format", fmt)
    assert code == 0
    for rule_id in default_registry().ids:
        assert rule_id in out
    if fmt == "json":
        entry = next(e for e in json.loads(out) if e["id"] == "HDR001")
        assert entry["severity"] == "error" and "```yaml" in entry["doc"] and entry["hint"]


def test_schema_command(tmp_path: Path) -> None:
    code, out = invoke("schema")
    schema = json.loads(out)
    assert code == 0 and schema["$schema"].startswith("https://json-schema.org/")
    assert schema["title"] == "netfab intent" and "version" in schema["properties"]
    target = tmp_path / "s.json"
    assert invoke("schema", "--output", str(target))[0] == 0
    assert target.read_text(encoding="utf-8") == out


@pytest.mark.parametrize(
    ("relpath", "generate"),
    [
        ("docs/rules.md", lambda: render_markdown(rule_docs())),
        ("docs/intent.schema.json", schema_text),
        ("docs/report.schema.json", report_schema_text),
    ],
)
def test_generated_docs_are_current(relpath: str, generate: object) -> None:
    """Regenerate with NETFAB_UPDATE_GOLDEN=1 (or `netfab rules --format markdown`, `netfab schema -o`)."""
    assert callable(generate)
    path = REPO / relpath
    text = generate()
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == text, f"{relpath} is stale: run with NETFAB_UPDATE_GOLDEN=1"
