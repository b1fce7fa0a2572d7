"""`netfab health --from-dir` end to end through the CLI, on saved samples of the lab fleet built from the recorded
lab outputs' shapes: every format (JSON against the report schema, SARIF against SARIF 2.1.0, JUnit, OpenMetrics
through prometheus_client's own parser), the picture, the exit codes, and bad options."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from netfab.health.fleet import fleet_of
from tests.analyze_lab.labcheck_helpers import lab_plan
from tests.health.conftest import LAB_INTENT, HealthLab

CLI = HealthLab("", "")


def _ip_link(ports: list[str], k: int, errors: dict[str, int]) -> str:
    links = [
        {"ifname": p, "operstate": "UP", "flags": ["UP", "LOWER_UP"],
         "stats64": {"rx": {"bytes": 10**9 * k, "packets": 10**5 * k, "errors": errors.get(p, 0) * k, "dropped": 0,
                            "crc_errors": 0},
                     "tx": {"bytes": 10**9 * k, "packets": 10**5 * k, "errors": 0, "dropped": 0, "carrier_changes": 2}}}
        for p in ports
    ]  # fmt: skip
    return json.dumps(links)


def _tc(ports: list[str], k: int, shaped: dict[str, int]) -> str:
    return json.dumps([
        {"kind": "tbf" if p in shaped else "noqueue", "dev": p, "root": True, "overlimits": shaped.get(p, 0) * k,
         "drops": 0, "backlog": 0}
        for p in ports
    ])  # fmt: skip


def save_samples(
    root: Path, shaped: dict[tuple[str, str], int], errors: dict[tuple[str, str], int] | None = None
) -> Path:
    fleet = fleet_of(lab_plan())
    errors = errors or {}
    for k in range(2):
        times = {}
        for t in fleet.targets:
            ports = sorted(p for d, p in fleet.ports if d == t.device)
            base = root / str(k) / t.device
            base.mkdir(parents=True, exist_ok=True)
            mine = {p: n for (d, p), n in shaped.items() if d == t.device}
            errs = {p: n for (d, p), n in errors.items() if d == t.device}
            for cmd in t.commands:
                text = {
                    "ip_link": _ip_link(ports, k, errs),
                    "tc_qdisc": _tc(ports, k, mine),
                    "nft_counters": json.dumps({"nftables": []}),
                }.get(cmd.source.id)
                if text is not None:
                    (base / f"{cmd.key}.txt").write_text(text)
            times[t.device] = 10.0 + k
        (root / str(k) / "at.json").write_text(json.dumps(times))
    return root


def _health(*args: str) -> Any:
    return CLI.netfab("health", str(LAB_INTENT), *args)


@pytest.fixture(scope="module")
def throttled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_samples(tmp_path_factory.mktemp("samples"), {("leaf3", "swp2"): 4000})


def test_json_names_the_shaped_link_and_matches_the_report_schema(
    throttled: Path, check_report_json: Callable[[str, str], dict[str, Any]]
) -> None:
    proc = _health("--from-dir", str(throttled), "--format", "json")
    assert proc.returncode == 1, proc.stderr
    doc = check_report_json(proc.stdout, "health")
    slow = doc["details"]["slow_links"]
    assert [(s["device"], s["port"], s["signal"]) for s in slow] == [("leaf3", "swp2", "overlimit_rate")]
    assert {f["rule_id"] for f in doc["findings"]} == {"HEALTH-SLOW-LINK"}
    assert doc["details"]["straggler"]["p_link"] == 0.125


def test_text_sarif_and_junit_carry_the_same_finding(throttled: Path, check_sarif: Callable[[str], Any]) -> None:
    text = _health("--from-dir", str(throttled))
    assert text.returncode == 1
    assert "leaf3: error[HEALTH-SLOW-LINK] swp2 -> host4 eth0: slow" in text.stdout
    assert "slow but up (shaper overlimits): 1 port on leaf3: leaf3 swp2" in text.stdout
    sarif = _health("--from-dir", str(throttled), "--format", "sarif")
    check_sarif(sarif.stdout)
    results = json.loads(sarif.stdout)["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["HEALTH-SLOW-LINK"]
    junit = ET.fromstring(_health("--from-dir", str(throttled), "--format", "junit").stdout)
    failures = [c.get("name") for c in junit.iter("testcase") if c.find("failure") is not None]
    assert failures == ["HEALTH-SLOW-LINK: leaf3"]


def test_openmetrics_parses_with_prometheus_client_and_has_fabric_labels(throttled: Path, tmp_path: Path) -> None:
    parser = pytest.importorskip("prometheus_client.openmetrics.parser")
    out = tmp_path / "health.om"
    proc = _health("--from-dir", str(throttled), "--format", "openmetrics", "--output", str(out))
    assert proc.returncode == 1, proc.stderr
    families = {f.name: f for f in parser.text_string_to_metric_families(out.read_text())}
    slow = [s for s in families["netfab_port_slow"].samples if s.value == 1]
    assert [(s.labels["device"], s.labels["port"], s.labels["tier"], s.labels["rail"]) for s in slow] == [
        ("leaf3", "swp2", "host", "1")
    ]
    assert {"device", "port", "peer", "tier", "role", "rail", "pod", "plane"} <= set(slow[0].labels)
    odds = {s.labels["gpus"]: s.value for s in families["netfab_straggler_slow_step_ratio"].samples}
    assert odds["8"] == pytest.approx(1 - (7 / 8) ** 8, abs=1e-6)


def test_svg_and_png_show_the_slow_link_in_red(throttled: Path, tmp_path: Path) -> None:
    svg, png = tmp_path / "h.svg", tmp_path / "h.png"
    proc = _health("--from-dir", str(throttled), "--svg", str(svg), "--png", str(png), "--format", "json")
    assert proc.returncode == 1, proc.stderr
    drawing = ET.fromstring(svg.read_text())
    titles = [t.text or "" for t in drawing.iter("{http://www.w3.org/2000/svg}title")]
    assert any(t.startswith("leaf3 swp2 -> host4 eth0") for t in titles)
    red = [r for r in drawing.iter("{http://www.w3.org/2000/svg}rect") if r.get("fill") == "#e15759"]
    assert len(red) == 2  # its strip cell and the legend
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_healthy_fabric_exits_0_and_errors_on_a_link_are_named(tmp_path: Path) -> None:
    healthy = _health("--from-dir", str(save_samples(tmp_path / "ok", {})))
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    assert "no problems found on 10 devices" in healthy.stdout
    bad = _health("--from-dir", str(save_samples(tmp_path / "err", {}, {("spine1", "swp2"): 7})), "--format", "json")
    assert bad.returncode == 1
    rules = {(f["rule_id"], f["path"]) for f in json.loads(bad.stdout)["findings"]}
    assert rules == {("HEALTH-ERRORS", "spine1:swp2")}


def test_a_device_missing_from_the_saved_samples_is_unreadable_exit_2(tmp_path: Path) -> None:
    root = save_samples(tmp_path / "s", {})
    for k in ("0", "1"):
        for f in (root / k / "spine2").iterdir():
            f.unlink()
    proc = _health("--from-dir", str(root), "--format", "json")
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert [(f["rule_id"], f["subject"], f["status"]) for f in doc["findings"]] == [
        ("HEALTH-UNREADABLE", "spine2", "error")
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give --lab PREFIX"),
        (["--from-dir", "/nonexistent-dir"], "not a directory"),
        (["--from-dir", ".", "--format", "xml"], "unknown format"),
        (["--from-dir", ".", "--network", "storage"], "describes one network"),
        (["--from-dir", ".", "--network", "../x"], "not a network name"),
        (["--lab", "zz8none"], "is up"),
        (["--from-dir", ".", "--watch"], "cannot be combined"),
    ],
)
def test_bad_options_exit_2_with_the_reason(args: list[str], message: str) -> None:
    proc = _health(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stdout + proc.stderr and "Traceback" not in proc.stderr


def test_a_saved_run_replays_with_the_read_times_the_live_analysis_used(throttled: Path, tmp_path: Path) -> None:
    """`--save` writes the read times collect() gave the analysis, not times of its own: a replay of the save
    analyses the same samples (a recorder timing its own calls once moved a lab score in its third decimal)."""
    from netfab.health.analysis import analyse
    from netfab.health.collect import FromDir, Recorder, collect, collect_saved, save_sample

    fleet = fleet_of(lab_plan())
    live_source = FromDir(throttled)  # stands in for the lab: a Driver answering the saved outputs
    recorder = Recorder(live_source)
    saved = tmp_path / "saved"
    live = []
    for k in live_source.samples():
        live_source.use(k)
        live.append(collect(fleet.targets, recorder, workers=8))
        save_sample(saved, k, {t.device: t for t in fleet.targets}, recorder, live[-1])
    replayed = collect_saved(fleet.targets, FromDir(saved))
    assert [{d: (s.at, s.at_error) for d, s in sample.items()} for sample in replayed] == [
        {d: (s.at, s.at_error) for d, s in sample.items()} for sample in live
    ]
    assert all(s.at_error > 0 for s in live[0].values())  # real round trips were timed, not zeros
    score = [(p.meta.name, p.score) for p in analyse(fleet, live).slow_links]
    assert score and score == [(p.meta.name, p.score) for p in analyse(fleet, replayed).slow_links]
