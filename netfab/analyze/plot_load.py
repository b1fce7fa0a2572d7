"""link-load.svg: the tail of the busiest leaf uplink and of the step-time tax, across trials.

Left: histogram of the busiest leaf uplink's load (flows) per trial, with the fair share and the p99 marked.
Right: CDF of the step-time tax for every scenario, each with its p99 dotted. When the intent itself balances
perfectly (adaptive routing / spraying), the histogram shows what hashing alone would do with the same QPs.
"""

from __future__ import annotations

import numpy as np

from netfab.analyze.ecmp_model import ScenarioResult
from netfab.analyze.run import HEADLINE_TIER, Analysis
from netfab.analyze.svg import PALETTE, Svg

W, H = 980, 500
PANEL_Y, PANEL_H = 84, 280


def _hist_source(analysis: Analysis) -> ScenarioResult | None:
    results = analysis.ecmp.results
    own = analysis.ecmp.intent_result
    if not own.scenario.ideal:
        return own
    same_qps = [r for r in results if not r.scenario.ideal and r.scenario.qps == own.scenario.qps]
    hashed = [r for r in results if not r.scenario.ideal]
    candidates = same_qps or hashed
    return candidates[0] if candidates else None


def link_load_svg(analysis: Analysis) -> str:
    svg = Svg(W, H, f"{analysis.plan.name} link load")
    job = analysis.ecmp.job
    svg.text(20, 28, f"{analysis.plan.name}: {job.gpus}-GPU {analysis.options.pattern} job, "
             f"{job.placement} placement, {analysis.options.trials:,} trials", size=16, weight="bold")  # fmt: skip
    _histogram(svg, analysis, 60, 420)
    _cdf(svg, analysis, 560, 400)
    return svg.render()


def _histogram(svg: Svg, analysis: Analysis, x0: float, width: float) -> None:
    source = _hist_source(analysis)
    tier = source.tiers.get(HEADLINE_TIER) if source else None
    if source is None or tier is None:
        svg.text(x0, PANEL_Y + 40, "no flow of this job leaves its leaf: no uplink load to show", size=13)
        return
    label = source.scenario.label if source.scenario.key != "intent" else "the intent's load balancing"
    if source is not analysis.ecmp.intent_result:
        label += " (hashing alone)"
    svg.text(x0, PANEL_Y - 28, "busiest leaf uplink per trial", size=13, weight="bold")
    svg.text(x0, PANEL_Y - 12, f"{label}, {source.trials:,} trials", size=11)
    samples = tier.busiest_samples
    values, counts = np.unique(np.round(samples, 3), return_counts=True)
    fair = tier.fair_share_max
    lo = min(float(values.min()), fair) - 0.5
    hi = max(float(values.max()), fair) + 0.5
    share = counts / samples.size
    top = float(share.max()) or 1.0

    def x_of(v: float) -> float:
        return x0 + (v - lo) / (hi - lo) * width

    def y_of(s: float) -> float:
        return PANEL_Y + PANEL_H - s / top * (PANEL_H - 10)

    bar = max(width / (hi - lo) * 0.8, 1.5)
    _axes(svg, x0, width, f"flows on the busiest leaf uplink (fair share {fair:g})", f"share of trials (max {top:.0%})")
    for v, s in zip(values, share, strict=True):
        svg.rect(x_of(float(v)) - bar / 2, y_of(float(s)), bar, PANEL_Y + PANEL_H - y_of(float(s)),
                 fill=PALETTE[0], stroke="none", tooltip=f"{v:g} flows: {s:.2%} of trials")  # fmt: skip
    for v in sorted({float(values.min()), float(values.max()), fair}):
        svg.text(x_of(v), PANEL_Y + PANEL_H + 16, f"{v:g}", size=10, anchor="middle")
    p99 = tier.busiest_flows.p99
    svg.line(x_of(fair), PANEL_Y, x_of(fair), PANEL_Y + PANEL_H, stroke=PALETTE[2], width=2, dash="6 4")
    svg.text(x_of(fair) + 4, PANEL_Y + 14, "fair share", size=11, fill=PALETTE[2])
    svg.line(x_of(p99), PANEL_Y, x_of(p99), PANEL_Y + PANEL_H, stroke=PALETTE[3], width=2)
    svg.text(x_of(p99) + 4, PANEL_Y + 30, f"p99 {p99:g}", size=11, fill=PALETTE[3])


def _cdf(svg: Svg, analysis: Analysis, x0: float, width: float) -> None:
    results = analysis.ecmp.results
    svg.text(x0, PANEL_Y - 28, "step-time tax per trial", size=13, weight="bold")
    svg.text(x0, PANEL_Y - 12, "slowest flow's completion vs perfect balance, CDF; dots = p99", size=11)
    # Scale to the scenarios that are in the same league as the intent; a 1-QP scenario at +400 % would
    # flatten everything else against the axis, so it is clipped at the edge and flagged in the legend.
    p99s = [r.tax.p99 for r in results]
    near = [p for p in p99s if p <= 1.0]
    hi = max(0.05, 1.15 * max(near or p99s))

    def x_of(v: float) -> float:
        return x0 + min(v, hi) / hi * width

    def y_of(f: float) -> float:
        return PANEL_Y + PANEL_H - f * PANEL_H

    _axes(svg, x0, width, f"step-time tax (0 to {hi:.0%})", "fraction of trials")
    for k, r in enumerate(results):
        color = PALETTE[k % len(PALETTE)]
        xs = np.sort(r.tax_samples)
        # Up to 200 steps of the empirical CDF: enough for the eye, small files for 10,000 trials.
        idx = np.unique(np.linspace(0, xs.size - 1, min(xs.size, 200)).astype(int))
        pts = [(x_of(0.0), y_of(0.0))]
        for i in idx:
            pts += [(x_of(float(xs[i])), pts[-1][1]), (x_of(float(xs[i])), y_of((i + 1) / xs.size))]
        svg.polyline(pts, stroke=color)
        svg.circle(x_of(r.tax.p99), y_of(0.99), 4, color)
        ly = PANEL_Y + PANEL_H + 50 + k * 15
        svg.rect(x0, ly - 9, 10, 10, fill=color, stroke="none")
        name = "intent" if r.scenario.key == "intent" else r.scenario.label
        off = " (off scale)" if r.tax.p99 > hi else ""
        svg.text(x0 + 14, ly, f"{name}: p99 {r.tax.p99:.0%}{off}", size=10)


def _axes(svg: Svg, x0: float, width: float, xlabel: str, ylabel: str) -> None:
    svg.line(x0, PANEL_Y + PANEL_H, x0 + width, PANEL_Y + PANEL_H)
    svg.line(x0, PANEL_Y, x0, PANEL_Y + PANEL_H)
    svg.text(x0 + width / 2, PANEL_Y + PANEL_H + 30, xlabel, size=11, anchor="middle")
    svg.text(x0 - 12, PANEL_Y + PANEL_H / 2, ylabel, size=11, anchor="middle", rotate=-90)
