"""failures.svg: the failures ranked by what they do to the job - its blast radius at a glance.

One row per failure, worst first: a bar for the step-time factor (a red bar for a failure that stops the job,
because some of its GPUs lose their NIC's path), the GPUs it takes out, and the pods and rails it degrades.
"""

from __future__ import annotations

import math

from netfab.analyze.failure import FailureResult
from netfab.analyze.svg import PALETTE, Svg

WIDTH = 980
ROW = 22
MAX_ROWS = 30
BAR_X = 330
BAR_W = 380
MAX_FACTOR = 3.0
"""Bars saturate here: a 3x slower step is already a job the scheduler should move."""


def failure_svg(results: list[FailureResult], fabric: str, job_gpus: int) -> str:
    ranked = sorted(results, key=lambda r: r.damage, reverse=True)[:MAX_ROWS]
    height = 90 + ROW * max(1, len(ranked))
    svg = Svg(WIDTH, height, f"{fabric} failure blast radius")
    svg.text(20, 28, f"{fabric}: what single failures do to a {job_gpus}-GPU job (worst first)", size=15, weight="bold")
    svg.text(BAR_X, 52, "step-time factor (1x = no slowdown; red = the job stops)", size=11, fill="#555555")
    svg.text(BAR_X + BAR_W + 20, 52, "GPUs out / pods / rails", size=11, fill="#555555")
    for i, r in enumerate(ranked):
        y = 66 + i * ROW
        stops = r.job_gpus_lost > 0 or r.unroutable_pairs > 0 or math.isinf(r.step_factor)
        svg.text(20, y + 14, r.element.label[:48], size=11)
        factor = MAX_FACTOR if stops else min(r.step_factor, MAX_FACTOR)
        width = BAR_W * (factor - 1) / (MAX_FACTOR - 1) if factor > 1 else 2
        colour = PALETTE[3] if stops else (PALETTE[1] if r.step_factor > 1 + 1e-6 else PALETTE[2])
        label = "stops the job" if stops else f"{r.step_factor:.2f}x"
        svg.rect(BAR_X, y + 3, width, ROW - 8, fill=colour, stroke="none", tooltip=f"{r.element.label}: {label}")
        svg.text(BAR_X + width + 6, y + 14, label, size=11)
        where = f"{r.gpus_lost} / {','.join(map(str, r.pods)) or '-'} / {','.join(map(str, r.rails)) or '-'}"
        svg.text(BAR_X + BAR_W + 20, y + 14, where, size=11)
    return svg.render()
