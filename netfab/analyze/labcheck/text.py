"""The check's text report, rendered from its JSON document (so a saved lab-check.json renders the same)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from netfab.analyze.labcheck.options import DETERMINISTIC_MIN_SHARE


def render_lab_text(doc: dict[str, Any]) -> str:
    """The text report of a lab check (`LabCheck.as_dict()`); formats the dict only."""
    lines = [*_header(doc), "", *_table(doc), "", *_summary(doc)]
    lines.append(f"  verdict: {'lab and model agree' if doc['summary']['agrees'] else 'LAB AND MODEL DISAGREE'}")
    return "\n".join(lines) + "\n"


def _header(doc: dict[str, Any]) -> list[str]:
    p = doc["parameters"]
    src, dst = doc["src"], doc["dst"]
    seed = doc["hash_seed"]
    return [
        f"LAB CHECK  lab {doc['lab_prefix']} (fabric {doc['fabric']}), kernel {doc['kernel_release']}",
        f"  {p['flows']} UDP flows x {p['batches']} batches, {src['host']} {src['nic']} {src['ip']} -> "
        f"{dst['host']} {dst['nic']} {dst['ip']}, dport 4791; per flow {p['packets_per_flow']} datagrams x "
        f"{p['wire_bytes_per_datagram']} B at {p['rate_pps_per_flow']:g}/s",
        f"  measured: tx counters of {doc['leaf']} {' '.join(doc['uplinks'])} (kernel next-hop order "
        f"{' '.join(doc['nexthop_order'])}); hash seed {seed['read'] if seed['read'] is not None else 'n/a'}"
        f" (plan {seed['plan']})",
    ]


_RIGHT_ALIGNED = {4, 6, 7, 8, 10}


def _table(doc: dict[str, Any]) -> list[str]:
    """One row per hash configuration, then the legend."""
    p = doc["parameters"]
    few = p["batches"] <= 8  # a few batches: list them; many: their distribution
    header = (
        "hash config",
        "lab busiest, per batch" if few else "lab busiest p50/p90/max",
        "model p50/p90/p99",
        "model [p1,p99]",
        "in band",
        "percentile in model" if few else "percentile med (min-max)",
        "lab mean",
        "model mean",
        "z",
        "TVD (p)",
        "replica",
        "verdict",
    )
    rows = [_row(c, few) for c in doc["configs"]]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def fmt(r: Sequence[str]) -> str:
        cells = (str(v).rjust(widths[i]) if i in _RIGHT_ALIGNED else str(v).ljust(widths[i]) for i, v in enumerate(r))
        return ("  " + "  ".join(cells)).rstrip()

    return [
        fmt(header),
        fmt(["-" * w for w in widths]),
        *map(fmt, rows),
        f"  busiest = flows (of {p['flows']}) on the busier uplink, from its share of the bytes; * = the intent's hash",
        "  z = lab mean - model mean in standard errors; TVD = distance of the lab's histogram from the model's",
        "  (p = how often as many batches drawn from the model land at least that far)",
    ]


def _row(c: dict[str, Any], few: bool) -> tuple[str, ...]:
    s = c["summary"]
    lab, model = s["measured_busiest_flows"], s["model_busiest_flows"]
    pcts = [b["model"]["percentile"] for b in c["batches"]]
    if few:
        lab_col = " ".join(str(b["busiest_flows"]) for b in c["batches"])
        pct_col = " ".join(f"{v:.0f}" for v in pcts)
    else:
        lab_col = f"{lab['p50']}/{lab['p90']}/{lab['max']}"
        pct_col = f"{float(np.median(pcts)):.0f} ({min(pcts):.0f}-{max(pcts):.0f})"
    spread = not c["deterministic"]
    return (
        c["label"] + (" *" if c["intent"] else ""),
        lab_col,
        f"{model['p50']}/{model['p90']}/{model['p99']}",
        f"[{model['p1']}, {model['p99']}]",
        f"{s['batches_in_band']}/{s['batches']}",
        pct_col if spread else "-",
        f"{s['measured_busiest_share']['mean']:.1%}",
        f"{s['model_busiest_share_mean']:.1%}",
        f"{s['z_batch_mean']:+.1f}" if spread else "-",
        f"{s['tvd']:.2f} ({s['tvd_p']:.2f})" if spread else "-",
        f"{s['replica_exact_batches']}/{s['replica_batches']}" if s["replica_batches"] else "-",
        s["verdict"] + ("" if spread else " (exact)"),
    )


def _summary(doc: dict[str, Any]) -> list[str]:
    """The check in a few sentences: per kind of configuration, the replica, the leaf's sysctls, notes."""
    su = doc["summary"]
    lines = []
    if su["deterministic_batches"]:
        lines.append(
            f"  deterministic (one hash key): {su['deterministic_batches_exact']}/{su['deterministic_batches']} "
            f"batches put >= {DETERMINISTIC_MIN_SHARE:.0%} of the bytes on one uplink, as the model says"
        )
    if su["spread_batches"]:
        m = su["spread_mean_busiest_share"]
        lines.append(
            f"  spread (per-flow hash): {su['spread_batches_in_band']}/{su['spread_batches']} batches inside the "
            f"model's [p1, p99] band (about 2 % may fall outside by chance); mean busiest share {m['measured']:.1%} "
            f"measured vs {m['model']:.1%} model"
        )
    if su["replica_batches"]:
        lines.append(
            f"  kernel-hash replica (seed {doc['hash_seed']['read']}): exact split in {su['replica_exact_batches']}/"
            f"{su['replica_batches']} batches; {su['replica_vs_kernel_flows']}/{su['kernel_flows_checked']} "
            "flows on the uplink `ip route get` names"
        )
    sy = doc["sysctls"]
    before = sy["before"]
    fields = before.get("fib_multipath_hash_fields")
    lines.append(
        f"  {doc['leaf']} hash sysctls {'restored' if sy['restored'] else 'NOT RESTORED'}: policy "
        f"{before.get('fib_multipath_hash_policy')}, fields {f'0x{int(fields, 0):04x}' if fields else '?'} "
        f"(the intent renders policy {doc['intent_hash']['policy']}, fields {doc['intent_hash']['fields_mask']})"
    )
    lines += [f"  note: {n}" for n in doc["notes"]]
    return lines  # the findings are printed after the report, in the style every verb shares
