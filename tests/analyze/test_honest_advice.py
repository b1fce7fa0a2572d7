"""Analyze gives advice only on differences outside the noise (issue 15: honest analysis).

meta-zones.yaml is fabric 2 of the newcomer trial (reference/NEWCOMER_TRIAL.md, appendix), copied unchanged:
its ANALYZE001 hint used to advise dropping destination-QP hashing on a 31 % vs 38 % difference, which is
sampling noise (a subset of the hash fields cannot have more entropy).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

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
