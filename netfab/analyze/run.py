"""`analyze(intent, plan, options)`: capacity, lossless budget and the ECMP collision model of one fabric."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from netfab.analyze.capacity import DEFAULT_MESSAGE_BYTES, AllReduceBound, Capacity, allreduce_bound, analyze_capacity
from netfab.analyze.collective import Job, Pattern, Placement, gpu_pairs, place_job
from netfab.analyze.deadlock import DeadlockResult, check_deadlock, deadlock_findings
from netfab.analyze.ecmp_model import EcmpModel, Scenario, ScenarioResult, comparison_scenarios
from netfab.analyze.flows import flow_set
from netfab.analyze.hashing import KERNEL_FIELD_BITS, kernel_policy_for
from netfab.analyze.lossless_budget import LosslessBudget, analyze_lossless
from netfab.analyze.ports import port_kinds
from netfab.analyze.routing import FabricRoutes, build_routes
from netfab.analyze.stats import paired_quantile_gain
from netfab.core.findings import Finding, Location, Severity
from netfab.design.plan import FabricPlan
from netfab.intent import Intent
from netfab.platforms import namespace_lab_platform

DEFAULT_JOB_GPUS = 512
"""Default job size (capped at the fabric): big enough to span pods/SUs, small enough that 10,000 trials on a
24k-GPU fabric take seconds. --job-gpus sets any size."""
TAIL_TAX_WARN = 0.25
"""Warn when the intent's p99 step-time tax exceeds this: a quarter of every step lost to hash collisions."""
HEADLINE_TIER = "leaf_up"


class AnalysisInputError(ValueError):
    """Options that do not fit the fabric (e.g. a job bigger than the fabric): a usage error, exit 2."""


@dataclass(frozen=True)
class AnalyzeOptions:
    trials: int = 1000
    seed: int = 1
    pattern: Pattern = "ring"
    job_gpus: int | None = None
    """None = min(DEFAULT_JOB_GPUS, all GPUs)."""
    placement: Placement = "spread"
    qps: int | None = None
    """Override load_balancing.qps_per_gpu_pair for the intent's own scenario."""
    message_bytes: int = DEFAULT_MESSAGE_BYTES
    slow_link_probability: float | None = None
    """Declared or measured (netfab health) chance that a given link is slow during a step: gives the job's
    straggler odds."""


@dataclass
class EcmpAnalysis:
    job: Job
    scope: str
    pairs: int
    intra_pod_pairs: int
    cross_pod_pairs: int
    bound: AllReduceBound
    results: list[ScenarioResult]
    intent_key: str
    kernel: dict[str, Any]

    @property
    def intent_result(self) -> ScenarioResult:
        return next(r for r in self.results if r.scenario.key == self.intent_key)

    def as_dict(self, routes: FabricRoutes) -> dict[str, Any]:
        servers = self.job.servers
        domains = np.unique(routes.server_domain[servers]).size if servers.size else 0
        leaves = np.unique(routes.nic_leaf[servers]).size if servers.size else 0
        return {
            "job": {
                "gpus": self.job.gpus,
                "servers": int(servers.size),
                "placement": self.job.placement,
                "scope": self.scope,
                "domains": int(domains),
                "leaves": int(leaves),
                "first_servers": [routes.server_names[i] for i in servers[:4]],
            },
            "flows": {
                "gpu_pairs": self.pairs,
                "pairs_leaving_leaf": self.intra_pod_pairs + self.cross_pod_pairs,
                "pairs_crossing_pods": self.cross_pod_pairs,
            },
            "allreduce_lower_bound": self.bound.as_dict(),
            "intent_scenario": self.intent_key,
            "headline_tier": HEADLINE_TIER,
            "scenarios": [r.as_dict() for r in self.results],
            "linux_kernel": self.kernel,
        }


@dataclass
class Analysis:
    intent: Intent
    plan: FabricPlan
    options: AnalyzeOptions
    routes: FabricRoutes
    capacity: Capacity
    lossless: LosslessBudget
    ecmp: EcmpAnalysis
    findings: list[Finding] = field(default_factory=list)
    deadlock: DeadlockResult | None = None

    def stragglers(self) -> dict[str, Any] | None:
        """P(a step waits for a slow link) = 1 - (1 - p)^n over the n cables the job's flows can use.

        A collective is a barrier: one slow cable anywhere on the job's paths slows the whole step, so the
        odds grow with the cables a job touches, not with its share of them. n counts the job's NIC cables
        and the fabric cables its flows can hash onto (leaf-spine, spine-superspine), each once.
        """
        p = self.options.slow_link_probability
        if p is None:
            return None
        tiers = self.ecmp.intent_result.tiers
        fabric = sum(tiers[t].links for t in ("leaf_up", "spine_up") if t in tiers)
        n = self.ecmp.job.gpus + fabric
        return {
            "slow_link_probability": p,
            "cables": n,
            "nic_cables": self.ecmp.job.gpus,
            "fabric_cables": fabric,
            "p_slow_step": 1 - (1 - p) ** n,
        }

    def as_dict(self) -> dict[str, Any]:
        from netfab import __version__

        o = self.options
        intent_result = self.ecmp.intent_result
        return {
            "netfab_version": __version__,
            "fabric": self.plan.name,
            "style": self.plan.style,
            "parameters": {
                "trials": o.trials,
                "seed": o.seed,
                "pattern": o.pattern,
                "job_gpus": self.ecmp.job.gpus,
                "placement": o.placement,
                "qps_per_gpu_pair": intent_result.scenario.qps,
                "hash_fields": sorted(intent_result.scenario.hash_fields),
                "message_bytes": o.message_bytes,
            },
            "capacity": self.capacity.as_dict(),
            "lossless": self.lossless.as_dict(),
            "ecmp": self.ecmp.as_dict(self.routes),
            "pfc_deadlock": self.deadlock.as_dict() if self.deadlock is not None else None,
            "stragglers": self.stragglers(),
            "findings": [_finding_dict(f) for f in self.findings],
            "summary": {
                "p99_step_time_tax": round(intent_result.tax.p99, 4),
                "job_bottleneck": self.ecmp.bound.bottleneck,
                "errors": sum(f.severity == Severity.ERROR for f in self.findings),
                "warnings": sum(f.severity == Severity.WARNING for f in self.findings),
            },
        }


def analyze(intent: Intent, plan: FabricPlan, options: AnalyzeOptions, source_file: str = "<intent>") -> Analysis:
    gpus_per_server = intent.topology.servers.gpus_per_server
    routes = build_routes(plan, gpus_per_server)
    kinds = port_kinds(plan)
    capacity = analyze_capacity(intent, plan, options.message_bytes, kinds)
    lossless = analyze_lossless(intent, plan, kinds)
    ecmp = _ecmp(intent, plan, routes, capacity, options)
    deadlock = check_deadlock(plan)
    findings = [
        *lossless.findings(source_file),
        *_ecmp_findings(ecmp, source_file, options.seed),
        *deadlock_findings(deadlock, source_file),
    ]
    return Analysis(intent, plan, options, routes, capacity, lossless, ecmp, findings, deadlock)


def _ecmp(
    intent: Intent, plan: FabricPlan, routes: FabricRoutes, capacity: Capacity, options: AnalyzeOptions
) -> EcmpAnalysis:
    total = routes.servers * routes.gpus_per_server
    job_gpus = options.job_gpus if options.job_gpus is not None else min(DEFAULT_JOB_GPUS, total)
    if job_gpus < 1 or job_gpus > total:
        raise AnalysisInputError(f"--job-gpus {job_gpus}: the fabric has {total} GPUs")
    if options.trials < 1:
        raise AnalysisInputError("--trials must be at least 1")
    job = place_job(routes, job_gpus, options.placement, options.seed)
    flows = flow_set(routes, gpu_pairs(job, options.pattern))
    lb = intent.load_balancing
    own = Scenario(
        key="intent",
        label="the intent's load balancing",
        hash_fields=frozenset(str(f) for f in lb.hash_fields),
        qps=options.qps or lb.qps_per_gpu_pair,
        ideal=lb.adaptive_routing or lb.packet_spraying,
    )
    scenarios = comparison_scenarios(own)
    model = EcmpModel(routes, flows, options.seed, max(s.qps for s in scenarios))
    # Scenarios are independent and numpy releases the GIL in the array work, so threads use every core the
    # process may run on. Each scenario seeds its own generators: results do not depend on the schedule.
    workers = max(1, min(len(scenarios), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda s: model.run(s, options.trials), scenarios))
    scope = _job_scope(routes, job)
    crosses = capacity.scopes[scope].crosses if scope in capacity.scopes else ()
    bound = allreduce_bound(scope, job.gpus, crosses, capacity.tiers, capacity.nic_gbps, options.message_bytes)
    policy, mask = kernel_policy_for(own.hash_fields)
    lab_platform = namespace_lab_platform().name  # once, not per device (a registry scan each: 40 ms at 100k GPUs)
    return EcmpAnalysis(
        job=job,
        scope=scope,
        pairs=flows.count,
        intra_pod_pairs=int(flows.intra.size),
        cross_pod_pairs=int(flows.cross.size),
        bound=bound,
        results=results,
        intent_key="intent",
        kernel={
            # The kernel line concerns switches that forward in Linux (the namespace lab's platform); a
            # fabric without one gets it in JSON only, for `netfab lab`, not in the overview.
            "fabric_has_kernel_switches": any(d.platform == lab_platform for d in plan.devices.values()),
            "fib_multipath_hash_policy": policy,
            "fib_multipath_hash_fields": f"0x{mask:04x}",
            "fields_the_kernel_cannot_hash": sorted(f for f in own.hash_fields if f not in KERNEL_FIELD_BITS),
        },
    )


def _job_scope(routes: FabricRoutes, job: Job) -> str:
    """The smallest scope holding the whole job: one leaf (clos3 rack), one SU/pod, or the fabric."""
    servers = job.servers
    rail = routes.style == "rail_optimized"
    if servers.size <= 1:
        return "su" if rail else "rack"
    if not rail and np.unique(routes.nic_leaf[servers]).size == 1:
        return "rack"
    if np.unique(routes.server_domain[servers]).size == 1:
        return "su" if rail else "pod"
    return "fabric"


def _ecmp_findings(ecmp: EcmpAnalysis, source_file: str, seed: int = 1) -> list[Finding]:
    own = ecmp.intent_result
    if own.tax.p99 <= TAIL_TAX_WARN:
        return []
    hint = "enable adaptive routing or packet spraying where the platform has it"
    if advice := _better_hashing(ecmp, seed):
        hint = f"{advice}; or {hint}"
    return [
        Finding(
            "ANALYZE001",
            Severity.WARNING,
            f"ECMP collisions cost a {ecmp.job.gpus}-GPU {own.scenario.qps}-QP job {own.tax.p99:.0%} of every "
            f"collective step at p99 (p50 {own.tax.p50:.0%}, max {own.tax.max:.0%}) over {own.trials} trials",
            Location(source_file),
            hint=hint,
            path="load_balancing",
        )
    ]


def _better_hashing(ecmp: EcmpAnalysis, seed: int) -> str:
    """The hashed alternative whose p99 gain over the intent is outside the noise, or ''.

    Two rules keep the advice honest. A scenario that hashes a subset of the intent's fields with the same
    QPs is never advised: dropping a field cannot add entropy, so any gain it shows is sampling noise. And a
    gain counts only when its 95 % interval (paired bootstrap over the common-random-number trials)
    excludes zero.
    """
    own = ecmp.intent_result
    best: tuple[float, str] | None = None
    for r in ecmp.results:
        s = r.scenario
        if s.key == "intent" or s.ideal or r.tax.p99 >= own.tax.p99:
            continue
        mine = own.scenario
        if s.qps == mine.qps and s.sport == mine.sport and s.hash_fields <= mine.hash_fields:
            continue
        gain, lo, hi = paired_quantile_gain(own.tax_samples, r.tax_samples, 99, seed)
        if lo <= 0:
            continue
        if best is None or gain > best[0]:
            best = (
                gain,
                f"{s.label} brings p99 to {r.tax.p99:.0%} ({gain:.0%} less, 95 % interval {lo:.0%}-{hi:.0%})",
            )
    return best[1] if best else ""


def _finding_dict(f: Finding) -> dict[str, Any]:
    return {
        "rule_id": f.rule_id,
        "status": f.status.value,
        "severity": f.severity.value,
        "message": f.message,
        "hint": f.hint,
        "path": f.path,
        "file": f.location.file,
    }
