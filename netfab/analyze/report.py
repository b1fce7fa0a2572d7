"""The analysis as a report: its rules, and the text overview rendered from analysis.json's data (nothing
here computes; it only formats the dict).

Keeping text a pure function of the JSON document means a script reading the JSON sees every figure an
engineer reads on the terminal, and the two can never disagree. The findings (ANALYZE001-005) follow the
overview in the style every verb shares (netfab.report.text); the JSON report is the shared envelope with
this document as its details.
"""

from __future__ import annotations

import json
from typing import Any

from netfab.analyze.deadlock import RULE as DEADLOCK_RULE
from netfab.analyze.failure import RULE as FAILURE_RULE
from netfab.analyze.nccl import RULES as NCCL_RULES
from netfab.core.findings import RuleInfo, Severity

RULES: tuple[RuleInfo, ...] = (
    RuleInfo(
        "ANALYZE001",
        "ECMP collisions tax the collective",
        Severity.WARNING,
        "The ECMP collision model says hash collisions on the busiest uplinks cost the job's collective more "
        "than 25 % of every step at p99. A collective is a barrier: its slowest flow sets the step time.",
        hint="more QPs per GPU pair, hash on the RoCE UDP source port or QP, or adaptive routing/spraying",
    ),
    RuleInfo(
        "ANALYZE002",
        "PFC headroom takes most of the buffer",
        Severity.WARNING,
        "PFC headroom for every lossless port and priority reserves most of the switch's planning buffer, "
        "leaving little shared buffer to absorb bursts.",
        hint="shorten the longest cables, drop a lossless priority, or use a platform with a shared headroom pool",
    ),
    RuleInfo(
        "ANALYZE003",
        "lab disagrees with the ECMP model",
        Severity.ERROR,
        "`netfab analyze --lab`: the kernel spread measured in the namespace lab falls outside the model's "
        "band (or a configuration the model calls deterministic spread flows).",
        hint="check the leaf runs the policy the check set and nothing else sends over its uplinks",
    ),
    RuleInfo(
        "ANALYZE004",
        "kernel-hash replica differs from the kernel",
        Severity.WARNING,
        "`netfab analyze --lab`: netfab's replica of the kernel's multipath hash did not predict every measured split.",
        hint="compare the replica with `ip route get` for the same flows",
    ),
    RuleInfo(
        "ANALYZE005",
        "lab hash sysctls not restored",
        Severity.ERROR,
        "`netfab analyze --lab` changes a leaf's multipath hash sysctls while it measures and could not put them back.",
        hint="re-run the leaf's rendered script, or netfab lab down/up",
    ),
    DEADLOCK_RULE,
    FAILURE_RULE,
    *NCCL_RULES,
)

TIER_NAMES = {
    "leaf_up": "leaf -> spine",
    "spine_down": "spine -> leaf",
    "spine_up": "spine -> superspine",
    "superspine_down": "superspine -> spine",
}


def render_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def _gbps(g: float) -> str:
    return f"{g / 1000:,.1f} Tb/s" if g >= 1000 else f"{g:g} Gb/s"


def _ratio(x: float) -> str:
    return "1:1" if abs(x - 1) < 1e-9 else f"{x:.2f}:1"


def _pct(x: float) -> str:
    return f"{x:.0%}" if abs(x) >= 0.01 or x == 0 else f"{x:.1%}"


def _table(rows: list[list[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for k, row in enumerate(rows):
        cells = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        out.append(indent + "  ".join(cells).rstrip())
        if k == 0:
            out.append(indent + "  ".join("-" * w for w in widths))
    return out


def render_text(doc: dict[str, Any], files: list[str] | None = None) -> str:
    p = doc["parameters"]
    lines = [
        f"netfab analyze: {doc['fabric']} ({doc['style']})",
        f"  {p['pattern']} collective, {p['job_gpus']}-GPU job ({p['placement']}), {p['trials']:,} trials, seed "
        f"{p['seed']}, {p['qps_per_gpu_pair']} QPs/pair, hash {'+'.join(p['hash_fields'])}",
        "",
    ]
    lines += _capacity(doc["capacity"])
    lines += _lossless(doc["lossless"])
    lines += _deadlock(doc.get("pfc_deadlock"))
    lines += _ecmp(doc["ecmp"], p["pattern"])
    lines += _stragglers(doc.get("stragglers"))
    lines += _failures(doc.get("failures"))
    if files:
        lines += ["", "written: " + ", ".join(files)]
    return "\n".join(lines).rstrip() + "\n"


def _deadlock(dl: dict[str, Any] | None) -> list[str]:
    if not dl:
        return []
    if dl["skipped"]:
        return ["PFC deadlock under single failures: not checked (" + dl["skipped"] + ")", ""]
    sub = dl["subfabric"]
    scope = f"{dl['failures_checked']} link and switch failures of a {sub['switches']}-switch sub-fabric"
    if not dl["deadlock_failures"]:
        return [f"PFC deadlock under single failures: no cyclic buffer dependency in any of {scope}", ""]
    first = dl["examples"][0]
    return [
        f"PFC deadlock under single failures: {dl['deadlock_failures']} of {scope} close a cycle",
        f"  e.g. {first['failure']}: {' '.join(first['cycle'])}",
        "",
    ]


def _capacity(cap: dict[str, Any]) -> list[str]:
    lines = [f"CAPACITY  {cap['gpus']:,} GPUs at {_gbps(cap['nic_gbps'])} per NIC"]
    rows = [["tier", "switches", "down/switch", "up/switch", "oversub (declared)", "share"]]
    for name, t in cap["tiers"].items():
        rows.append([
            name, f"{t['switches']:,}", _gbps(t["down_gbps_per_switch"]), _gbps(t["up_gbps_per_switch"]),
            f"{_ratio(t['oversubscription'])} ({_ratio(t['declared_oversubscription'])})", f"{t['share']:.3f}",
        ])  # fmt: skip
    lines += _table(rows)
    rows = [["scope", "count", "GPUs", "bisection", "per GPU", "limit", "all-reduce 1 GB >=", "bottleneck"]]
    for name, s in cap["scopes"].items():
        b = cap["allreduce_lower_bound"][name]
        rows.append([
            name, f"{s['instances']:,}", f"{s['gpus']:,}", _gbps(s["bisection_gbps"]),
            _gbps(s["bisection_per_gpu_gbps"]), s["bisection_limit"], f"{b['seconds'] * 1000:.1f} ms", b["bottleneck"],
        ])  # fmt: skip
    lines += ["", *_table(rows), ""]
    return lines


def _lossless(ll: dict[str, Any]) -> list[str]:
    configured = ll["configured_headroom"]
    conf = "auto (sized per port)" if configured == "auto" else f"{configured:,} B"
    state = {
        "ok": "ok",
        "too small": "TOO SMALL",
        "over the buffer": "OVER THE BUFFER (ANALYZE002)",
        "not rated": "fits the ports; buffer not known, so not rated",
    }[ll["verdict"]]
    lines = [
        f"LOSSLESS  PFC priorities {ll['pfc_priorities']}, headroom {conf}: {state}; "
        f"largest need {ll['largest_required_bytes']:,} B per port per priority"
        + ("" if ll["dcqcn_enabled"] else "; DCQCN off (ECN marks are not acted on by NICs)")
    ]
    rows = [["ingress port", "ports", "speed", "cable", "headroom/prio"]]
    for port in ll["ports"]:
        rows.append([
            f"{port['role']} ({port['link']})", f"{port['ports']:,}", f"{port['speed_gbps']}G",
            f"{port['cable_m']:g} m", f"{port['required_bytes']:,} B",
        ])  # fmt: skip
    lines += _table(rows)
    rows = [["switch", "platform / planning ASIC", "lossless ports", "reserved", "of buffer"]]
    for role, s in ll["switches"].items():
        share = s["share_of_buffer"]
        rows.append([
            role, f"{s['platform']} / {s['asic']}", str(s["lossless_ports"]), f"{s['reserved_bytes']:,} B",
            _pct(share) if share is not None else "n/a",
        ])  # fmt: skip
    lines += ["", *_table(rows)]
    if ll["ecn"]:
        rows = [["ECN egress", "speed", "RTT", "BDP", "Kmin/BDP", "Kmax/BDP", "Kmax/XOFF", "marks before PFC"]]
        for name, e in ll["ecn"].items():
            before = e["marks_before_pfc"]
            rows.append([
                name, f"{e['speed_gbps']}G", f"{e['path_rtt_us']:.1f} us", f"{e['bdp_bytes']:,} B",
                f"{e['kmin_over_bdp']:.2f}", f"{e['kmax_over_bdp']:.2f}",
                f"{e['kmax_over_xoff']:.3f}" if e["kmax_over_xoff"] is not None else "n/a",
                "n/a" if before is None else ("yes" if before else "NO"),
            ])  # fmt: skip
        lines += ["", *_table(rows)]
    return [*lines, ""]


def _ecmp(ecmp: dict[str, Any], pattern: str) -> list[str]:
    job, flows, bound = ecmp["job"], ecmp["flows"], ecmp["allreduce_lower_bound"]
    lines = [
        f"ECMP      {job['gpus']}-GPU job on {job['servers']} servers, {job['leaves']} leaves, {job['domains']} "
        f"SUs/pods (scope {job['scope']}); {flows['gpu_pairs']:,} GPU pairs, {flows['pairs_leaving_leaf']:,} leave "
        f"their leaf, {flows['pairs_crossing_pods']:,} cross pods",
    ]
    if pattern != "alltoall":  # the bound is a ring all-reduce's; an all-to-all run has no use for it
        lines.append(
            f"  all-reduce lower bound for this job: {bound['seconds'] * 1000:.1f} ms per GB "
            f"({_gbps(bound['effective_per_gpu_gbps'])} per GPU, bottleneck {bound['bottleneck']})"
        )
    head = ecmp["headline_tier"]
    rows = [["scenario", "QPs", "trials", "busiest uplink p50/p99/max (x fair p99)", "tax p50", "tax p99", "tax max"]]
    for s in ecmp["scenarios"]:
        tier = s["tiers"].get(head)
        busy = "-"
        if tier:
            b, f = tier["busiest_link_flows"], tier["busiest_link_vs_fair_share"]
            # Below one flow per link the ratio mostly says "few flows", not "bad hashing": left out.
            ratio = f" ({f['p99']:.2f}x)" if tier["fair_share_max_flows"] >= 1 else ""
            busy = f"{b['p50']:g}/{b['p99']:g}/{b['max']:g}{ratio}"
        tax = s["step_time_tax"]
        name = "intent: " + _describe(s) if s["key"] == "intent" else s["label"]
        rows.append([
            name, str(s["qps_per_gpu_pair"]), f"{s['trials']:,}" + _trial_mark(s), busy,
            _pct(tax["p50"]), _pct(tax["p99"]), _pct(tax["max"]),
        ])  # fmt: skip
    lines += ["", *_table(rows), "  * deterministic: no per-QP field reaches the hash, every trial routes alike"]
    if any(s.get("model") == "aggregated" for s in ecmp["scenarios"]):
        lines.append(
            "  + aggregated: too many flows to hash one by one; flows per link drawn per flow class, "
            "each tier on its own (docs/analyze.md)"
        )
    lines.append("")
    intent = next(s for s in ecmp["scenarios"] if s["key"] == "intent")
    lines += _free_imbalance(intent, head)
    rows = [["tier (intent)", "links used", "fair share", "busiest p50/p99/max", "x fair p99"]]
    for name, t in intent["tiers"].items():
        b = t["busiest_link_flows"]
        rows.append([
            TIER_NAMES.get(name, name), f"{t['links']:,}", f"{t['fair_share_max_flows']:g}",
            f"{b['p50']:g}/{b['p99']:g}/{b['max']:g}",
            f"{t['busiest_link_vs_fair_share']['p99']:.2f}" if t["fair_share_max_flows"] >= 1 else "-",
        ])  # fmt: skip
    if len(rows) > 1:
        lines += [*_table(rows), ""]
    k = ecmp["linux_kernel"]
    dropped = k["fields_the_kernel_cannot_hash"]
    if not k.get("fabric_has_kernel_switches", True):
        return lines
    lines.append(
        f"  lab (Linux kernel): fib_multipath_hash_policy {k['fib_multipath_hash_policy']}, fields "
        f"{k['fib_multipath_hash_fields']}" + (f"; cannot hash {', '.join(dropped)}" if dropped else "")
    )
    return [*lines, ""]


def _trial_mark(s: dict[str, Any]) -> str:
    if s["deterministic"]:
        return "*"
    return "+" if s.get("model") == "aggregated" else ""


def _failures(fl: dict[str, Any] | None) -> list[str]:
    if not fl:
        return []
    lines = [
        f"FAILURES  {fl['evaluated']:,} evaluated for the {fl['job_gpus']}-GPU {fl['pattern']} job "
        f"({fl['model']}), worst first"
    ]
    rows = [["element", "class", "step time", "GPUs out", "capacity lost", "busiest link after"]]
    for r in fl["results"][:12]:
        step = "job stops" if r["job_stops"] else f"{r['step_time_factor']:.2f}x"
        lost = ", ".join(f"{k} {_gbps(v)}" for k, v in r["capacity_lost_gbps"].items()) or "-"
        rows.append([r["element"][:40], r["class"], step, str(r["gpus_lost"]), lost, r["busiest_link_after"]])
    return [*lines, *_table(rows), ""]


def _stragglers(st: dict[str, Any] | None) -> list[str]:
    if not st:
        return []
    return [
        f"STRAGGLERS  with each cable slow with p={st['slow_link_probability']:g} during a step, "
        f"{_pct(st['p_slow_step'])} of steps wait for one: 1-(1-p)^n over the {st['cables']:,} cables the job "
        f"touches ({st['nic_cables']:,} NIC, {st['fabric_cables']:,} fabric)",
        "",
    ]


def _free_imbalance(intent: dict[str, Any], head: str) -> list[str]:
    """Say why an uneven uplink spread costs nothing, when it does: a bare 1.4x next to 0 % reads as a bug."""
    tier = intent["tiers"].get(head)
    if not tier or tier["fair_share_max_flows"] < 1 or intent["step_time_tax"]["p99"] > 0:
        return []
    over = tier["busiest_link_vs_fair_share"]["p99"]
    if over <= 1.0:
        return []
    return [
        f"  the busiest uplink carries {over:.2f}x its fair share at p99 and the step still pays 0 %: it moves "
        "less per Gb/s than a NIC link does, so the NICs set the step time (the fabric is not the bottleneck)",
        "",
    ]


def _describe(s: dict[str, Any]) -> str:
    if s["ideal_balance"]:
        return "adaptive routing / spraying (ideal)"
    return "+".join(s["hash_fields"])
