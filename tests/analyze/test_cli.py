"""`netfab analyze` end to end: files, formats, reproducibility, exit codes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from analyze_helpers import INTENTS
from typer.testing import CliRunner

from netfab.analyze.output import UnsafeOutput, default_out_dir
from netfab.cli.app import _register_verbs, app
from netfab.core.fs import OutputError, write_files

runner = CliRunner()
_register_verbs()


def _run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["analyze", *args], catch_exceptions=False)
    return result.exit_code, result.stdout


def test_text_report_and_files(tmp_path: Path) -> None:
    code, out = _run(str(INTENTS / "lab.yaml"), "--out", str(tmp_path), "--trials", "200")
    assert code == 0, out
    assert "CAPACITY" in out and "LOSSLESS" in out and "ECMP" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["analysis.json", "link-load.svg", "topology.svg"]
    doc = json.loads((tmp_path / "analysis.json").read_text())
    assert doc["fabric"] == "lab" and doc["parameters"]["trials"] == 200
    for svg in ("topology.svg", "link-load.svg"):
        ET.fromstring((tmp_path / svg).read_text())


def test_json_on_stdout_holds_the_file_and_seeded_runs_are_identical(tmp_path: Path, check_report_json) -> None:
    args = [str(INTENTS / "lab.yaml"), "--format", "json", "--trials", "300", "--pattern", "tree"]
    code, first = _run(*args, "--seed", "7", "--out", str(tmp_path / "a"))
    assert code == 0
    _, second = _run(*args, "--seed", "7", "--out", str(tmp_path / "b"))
    assert first == second
    envelope = check_report_json(first, "analyze")
    assert envelope["details"]["lab_check"] is None
    doc = envelope["details"]["analysis"]
    assert doc == json.loads((tmp_path / "a" / "analysis.json").read_text())
    _, other = _run(*args, "--seed", "8", "--out", str(tmp_path / "c"))
    assert json.loads(other)["details"]["analysis"]["parameters"]["seed"] == 8
    assert doc["parameters"]["pattern"] == "tree"
    assert {s["key"] for s in doc["ecmp"]["scenarios"]} >= {"intent", "qp1_5tuple", "qp16_spraying"}


def test_default_out_dir_is_under_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _ = _run(str(INTENTS / "lab.yaml"), "--trials", "50")
    assert code == 0
    assert (tmp_path / "build" / "lab.analysis" / "analysis.json").is_file()


def test_job_bigger_than_the_fabric_is_a_usage_error(tmp_path: Path) -> None:
    code, _ = _run(str(INTENTS / "lab.yaml"), "--job-gpus", "9", "--out", str(tmp_path))
    assert code == 2
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_missing_intent_is_a_usage_error(tmp_path: Path) -> None:
    code, _ = _run(str(tmp_path / "nope.yaml"), "--out", str(tmp_path / "out"))
    assert code == 2


def test_intent_that_does_not_lint_is_refused(tmp_path: Path) -> None:
    bad = (INTENTS / "lab.yaml").read_text().replace("rails: 2", "rails: 2\n  bogus_field: 1")
    (tmp_path / "bad.yaml").write_text(bad)
    code, _ = _run(str(tmp_path / "bad.yaml"), "--out", str(tmp_path / "out"))
    assert code == 1
    assert not (tmp_path / "out").exists()


def test_output_names_cannot_escape(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="not a plain file name"):
        write_files(tmp_path, {"../escape.json": "{}"})
    with pytest.raises(UnsafeOutput):
        default_out_dir("..", tmp_path)
    assert default_out_dir("clos3-24k", tmp_path) == tmp_path / "build" / "clos3-24k.analysis"
    assert not (tmp_path.parent / "escape.json").exists()


def test_strict_turns_an_analysis_warning_into_exit_1(tmp_path: Path) -> None:
    # The lab with 1 QP per pair and an all-to-all: collisions on 2-uplink leaves cost > 25 % at p99.
    intent = (INTENTS / "lab.yaml").read_text().replace("qps_per_gpu_pair: 4", "qps_per_gpu_pair: 1")
    (tmp_path / "lab1.yaml").write_text(intent)
    args = [str(tmp_path / "lab1.yaml"), "--pattern", "alltoall", "--trials", "500", "--format", "json"]
    code, out = _run(*args, "--out", str(tmp_path / "a"))
    assert code == 0
    # Passing checks (the PFC deadlock check, ANALYZE006) are reported too; the one problem is the warning.
    assert [f["rule_id"] for f in json.loads(out)["findings"] if f["status"] != "pass"] == ["ANALYZE001"]
    code, _ = _run(*args, "--strict", "--out", str(tmp_path / "b"))
    assert code == 1


def test_every_format_reports_the_findings(tmp_path: Path, check_report_json, check_sarif) -> None:
    intent = (INTENTS / "lab.yaml").read_text().replace("qps_per_gpu_pair: 4", "qps_per_gpu_pair: 1")
    (tmp_path / "lab1.yaml").write_text(intent)
    args = [str(tmp_path / "lab1.yaml"), "--pattern", "alltoall", "--trials", "200", "--out", str(tmp_path / "a")]
    code, text = _run(*args)
    assert code == 0 and "CAPACITY" in text
    # The summary line every verb ends with; the passing check is the PFC deadlock check (ANALYZE006).
    assert (
        text.splitlines()[-1]
        == "0 errors, 1 warning in 1 file; 2 checks: 1 passed, 1 failed, 0 skipped, 0 could not run"
    )
    assert any(line.startswith(f"{tmp_path / 'lab1.yaml'}: warning[ANALYZE001] ") for line in text.splitlines())
    code, out = _run(*args, "-f", "sarif", "-o", str(tmp_path / "r.sarif"))
    assert code == 0 and out == ""
    [result] = check_sarif((tmp_path / "r.sarif").read_text())["runs"][0]["results"]
    assert result["ruleId"] == "ANALYZE001" and result["level"] == "warning"
    code, junit = _run(*args, "-f", "junit")
    assert ET.fromstring(junit).find(".//testcase[@classname='netfab.analyze.ANALYZE001']") is not None
    code, md = _run(*args, "-f", "markdown")
    assert md.startswith("# netfab analyze\n") and "`ANALYZE001`" in md
