"""Analyze: what a fabric design does to a collective's tail, before any hardware exists.

- capacity: per-tier oversubscription, bisection bandwidth per SU/pod/fabric, ring all-reduce lower bounds;
- lossless_budget: PFC headroom per port against the intent and the platform buffer, ECN against BDP/XOFF;
- ecmp_model: seeded, vectorised ECMP collision trials (busiest link, step-time tax as tail figures);
- kernel_model: the Linux kernel's ECMP hash policies, so the namespace lab can be held against the model.

`analyze(intent, plan, options)` runs all of it; `netfab analyze` renders it (netfab.cli.analyze_cmd).
"""

from netfab.analyze.kernel_model import KernelFlow, SplitForecast, predict_uplink_split, uplink_split_forecast
from netfab.analyze.run import Analysis, AnalysisInputError, AnalyzeOptions, analyze

__all__ = [
    "Analysis",
    "AnalysisInputError",
    "AnalyzeOptions",
    "KernelFlow",
    "SplitForecast",
    "analyze",
    "predict_uplink_split",
    "uplink_split_forecast",
]
