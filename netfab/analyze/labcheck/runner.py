"""The check itself: set each hash configuration on the source leaf, send the batches, read the uplinks, and
hold each split against the model, the kernel-hash replica and the kernel's own `ip route get`."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from netfab.analyze.kernel_model import KernelFlow, uplink_split_forecast
from netfab.analyze.labcheck.endpoints import endpoints
from netfab.analyze.labcheck.findings import seed_notes
from netfab.analyze.labcheck.kernel_hash import kernel_multipath_hash, select_member
from netfab.analyze.labcheck.model import BatchResult, ConfigResult, LabCheck
from netfab.analyze.labcheck.node import (
    HASH_SYSCTLS,
    SEED_SYSCTL,
    Exec,
    LabNode,
    apply_hash_config,
    check_address,
    lab_exec,
    nexthop_order,
    restore_hash_sysctls,
    route_get,
)
from netfab.analyze.labcheck.options import Endpoint, HashConfig, LabCheckError, LabCheckOptions
from netfab.analyze.labcheck.stats import flows_from_bytes, quantile
from netfab.analyze.traffic import ETH_IP_UDP_OVERHEAD, FlowBatch, draw_sports, parse_sender_output, sender_argv
from netfab.design.plan import FabricPlan


@dataclass(frozen=True)
class _Setup:
    """What every batch of one check shares: the plan, the two nodes, the uplinks and the leaf's hash seed."""

    plan: FabricPlan
    options: LabCheckOptions
    src: Endpoint
    dst: Endpoint
    leaf: LabNode
    host: LabNode
    uplinks: list[str]
    order: list[str]
    """The uplinks in the kernel's next-hop order (hash-threshold walks them in this order)."""
    seed_value: int | None
    planned_seed: int


def run_lab_check(
    plan: FabricPlan,
    prefix: str,
    options: LabCheckOptions | None = None,
    *,
    intent_config: HashConfig | None = None,
    run: Exec | None = None,
    progress: Callable[[str], None] | None = None,
) -> LabCheck:
    """Send the flows under every configuration and compare; the leaf's hash sysctls are restored at the end.

    `plan` must be the lab's plan (the lab variant of the intent `netfab lab up` ran). `run` replaces the lab
    access (tests); `progress` gets one line per configuration.
    """
    options = options or LabCheckOptions()
    if problems := options.problems():
        raise LabCheckError("; ".join(problems))
    setup, before = _prepare(plan, options, run or lab_exec(prefix))
    if intent_config is None:
        intent_config = HashConfig(int(before[HASH_SYSCTLS[0]]), int(before[HASH_SYSCTLS[1]], 0))

    # The same port sets under every configuration: differences between configurations are then the hash
    # policy's, not the draw's (as the model's scenarios share their draws).
    rng = random.Random(options.seed)
    port_sets = [draw_sports(options.flows, rng) for _ in range(options.batches)]
    results: list[ConfigResult] = []
    try:
        for cfg in options.configs:
            results.append(_run_config(setup, cfg, port_sets, intent_config))
            if progress:
                progress(_progress_line(results[-1]))
    finally:
        after = restore_hash_sysctls(setup.leaf, before)
    return LabCheck(
        fabric=plan.name,
        prefix=prefix,
        src=setup.src,
        dst=setup.dst,
        uplinks=setup.uplinks,
        nexthop_order=setup.order,
        kernel_release=os.uname().release,  # namespaces share the kernel: this is the leaves' kernel too
        seed={
            "read": setup.seed_value,
            "plan": setup.planned_seed,
            "settable": setup.seed_value is not None,
            "replica_exact": bool(setup.seed_value),
        },
        options=options,
        intent_config=intent_config,
        configs=results,
        sysctls_before=before,
        sysctls_after=after,
        notes=seed_notes(setup.seed_value, setup.planned_seed, setup.src.leaf),
    )


def _prepare(plan: FabricPlan, options: LabCheckOptions, run: Exec) -> tuple[_Setup, dict[str, str]]:
    """Check that the lab is this fabric's and converged, and read the leaf's hash sysctls (to restore)."""
    src, dst = endpoints(plan, options.src, options.dst)
    leaf_plan = plan.devices[src.leaf]
    uplinks = [i.name for i in sorted(leaf_plan.interfaces_by_role("fabric_up"), key=lambda i: i.port)]
    leaf, host = LabNode(run, src.leaf), LabNode(run, src.host)
    check_address(host, src)
    order = nexthop_order(leaf, dst.ip)
    if sorted(order) != sorted(uplinks):
        raise LabCheckError(
            f"{src.leaf}: the route to {dst.ip} leaves over {', '.join(order) or 'nothing'}, not the planned "
            f"uplinks {', '.join(uplinks)} (is the lab converged, and from this intent?)"
        )
    before = leaf.read_sysctls([*HASH_SYSCTLS, SEED_SYSCTL])
    missing = [n for n in HASH_SYSCTLS if n not in before]
    if missing:
        raise LabCheckError(f"{src.leaf}: this kernel has no net.ipv4.{', '.join(missing)}")
    seed_value = int(before[SEED_SYSCTL]) if SEED_SYSCTL in before else None
    setup = _Setup(plan, options, src, dst, leaf, host, uplinks, order, seed_value, leaf_plan.hash_seed)
    return setup, before


def _run_config(
    setup: _Setup, cfg: HashConfig, port_sets: list[tuple[int, ...]], intent_config: HashConfig
) -> ConfigResult:
    apply_hash_config(setup.leaf, cfg)
    o = setup.options
    batches: list[BatchResult] = []
    samples: list[np.ndarray] = []
    for index, ports in enumerate(port_sets):
        batch = FlowBatch(
            setup.src.host,
            setup.src.ip,
            setup.dst.ip,
            ports,
            payload_bytes=o.payload_bytes,
            packets_per_flow=o.packets_per_flow,
            rate_pps=o.rate_pps,
        )
        result, forecast_samples = _run_batch(setup, batch, index, cfg)
        batches.append(result)
        samples.append(forecast_samples)
    pooled = np.concatenate(samples)
    return ConfigResult(
        config=cfg,
        intent=cfg.renders_like(intent_config),
        deterministic=bool(np.all(pooled == o.flows)),
        batches=batches,
        model_samples=pooled,
        flows=o.flows,
    )


def _progress_line(result: ConfigResult) -> str:
    s = result.summary()
    return (
        f"{result.config.label}: busiest {[b.busiest_flows for b in result.batches]} of {result.flows}, "
        f"{s['batches_in_band']}/{s['batches']} in band, {s['verdict']}"
    )


@dataclass(frozen=True)
class _Sent:
    datagrams: int
    errors: int
    elapsed_s: float
    tx_bytes: dict[str, int]
    tx_packets: dict[str, int]


def _send_and_count(setup: _Setup, batch: FlowBatch) -> _Sent:
    """Send one batch from the host and read what the leaf's uplinks carried meanwhile."""
    uplinks = setup.uplinks
    start = setup.leaf.counters(uplinks)
    budget = batch.packets_per_flow / batch.rate_pps + 30.0
    sent = parse_sender_output(setup.host.out(sender_argv(batch), timeout=budget), len(batch.sports))
    expected_packets = sum(sent.sent)
    # The sender returns once its last datagram is handed to the stack; forwarding finishes in softirq
    # moments later, so wait (briefly) until the uplinks have counted at least what was sent.
    deadline = time.monotonic() + 2.0
    while True:
        end = setup.leaf.counters(uplinks)
        counted = sum(end[i][1] - start[i][1] for i in uplinks)
        if counted >= expected_packets or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    return _Sent(
        datagrams=expected_packets,
        errors=sent.errors,
        elapsed_s=sent.elapsed_s,
        tx_bytes={i: end[i][0] - start[i][0] for i in uplinks},
        tx_packets={i: end[i][1] - start[i][1] for i in uplinks},
    )


def _run_batch(setup: _Setup, batch: FlowBatch, index: int, cfg: HashConfig) -> tuple[BatchResult, np.ndarray]:
    n = len(batch.sports)
    sent = _send_and_count(setup, batch)
    total = sum(sent.tx_bytes.values())
    if total <= 0:
        raise LabCheckError(
            f"{setup.src.leaf}: no bytes left over {', '.join(setup.uplinks)} (did the flows get through?)"
        )
    busiest_share = max(sent.tx_bytes.values()) / total
    busiest = round(busiest_share * n)
    flows = [KernelFlow(batch.src_ip, batch.dst_ip, src_port=p) for p in batch.sports]
    model, samples = _model_view(setup, flows, cfg, index, busiest)
    replica, kernel, agree = _replica_view(setup, batch, flows, cfg)
    result = BatchResult(
        index=index,
        sports=list(batch.sports),
        sent_datagrams=sent.datagrams,
        send_errors=sent.errors,
        elapsed_s=round(sent.elapsed_s, 3),
        uplink_bytes=sent.tx_bytes,
        uplink_packets=sent.tx_packets,
        other_bytes=total - sent.datagrams * (batch.payload_bytes + ETH_IP_UDP_OVERHEAD),
        measured_flows=flows_from_bytes(sent.tx_bytes, n),
        busiest_share=round(busiest_share, 4),
        busiest_flows=busiest,
        model=model,
        replica_flows=replica,
        kernel_flows=kernel,
        replica_vs_kernel=agree,
    )
    return result, samples


def _model_view(
    setup: _Setup, flows: list[KernelFlow], cfg: HashConfig, index: int, busiest: int
) -> tuple[dict[str, Any], np.ndarray]:
    """Where the measured busiest count sits in the model's forecast over hash seeds."""
    o = setup.options
    forecast = uplink_split_forecast(
        setup.plan, flows, cfg.policy, fields_mask=cfg.fields_mask, trials=o.forecast_trials, seed=o.seed + index
    )[setup.src.leaf]
    s = forecast.busiest_samples
    p1, p99 = quantile(s, 1), quantile(s, 99)
    model = {
        "distinct_keys": forecast.distinct_keys,
        "busiest_p1": p1,
        "busiest_p50": quantile(s, 50),
        "busiest_p99": p99,
        "busiest_mean": round(float(s.mean()), 3),
        # Mid-rank percentile: a discrete distribution puts much weight on single values.
        "percentile": round(100.0 * float(np.mean(s < busiest) + 0.5 * np.mean(s == busiest)), 1),
        "p_at_least": round(forecast.p_at_least(busiest), 4),
        "in_band": bool(p1 <= busiest <= p99),
    }
    return model, s


def _replica_view(
    setup: _Setup, batch: FlowBatch, flows: list[KernelFlow], cfg: HashConfig
) -> tuple[dict[str, int] | None, dict[str, int], int | None]:
    """Flows per uplink as the replica and as `ip route get` name them, and on how many flows they agree.
    The replica needs the leaf's hash key: without a (nonzero) seed it is off."""
    kernel_devs = route_get(setup.leaf, batch, setup.src.leaf_port)
    kernel = {i: kernel_devs.count(i) for i in setup.uplinks}
    if not setup.seed_value:
        return None, kernel, None
    weights = [1] * len(setup.order)
    replica_devs = [
        setup.order[select_member(kernel_multipath_hash(setup.seed_value, cfg.policy, cfg.fields_mask, f), weights)]
        for f in flows
    ]
    replica = {i: replica_devs.count(i) for i in setup.uplinks}
    agree = sum(a == b for a, b in zip(replica_devs, kernel_devs, strict=True))
    return replica, kernel, agree
