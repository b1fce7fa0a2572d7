"""Analyze gives advice only on differences outside the noise (issue 15: honest analysis).

meta-zones.yaml is fabric 2 of the newcomer trial (reference/NEWCOMER_TRIAL.md, appendix), copied unchanged:
its ANALYZE001 hint used to advise dropping destination-QP hashing on a 31 % vs 38 % difference, which is
sampling noise (a subset of the hash fields cannot have more entropy).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from netfab.analyze.report import render_text
from netfab.analyze.run import AnalyzeOptions, analyze
from netfab.analyze.stats import paired_quantile_gain
from netfab.cli.pipeline import load_plan

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"


def _analysis(path: Path, **options: Any) -> list[str]:
    loaded = load_plan([path], strict=False)
    result = analyze(loaded.intent, loaded.plan, AnalyzeOptions(**options), str(path))
    return [f.hint for f in result.findings if f.rule_id == "ANALYZE001"]


def test_no_advice_to_drop_a_hash_field() -> None:
    [hint] = _analysis(FIXTURES / "meta-zones.yaml")
    assert "5-tuple hash brings" not in hint  # the noise the newcomer was told to act on
    assert "adaptive routing" in hint


def test_a_real_gain_is_still_advised_with_its_interval(tmp_path: Path) -> None:
    # One QP per GPU pair on the lab's 2-uplink leaves: 16 QPs is a real, large gain.
    intent = (ROOT / "intent" / "lab.yaml").read_text().replace("qps_per_gpu_pair: 4", "qps_per_gpu_pair: 1")
    (tmp_path / "lab1.yaml").write_text(intent)
    [hint] = _analysis(tmp_path / "lab1.yaml", pattern="alltoall", trials=300)
    assert "16 QPs" in hint and "95 % interval" in hint


def test_paired_interval_covers_zero_for_noise_and_excludes_it_for_a_gain() -> None:
    rng = np.random.default_rng(7)
    own = rng.gamma(2.0, 0.1, 1000)
    noise = own + rng.normal(0, 0.05, 1000)
    point, lo, hi = paired_quantile_gain(own, noise, 99, seed=1)
    assert lo <= 0 <= hi
    point, lo, hi = paired_quantile_gain(own, own * 0.5, 99, seed=1)
    assert 0 < lo <= point <= hi
    # A deterministic scenario (one value for every trial) is compared as a constant.
    point, lo, hi = paired_quantile_gain(own, np.array([0.0]), 99, seed=1)
    assert lo > 0 and point == np.percentile(own, 99, method="inverted_cdf")


def _overview(path: Path, **options: Any) -> str:
    loaded = load_plan([path], strict=False)
    return render_text(analyze(loaded.intent, loaded.plan, AnalyzeOptions(**options), str(path)).as_dict())


def test_only_lines_that_apply_to_the_fabric_and_pattern() -> None:
    ring = _overview(ROOT / "intent" / "lab.yaml", trials=50)
    assert "all-reduce lower bound" in ring and "lab (Linux kernel)" in ring  # the lab's switches are Linux
    alltoall = _overview(ROOT / "intent" / "lab.yaml", trials=50, pattern="alltoall")
    assert "all-reduce lower bound" not in alltoall
    eos = _overview(ROOT / "intent" / "rail-4su.yaml", trials=50)
    assert "lab (Linux kernel)" not in eos  # no switch of this fabric forwards in the Linux kernel


def test_an_imbalance_that_costs_nothing_says_why() -> None:
    loaded = load_plan([ROOT / "intent" / "lab.yaml"], strict=False)
    doc = analyze(loaded.intent, loaded.plan, AnalyzeOptions(trials=50), "lab.yaml").as_dict()
    intent = next(s for s in doc["ecmp"]["scenarios"] if s["key"] == "intent")
    tier = intent["tiers"][doc["ecmp"]["headline_tier"]]
    tier["fair_share_max_flows"] = 2.0
    tier["busiest_link_vs_fair_share"]["p99"] = 1.36
    intent["step_time_tax"]["p99"] = 0.0
    assert "1.36x its fair share at p99 and the step still pays 0 %" in render_text(doc)
    intent["step_time_tax"]["p99"] = 0.2  # a real cost: no excuse printed
    assert "still pays 0 %" not in render_text(doc)


def test_straggler_odds_follow_the_cables_the_job_touches() -> None:
    loaded = load_plan([ROOT / "intent" / "rail-4su.yaml"], strict=False)
    p = 0.0005
    result = analyze(loaded.intent, loaded.plan, AnalyzeOptions(trials=50, slow_link_probability=p), "x")
    st = result.as_dict()["stragglers"]
    tiers = result.ecmp.intent_result.tiers
    assert st["nic_cables"] == result.ecmp.job.gpus == 512
    assert st["fabric_cables"] == tiers["leaf_up"].links
    assert st["p_slow_step"] == 1 - (1 - p) ** (512 + tiers["leaf_up"].links)
    # A smaller job touches fewer cables and waits less often.
    small = analyze(loaded.intent, loaded.plan, AnalyzeOptions(trials=50, job_gpus=64, slow_link_probability=p), "x")
    assert small.as_dict()["stragglers"]["p_slow_step"] < st["p_slow_step"]
    assert analyze(loaded.intent, loaded.plan, AnalyzeOptions(trials=50), "x").as_dict()["stragglers"] is None
