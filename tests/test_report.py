"""Report renderers: text for people, JSON/JUnit/SARIF for machines, all from the same findings."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from netfab.core.findings import Finding, Location, RuleInfo, Severity, Status
from netfab.load import RULES as LOAD_RULES
from netfab.report import FORMATS, ReportContext, Summary, render
from netfab.report.sarif import camel_case
from netfab.report.text import render_rich, render_text

E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO  # noqa: E741

RULES = [
    RuleInfo("QOS001", "RoCE class must be lossless", E, "The RoCE class needs PFC.\n\nSee `qos.pfc`."),
    RuleInfo("QOS002", "ECN thresholds ordered", W, "Kmin must be below Kmax.", "https://example.org/QOS002"),
]


@pytest.fixture
def context(tmp_path: Path) -> ReportContext:
    intent = tmp_path / "intent"
    return ReportContext(
        tool_version="1.2.3",
        root=tmp_path,
        rules=RULES,
        files=[intent / "qos.yaml", intent / "topo.yaml"],
        information_uri="https://example.org/netfab",
    )


@pytest.fixture
def findings(tmp_path: Path) -> list[Finding]:
    qos = str(tmp_path / "intent" / "qos.yaml")
    return [
        Finding("QOS002", W, "kmin 800 > kmax 400", Location(qos, 12, 7), "swap them", "qos.ecn.kmin"),
        Finding("QOS001", E, "class roce is lossy", Location(qos, 3, 5), "set mode: lossless", "qos.classes[0]"),
        Finding("YAML001", E, "duplicate key 'mtu'", Location(qos, 9, 3), "remove one", "mtu", (Location(qos, 8, 3),)),
        Finding("LOAD004", I, "file is empty", Location(str(tmp_path / "intent" / "empty.yaml")), "nothing"),
    ]


def test_text_report_lines_hints_and_summary(findings: list[Finding], context: ReportContext) -> None:
    assert render_text(findings, context).splitlines() == [
        "intent/empty.yaml: info[LOAD004] file is empty",
        "    hint: nothing",
        "intent/qos.yaml:3:5: error[QOS001] class roce is lossy",
        "    hint: set mode: lossless",
        "intent/qos.yaml:9:3: error[YAML001] duplicate key 'mtu'",
        "    hint: remove one",
        "    see also: intent/qos.yaml:8:3",
        "intent/qos.yaml:12:7: warning[QOS002] kmin 800 > kmax 400",
        "    hint: swap them",
        "2 errors, 1 warning, 1 note in 2 files",
    ]


def test_summary_sentences() -> None:
    assert Summary.of([]).sentence() == "no problems found"
    assert Summary.of([]).sentence(3) == "no problems found in 3 files"
    one = Finding("X", E, "m", Location("a.yaml", 1, 1))
    assert Summary.of([one]).sentence() == "1 error, 0 warnings in 1 file"


def test_rich_report_has_the_same_text(findings: list[Finding], context: ReportContext) -> None:
    console = Console(record=True, width=300, color_system="truecolor")
    render_rich(findings, console, context)
    assert console.export_text(clear=False) == render_text(findings, context)
    assert "\x1b[1;31m error" in console.export_text(styles=True)


def test_rich_report_does_not_interpret_markup_in_messages(context: ReportContext) -> None:
    console = Console(record=True, width=300)
    render_rich([Finding("X", E, "value [bold]x[/bold]", Location("a.yaml", 1, 1))], console, context)
    assert "value [bold]x[/bold]" in console.export_text()


def test_json_report_is_sorted_relative_and_deterministic(
    findings: list[Finding], context: ReportContext, check_report_json
) -> None:
    text = render("json", findings, context)
    assert render("json", list(reversed(findings)), context) == text
    document = check_report_json(text, "lint")
    assert list(document) == sorted(document)
    assert document["schema_version"] == 2 and document["tool"] == {"name": "netfab", "version": "1.2.3"}
    assert document["details"] is None
    assert document["summary"] == {
        "errors": 2,
        "warnings": 1,
        "infos": 1,
        "files": 2,
        "subjects": 0,
        "pass": 0,
        "fail": 4,
        "skip": 0,
        "error": 0,
        "total": 4,
    }
    first = document["findings"][1]
    sarif_ids = [
        r["partialFingerprints"]["netfabFindingHash/v1"] for r in sarif(findings, context)["runs"][0]["results"]
    ]
    assert first.pop("id") == sarif_ids[1]  # one stable id per finding, in JSON and SARIF alike
    assert first == {
        "rule_id": "QOS001",
        "status": "fail",
        "severity": "error",
        "message": "class roce is lossy",
        "hint": "set mode: lossless",
        "path": "qos.classes[0]",
        "subject": "",
        "location": {"file": "intent/qos.yaml", "line": 3, "column": 5},
        "related": [],
        "expected": None,
        "actual": None,
    }


def test_junit_one_case_per_rule_and_file(findings: list[Finding], context: ReportContext) -> None:
    root = ET.fromstring(render("junit", findings, context))
    cases = {case.get("name"): case for case in root.iter("testcase")}
    # 2 rules x 2 checked files, plus the pairs that only exist through findings (YAML001, LOAD004).
    assert sorted(cases) == [
        "LOAD004: intent/empty.yaml",
        "QOS001: intent/qos.yaml",
        "QOS001: intent/topo.yaml",
        "QOS002: intent/qos.yaml",
        "QOS002: intent/topo.yaml",
        "YAML001: intent/qos.yaml",
    ]
    assert cases["QOS001: intent/qos.yaml"].get("classname") == "netfab.lint.QOS001"
    failure = cases["QOS001: intent/qos.yaml"].find("failure")
    assert failure is not None and "intent/qos.yaml:3:5" in (failure.text or "")
    warned = cases["QOS002: intent/qos.yaml"]
    assert warned.find("failure") is None and "kmin 800" in (warned.findtext("system-out") or "")
    assert list(cases["QOS001: intent/topo.yaml"]) == []
    assert root.get("tests") == "6" and root.get("failures") == "2"


def test_junit_survives_control_characters(context: ReportContext) -> None:
    # The review's repro: an ANSI colour (\x1b) in a device's message made verify's JUnit unparseable.
    bad = Finding("YAML000", E, "found \x00 and \x1b[31m in input", Location("bin.yaml", 1, 1), "binary?")
    device = Finding("BGP-SESSIONS", E, "peer says \x1b[1mhi", status=Status.ERROR, subject="leaf1")
    root = ET.fromstring(render("junit", [bad, device], context))
    failure = root.find(".//failure")
    assert failure is not None and failure.get("message") == "found \ufffd and \ufffd[31m in input"
    error = root.find(".//testcase[@name='BGP-SESSIONS: leaf1']/error")
    assert error is not None and "\ufffd[1mhi" in (error.get("message") or "")


def test_junit_statuses(context: ReportContext) -> None:
    """One writer for every verb: fail -> <failure>, error -> <error>, all skipped -> <skipped>, passes pass."""
    device = ReportContext(verb="verify", subjects=())
    results = [
        Finding("BGP", E, "no session to spine1", status=Status.FAIL, subject="leaf1", expected="up", actual="down"),
        Finding("BGP", I, "BGP to spine2 Established", status=Status.PASS, subject="leaf1"),
        Finding("BGP", I, "BGP to spine1 Established", status=Status.PASS, subject="leaf2"),
        Finding("QOS", I, "driver exposes no QoS state", status=Status.SKIP, subject="leaf1"),
        Finding("ECMP", E, "TimeoutError: x", status=Status.ERROR, subject="leaf2"),
    ]
    root = ET.fromstring(render("junit", results, device))
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert sorted(cases) == ["BGP: leaf1", "BGP: leaf2", "ECMP: leaf2", "QOS: leaf1"]
    assert (
        cases["BGP: leaf1"].find("failure") is not None and cases["BGP: leaf1"].get("classname") == "netfab.verify.BGP"
    )
    assert list(cases["BGP: leaf2"]) and cases["BGP: leaf2"].find("failure") is None  # system-out only
    assert cases["QOS: leaf1"].find("skipped") is not None
    assert cases["ECMP: leaf2"].find("error") is not None
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("4", "1", "1", "1")


def test_device_subjects_get_passing_cases_and_counts(check_report_json) -> None:
    audit = ReportContext(verb="audit", rules=[RuleInfo("AUDIT-BGP", "BGP drift", E, "d")], subjects=["a", "b"])
    drift = Finding("AUDIT-BGP", E, "a: max-paths is 8", Location("build/a.conf"), subject="a", path="a:bgp")
    root = ET.fromstring(render("junit", [drift], audit))
    assert sorted(c.get("name") for c in root.iter("testcase")) == ["AUDIT-BGP: a", "AUDIT-BGP: b"]
    assert render("text", [drift], audit).splitlines() == [
        "a: error[AUDIT-BGP] a: max-paths is 8",
        "1 error, 0 warnings on 1 device",
    ]
    assert render("text", [], audit) == "no problems found on 2 devices\n"
    document = check_report_json(render("json", [drift], audit), "audit")
    assert document["findings"][0]["location"] == {"file": "build/a.conf", "line": 0, "column": 0}


def test_text_lists_skips_counts_passes() -> None:
    verify = ReportContext(verb="verify")
    results = [
        Finding("BGP", I, "ok", status=Status.PASS, subject="leaf1"),
        Finding("QOS", I, "no QoS getter", status=Status.SKIP, subject="leaf1"),
    ]
    assert render("text", results, verify).splitlines() == [
        "leaf1: skip[QOS] no QoS getter",
        "no problems found on 1 device; 2 checks: 1 passed, 0 failed, 1 skipped, 0 could not run",
    ]


def test_markdown_report(findings: list[Finding], context: ReportContext) -> None:
    md = render("markdown", findings, context)
    assert md.startswith("# netfab lint\n\n**2 errors, 1 warning, 1 note in 2 files**\n")
    assert "| intent/qos.yaml:3:5 | error | `QOS001` | class roce is lossy | set mode: lossless |" in md
    preface = ReportContext(verb="audit", markdown="# Drift audit: lab\n\nin sync")
    assert render("markdown", [], preface).startswith("# Drift audit: lab\n\nin sync\n\n**no problems found**")


def test_every_format_of_the_same_findings_validates(
    findings: list[Finding], context: ReportContext, check_report_json, check_sarif
) -> None:
    assert FORMATS == ("text", "json", "junit", "sarif", "markdown")
    check_report_json(render("json", findings, context), "lint")
    check_sarif(render("sarif", findings, context))
    with pytest.raises(ValueError, match="unknown report format"):
        render("yaml", findings, context)


def test_schema_rejects_what_the_writer_must_not_write(
    findings: list[Finding], context: ReportContext, check_report_json
) -> None:
    import jsonschema

    document = json.loads(render("json", findings, context))
    document["findings"][0]["status"] = "passed"
    with pytest.raises(jsonschema.ValidationError):
        check_report_json(json.dumps(document), "lint")


def sarif(findings: list[Finding], context: ReportContext) -> dict:
    return json.loads(render("sarif", findings, context))


def test_sarif_structure_github_accepts(findings: list[Finding], context: ReportContext, check_sarif) -> None:
    document = check_sarif(render("sarif", findings, context))
    assert document["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert document["version"] == "2.1.0"
    [run] = document["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"], driver["informationUri"]) == (
        "netfab",
        "1.2.3",
        "https://example.org/netfab",
    )
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == context.root.absolute().as_uri() + "/"
    rule_ids = [rule["id"] for rule in driver["rules"]]
    assert rule_ids == ["QOS001", "QOS002", "LOAD004", "YAML001"]  # described rules first, then the others
    for rule in driver["rules"]:
        assert {"id", "name", "shortDescription", "fullDescription", "help", "defaultConfiguration"} <= set(rule)
        assert rule["help"]["text"] and rule["help"]["markdown"] and rule["shortDescription"]["text"]
        assert rule["defaultConfiguration"]["level"] in {"error", "warning", "note"}
    assert driver["rules"][0]["name"] == "RoCEClassMustBeLossless"
    assert driver["rules"][0]["fullDescription"]["text"] == "The RoCE class needs PFC."
    assert driver["rules"][1]["helpUri"] == "https://example.org/QOS002"
    fingerprints = set()
    for result in run["results"]:
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]
        assert result["level"] in {"error", "warning", "note"}
        assert result["message"]["text"]
        [location] = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        assert not artifact["uri"].startswith("/") and "\\" not in artifact["uri"]
        region = location["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        fingerprints.add(json.dumps(result["partialFingerprints"], sort_keys=True))
    assert len(fingerprints) == len(run["results"])
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert by_rule["QOS001"]["message"]["text"] == "class roce is lossy\nhint: set mode: lossless"
    assert by_rule["LOAD004"]["locations"][0]["physicalLocation"]["region"]["startLine"] == 1
    assert by_rule["LOAD004"]["level"] == "note"
    assert by_rule["YAML001"]["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 8


def test_sarif_fingerprints_ignore_line_shifts_but_keep_duplicates_apart(context: ReportContext) -> None:
    def prints(*lines: int) -> list[str]:
        results = sarif([Finding("YAML004", E, "tab", Location("a.yaml", n, 1)) for n in lines], context)
        return [r["partialFingerprints"]["netfabFindingHash/v1"] for r in results["runs"][0]["results"]]

    assert prints(3, 7) == prints(10, 20)
    assert len(set(prints(3, 7))) == 2


def test_sarif_file_outside_root_gets_absolute_uri(tmp_path: Path) -> None:
    context = ReportContext(root=tmp_path / "repo")
    outside = tmp_path / "other dir" / "x.yaml"
    document = sarif([Finding("X", E, "m", Location(str(outside), 2, 3))], context)
    artifact = document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": outside.as_uri()}


def test_relative_paths_in_reports(tmp_path: Path) -> None:
    context = ReportContext(root=tmp_path)
    assert context.relpath(tmp_path / "a" / "b.yaml") == "a/b.yaml"
    assert context.relpath("/elsewhere/x.yaml") == "/elsewhere/x.yaml"


def test_camel_case_names() -> None:
    assert camel_case("duplicate YAML key") == "DuplicateYAMLKey"
    assert camel_case("ECN thresholds: ordered!") == "ECNThresholdsOrdered"
    assert camel_case("") == "Rule"


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders_no_findings_and_load_rules(fmt: str, context: ReportContext) -> None:
    empty = ReportContext(root=context.root, rules=LOAD_RULES, files=context.files)
    assert render(fmt, [], empty)


def test_unknown_format_is_a_value_error(context: ReportContext) -> None:
    with pytest.raises(ValueError, match="unknown report format"):
        render("yaml", [], context)
