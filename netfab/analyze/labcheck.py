"""Validated against the lab: elephant flows through the namespace lab's kernel ECMP, held against the model.

For each kernel hash configuration the intent can render (fib_multipath_hash_policy 0, 1, and 3 with the
5-tuple or the addresses only), on the source leaf of one host pair: set the sysctls, send B batches of N UDP
flows (traffic.py, one source port per flow like a RoCE NIC per QP), read the leaf's uplink tx counters before
and after, and compare the split with three predictions:

- the model (kernel_model.uplink_split_forecast): the busiest uplink's flow count over hash seeds. Where the
  model has no entropy to spread (policy 0, or policy 3 with the addresses only: one hash key) it is
  deterministic and must match exactly; elsewhere the measured busiest count is placed within the forecast
  (mid-rank percentile, inside the [p1, p99] band or not); over the batches, the mean against the model's
  mean and the histogram against the model's (total variation distance, bootstrap p);
- a replica of the kernel's own hash: siphash-2-4 over `struct flow_keys` keyed by fib_multipath_hash_seed,
  then hash-threshold over the route's next hops in kernel order. With the seed set (kernel >= 6.11, nonzero)
  it predicts the exact per-uplink split; the model proper deliberately does not (it is a seed distribution);
- the kernel itself: `ip route get ... iif PORT ipproto udp sport P dport 4791` per flow, so a disagreement
  can be pinned on the traffic (measured != kernel) or on the replica (replica != kernel).

The leaf's hash sysctls are read first and written back at the end whatever happens (policy, fields; the seed
is only read).
"""

from __future__ import annotations

import json
import math
import os
import random
import socket
import struct
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from netfab.analyze.hashing import KERNEL_DEFAULT_FIELDS_MASK, UDP_PROTOCOL
from netfab.analyze.kernel_model import KernelFlow, uplink_split_forecast
from netfab.analyze.traffic import ETH_IP_UDP_OVERHEAD, FlowBatch, draw_sports, parse_sender_output, sender_argv
from netfab.core.findings import Finding, Location, Severity
from netfab.design.plan import FabricPlan, NicPlan

DETERMINISTIC_MIN_SHARE = 0.95
"""Where the model puts every flow on one uplink, the lab must carry at least this share of the bytes there."""
BAND_OUTSIDE_RATE = 0.02
"""At most this share of batches falls outside a forecast's [p1, p99] band when lab and model agree."""
DISAGREE_P = 0.01
"""A configuration disagrees when that many out-of-band batches would happen by chance with p below this."""
SYSCTL_DIR = "/proc/sys/net/ipv4"
HASH_SYSCTLS = ("fib_multipath_hash_policy", "fib_multipath_hash_fields")
SEED_SYSCTL = "fib_multipath_hash_seed"


class LabCheckError(RuntimeError):
    """The lab cannot be used for the check (not up, not converged, not this fabric, a command failed)."""


@dataclass(frozen=True)
class HashConfig:
    """One kernel ECMP hash configuration; `fields_mask` is read by policy 3 only."""

    policy: int
    fields_mask: int = KERNEL_DEFAULT_FIELDS_MASK

    @property
    def key(self) -> str:
        return f"policy{self.policy}" + (f"-0x{self.fields_mask:04x}" if self.policy == 3 else "")

    @property
    def label(self) -> str:
        if self.policy == 0:
            return "policy 0 (L3)"
        if self.policy == 1:
            return "policy 1 (L4 5-tuple)"
        if self.policy == 2:
            return "policy 2 (L3 or inner L3)"
        named = {0x0037: "5-tuple", 0x0003: "addresses"}.get(self.fields_mask, "custom")
        return f"policy 3 0x{self.fields_mask:04x} ({named})"


DEFAULT_CONFIGS: tuple[HashConfig, ...] = (
    HashConfig(0),
    HashConfig(1),
    HashConfig(3, 0x0037),
    HashConfig(3, 0x0003),
)
"""What netfab's frr templates can render (hashing.kernel_policy_for): built-in 0 and 1, else policy 3."""


@dataclass(frozen=True)
class LabCheckOptions:
    flows: int = 16
    batches: int = 5
    packets_per_flow: int = 200
    payload_bytes: int = 1200
    rate_pps: float = 2000.0
    """Datagrams per second per flow: fixed, so every flow carries the same bytes over the same time."""
    seed: int = 1
    """Seeds the source-port draws and the forecasts: same seed, same ports."""
    forecast_trials: int = 2000
    configs: tuple[HashConfig, ...] = DEFAULT_CONFIGS
    src: str | None = None
    """`host:nic` (default: the first server's first NIC)."""
    dst: str | None = None
    """`host:nic` (default: the first NIC on another leaf, same NIC name preferred)."""

    def problems(self) -> list[str]:
        out = []
        if not 1 <= self.flows <= 4096:
            out.append(f"flows {self.flows}: must be 1-4096 (distinct source ports from 49152-65535)")
        if self.batches < 1:
            out.append("batches must be at least 1")
        if self.packets_per_flow < 1 or not 1 <= self.payload_bytes <= 8000:
            out.append("packets per flow >= 1 and payload 1-8000 bytes (below the lab's 9216 MTU)")
        if self.rate_pps <= 0:
            out.append("rate must be positive")
        return out


@dataclass(frozen=True)
class Endpoint:
    host: str
    nic: str
    ip: str
    leaf: str
    leaf_port: str


@dataclass
class BatchResult:
    index: int
    sports: list[int]
    sent_datagrams: int
    send_errors: int
    elapsed_s: float
    uplink_bytes: dict[str, int]
    uplink_packets: dict[str, int]
    other_bytes: int
    """Uplink bytes beyond what the sender put on the wire (BGP keepalives; negative = datagrams lost)."""
    measured_flows: dict[str, int]
    busiest_share: float
    busiest_flows: int
    model: dict[str, Any]
    replica_flows: dict[str, int] | None
    kernel_flows: dict[str, int] | None
    replica_vs_kernel: int | None
    """Flows for which the replica names the same uplink as `ip route get`."""

    @property
    def exact(self) -> bool | None:
        return None if self.replica_flows is None else self.replica_flows == self.measured_flows


@dataclass
class ConfigResult:
    config: HashConfig
    intent: bool
    deterministic: bool
    """The model gives one split for every seed (all flows hash alike): lab and model must agree exactly."""
    batches: list[BatchResult]
    model_samples: np.ndarray = field(repr=False)
    """Busiest-uplink flow counts the forecasts drew, all batches pooled."""
    flows: int = 0

    @property
    def in_band(self) -> int:
        return sum(bool(b.model["in_band"]) for b in self.batches)

    @property
    def p_value(self) -> float:
        """How likely this many out-of-band batches are by chance when lab and model agree (binomial tail)."""
        n, k = len(self.batches), len(self.batches) - self.in_band
        q = BAND_OUTSIDE_RATE
        return float(sum(math.comb(n, i) * q**i * (1 - q) ** (n - i) for i in range(k, n + 1)))

    @property
    def agrees(self) -> bool:
        if self.deterministic:
            return all(b.busiest_share >= DETERMINISTIC_MIN_SHARE for b in self.batches)
        return self.p_value >= DISAGREE_P

    def summary(self) -> dict[str, Any]:
        n = self.flows
        busiest = np.array([b.busiest_flows for b in self.batches], dtype=np.int64)
        shares = np.array([b.busiest_share for b in self.batches])
        model = self.model_samples
        std = float(model.std())
        # The batch mean against the model's mean, in standard errors of a mean of this many batches.
        z = (busiest.mean() - model.mean()) / (std / math.sqrt(busiest.size)) if std > 0 else 0.0
        tvd, tvd_p = _tvd_test(busiest, model, n)
        replica = [b.exact for b in self.batches if b.exact is not None]
        kernel = [b.replica_vs_kernel for b in self.batches if b.replica_vs_kernel is not None]
        return {
            "measured_busiest_share": {
                "mean": round(float(shares.mean()), 4),
                "min": round(float(shares.min()), 4),
                "max": round(float(shares.max()), 4),
            },
            "measured_busiest_flows": {
                "p50": _quantile(busiest, 50),
                "p90": _quantile(busiest, 90),
                "max": int(busiest.max()),
                "mean": round(float(busiest.mean()), 3),
            },
            "model_busiest_flows": {
                "p1": _quantile(model, 1),
                "p50": _quantile(model, 50),
                "p90": _quantile(model, 90),
                "p99": _quantile(model, 99),
                "mean": round(float(model.mean()), 3),
            },
            "model_busiest_share_mean": round(float(model.mean()) / n, 4),
            "mean_difference": round(float(shares.mean() - model.mean() / n), 4),
            "z_batch_mean": round(float(z), 2),
            "tvd": round(tvd, 4),
            "tvd_p": round(tvd_p, 3),
            "batches_in_band": self.in_band,
            "batches": len(self.batches),
            "p_value": round(self.p_value, 4),
            "replica_exact_batches": sum(replica) if replica else None,
            "replica_batches": len(replica) if replica else None,
            "replica_vs_kernel_flows": sum(kernel) if kernel else None,
            "kernel_flows_checked": n * len(kernel) if kernel else None,
            "verdict": "agrees" if self.agrees else "disagrees",
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "policy": self.config.policy,
            "fields_mask": f"0x{self.config.fields_mask:04x}" if self.config.policy == 3 else None,
            "label": self.config.label,
            "intent": self.intent,
            "deterministic": self.deterministic,
            "summary": self.summary(),
            "batches": [{**asdict(b), "exact": b.exact} for b in self.batches],
        }


@dataclass
class LabCheck:
    fabric: str
    prefix: str
    src: Endpoint
    dst: Endpoint
    uplinks: list[str]
    nexthop_order: list[str]
    kernel_release: str
    seed: dict[str, Any]
    options: LabCheckOptions
    intent_config: HashConfig
    configs: list[ConfigResult]
    sysctls_before: dict[str, str]
    sysctls_after: dict[str, str]
    notes: list[str] = field(default_factory=list)

    @property
    def restored(self) -> bool:
        return all(self.sysctls_after.get(k) == v for k, v in self.sysctls_before.items())

    def as_dict(self) -> dict[str, Any]:
        o = self.options
        return {
            "fabric": self.fabric,
            "lab_prefix": self.prefix,
            "src": asdict(self.src),
            "dst": asdict(self.dst),
            "leaf": self.src.leaf,
            "uplinks": self.uplinks,
            "nexthop_order": self.nexthop_order,
            "kernel_release": self.kernel_release,
            "hash_seed": self.seed,
            "parameters": {
                "flows": o.flows,
                "batches": o.batches,
                "packets_per_flow": o.packets_per_flow,
                "payload_bytes": o.payload_bytes,
                "wire_bytes_per_datagram": o.payload_bytes + ETH_IP_UDP_OVERHEAD,
                "rate_pps_per_flow": o.rate_pps,
                "seed": o.seed,
                "forecast_trials": o.forecast_trials,
            },
            "intent_hash": {
                "policy": self.intent_config.policy,
                "fields_mask": f"0x{self.intent_config.fields_mask:04x}",
            },
            "configs": [c.as_dict() for c in self.configs],
            "sysctls": {"before": self.sysctls_before, "after": self.sysctls_after, "restored": self.restored},
            "summary": self.summary(),
            "notes": self.notes,
        }

    def summary(self) -> dict[str, Any]:
        spread = [c for c in self.configs if not c.deterministic]
        det = [c for c in self.configs if c.deterministic]
        out: dict[str, Any] = {
            "configs_agreeing": sum(c.agrees for c in self.configs),
            "configs": len(self.configs),
            "deterministic_batches_exact": sum(
                b.busiest_share >= DETERMINISTIC_MIN_SHARE for c in det for b in c.batches
            ),
            "deterministic_batches": sum(len(c.batches) for c in det),
            "spread_batches_in_band": sum(c.in_band for c in spread),
            "spread_batches": sum(len(c.batches) for c in spread),
        }
        if spread:
            measured = [b.busiest_share for c in spread for b in c.batches]
            model = [float(c.model_samples.mean()) / c.flows for c in spread]
            out["spread_mean_busiest_share"] = {
                "measured": round(float(np.mean(measured)), 4),
                "model": round(float(np.mean(model)), 4),
            }
        exact = [b.exact for c in self.configs for b in c.batches if b.exact is not None]
        kernel = [b.replica_vs_kernel for c in self.configs for b in c.batches if b.replica_vs_kernel is not None]
        out["replica_exact_batches"] = sum(exact) if exact else None
        out["replica_batches"] = len(exact) if exact else None
        out["replica_vs_kernel_flows"] = sum(kernel) if kernel else None
        out["kernel_flows_checked"] = len(kernel) * self.options.flows if kernel else None
        out["agrees"] = all(c.agrees for c in self.configs)
        return out


# --- talking to the lab ---------------------------------------------------------------------------------

Exec = Callable[[str, list[str], str | None, float], tuple[int, str, str]]
"""(node, argv, stdin, timeout) -> (returncode, stdout, stderr), run inside the node's namespace."""


def lab_exec(prefix: str) -> Exec:
    from netfab.lab import LabError
    from netfab.lab import exec as run_in

    def run(node: str, argv: list[str], stdin: str | None, timeout: float) -> tuple[int, str, str]:
        try:
            proc = run_in(prefix, node, argv, input=stdin, timeout=timeout)
        except LabError as exc:
            raise LabCheckError(str(exc)) from None
        return proc.returncode, proc.stdout, proc.stderr

    return run


class _Node:
    def __init__(self, run: Exec, name: str) -> None:
        self.run, self.name = run, name

    def out(self, argv: list[str], stdin: str | None = None, timeout: float = 30.0) -> str:
        rc, out, err = self.run(self.name, argv, stdin, timeout)
        if rc != 0:
            raise LabCheckError(f"{self.name}: {' '.join(argv[:4])}... failed (rc {rc}): {err.strip()[:300]}")
        return out

    def read_sysctls(self, names: Sequence[str]) -> dict[str, str]:
        # One `cat` per name: a knob this kernel lacks (the seed before 6.11) must not hide the others.
        script = 'for f in "$@"; do if [ -e "$f" ]; then cat "$f"; else echo -; fi; done'
        out = self.out(["sh", "-c", script, "sh", *(f"{SYSCTL_DIR}/{n}" for n in names)]).split()
        return {n: v for n, v in zip(names, out, strict=True) if v != "-"}

    def write_sysctl(self, name: str, value: str) -> None:
        self.out(["sh", "-c", 'printf "%s\\n" "$1" > "$2"', "sh", value, f"{SYSCTL_DIR}/{name}"])

    def counters(self, ifnames: Sequence[str]) -> dict[str, tuple[int, int]]:
        paths = [f"/sys/class/net/{i}/statistics/{c}" for i in ifnames for c in ("tx_bytes", "tx_packets")]
        values = [int(v) for v in self.out(["cat", *paths]).split()]
        return {i: (values[2 * k], values[2 * k + 1]) for k, i in enumerate(ifnames)}


# --- the check ------------------------------------------------------------------------------------------


def endpoints(plan: FabricPlan, src: str | None = None, dst: str | None = None) -> tuple[Endpoint, Endpoint]:
    """The source and destination NICs: given as host:nic, or the first server's first NIC and the first NIC
    on another leaf (same NIC name preferred, so the host's rail route carries it)."""
    nics = [(s.name, n) for s in plan.servers for n in s.nics]

    def find(spec: str) -> tuple[str, NicPlan]:
        host, _, nic = spec.partition(":")
        for h, n in nics:
            if h == host and (n.netdev == nic or (not nic and n.index == 0)):
                return h, n
        raise LabCheckError(f"{spec}: no such host:nic in fabric {plan.name}")

    if not nics:
        raise LabCheckError(f"fabric {plan.name} has no servers")
    s_host, s_nic = find(src) if src else nics[0]
    if dst:
        d_host, d_nic = find(dst)
    else:
        remote = [(h, n) for h, n in nics if n.leaf != s_nic.leaf]
        if not remote:
            raise LabCheckError(f"fabric {plan.name}: every NIC hangs off {s_nic.leaf}; no flow crosses an uplink")
        d_host, d_nic = next(((h, n) for h, n in remote if n.netdev == s_nic.netdev), remote[0])
    if s_nic.leaf == d_nic.leaf:
        raise LabCheckError(f"{s_host}:{s_nic.netdev} and {d_host}:{d_nic.netdev} share {s_nic.leaf}: no uplink")

    def ep(h: str, n: NicPlan) -> Endpoint:
        return Endpoint(h, n.netdev, n.address.split("/", 1)[0], n.leaf, n.leaf_port)

    return ep(s_host, s_nic), ep(d_host, d_nic)


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
    run = run or lab_exec(prefix)
    src, dst = endpoints(plan, options.src, options.dst)
    leaf_plan = plan.devices[src.leaf]
    uplinks = [i.name for i in sorted(leaf_plan.interfaces_by_role("fabric_up"), key=lambda i: i.port)]
    leaf, host = _Node(run, src.leaf), _Node(run, src.host)
    _check_address(host, src)
    order = _nexthop_order(leaf, dst.ip)
    if sorted(order) != sorted(uplinks):
        raise LabCheckError(
            f"{src.leaf}: the route to {dst.ip} leaves over {', '.join(order) or 'nothing'}, not the planned "
            f"uplinks {', '.join(uplinks)} (is the lab converged, and from this intent?)"
        )
    watched = [*HASH_SYSCTLS, SEED_SYSCTL]
    before = leaf.read_sysctls(watched)
    missing = [n for n in HASH_SYSCTLS if n not in before]
    if missing:
        raise LabCheckError(f"{src.leaf}: this kernel has no net.ipv4.{', '.join(missing)}")
    seed_value = int(before[SEED_SYSCTL]) if SEED_SYSCTL in before else None
    notes = _seed_notes(seed_value, leaf_plan.hash_seed, src.leaf)
    if intent_config is None:
        intent_config = HashConfig(int(before[HASH_SYSCTLS[0]]), int(before[HASH_SYSCTLS[1]], 0))

    # The same port sets under every configuration: differences between configurations are then the hash
    # policy's, not the draw's (as the model's scenarios share their draws).
    rng = random.Random(options.seed)
    port_sets = [draw_sports(options.flows, rng) for _ in range(options.batches)]
    results: list[ConfigResult] = []
    try:
        for cfg in options.configs:
            _apply(leaf, cfg)
            batches: list[BatchResult] = []
            samples: list[np.ndarray] = []
            for b, ports in enumerate(port_sets):
                batch = FlowBatch(
                    src.host,
                    src.ip,
                    dst.ip,
                    ports,
                    payload_bytes=options.payload_bytes,
                    packets_per_flow=options.packets_per_flow,
                    rate_pps=options.rate_pps,
                )
                result, forecast_samples = _run_batch(
                    plan, leaf, host, batch, b, cfg, uplinks, order, src, seed_value, options
                )
                batches.append(result)
                samples.append(forecast_samples)
            pooled = np.concatenate(samples)
            results.append(
                ConfigResult(
                    config=cfg,
                    intent=_same_hash(cfg, intent_config),
                    deterministic=bool(np.all(pooled == options.flows)),
                    batches=batches,
                    model_samples=pooled,
                    flows=options.flows,
                )
            )
            if progress:
                s = results[-1].summary()
                progress(
                    f"{cfg.label}: busiest {[b.busiest_flows for b in batches]} of {options.flows}, "
                    f"{s['batches_in_band']}/{s['batches']} in band, {s['verdict']}"
                )
    finally:
        after = _restore(leaf, before)
    return LabCheck(
        fabric=plan.name,
        prefix=prefix,
        src=src,
        dst=dst,
        uplinks=uplinks,
        nexthop_order=order,
        kernel_release=os.uname().release,  # namespaces share the kernel: this is the leaves' kernel too
        seed={
            "read": seed_value,
            "plan": leaf_plan.hash_seed,
            "settable": seed_value is not None,
            "replica_exact": bool(seed_value),
        },
        options=options,
        intent_config=intent_config,
        configs=results,
        sysctls_before=before,
        sysctls_after=after,
        notes=notes,
    )


def _run_batch(
    plan: FabricPlan,
    leaf: _Node,
    host: _Node,
    batch: FlowBatch,
    index: int,
    cfg: HashConfig,
    uplinks: list[str],
    order: list[str],
    src: Endpoint,
    seed_value: int | None,
    options: LabCheckOptions,
) -> tuple[BatchResult, np.ndarray]:
    n = len(batch.sports)
    start = leaf.counters(uplinks)
    budget = batch.packets_per_flow / batch.rate_pps + 30.0
    sent = parse_sender_output(host.out(sender_argv(batch), timeout=budget), n)
    expected_packets = sum(sent.sent)
    # The sender returns once its last datagram is handed to the stack; forwarding finishes in softirq
    # moments later, so wait (briefly) until the uplinks have counted at least what was sent.
    deadline = time.monotonic() + 2.0
    while True:
        end = leaf.counters(uplinks)
        counted = sum(end[i][1] - start[i][1] for i in uplinks)
        if counted >= expected_packets or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    tx_bytes = {i: end[i][0] - start[i][0] for i in uplinks}
    tx_packets = {i: end[i][1] - start[i][1] for i in uplinks}
    total = sum(tx_bytes.values())
    if total <= 0:
        raise LabCheckError(f"{src.leaf}: no bytes left over {', '.join(uplinks)} (did the flows get through?)")
    measured = _flows_from_bytes(tx_bytes, n)
    busiest_share = max(tx_bytes.values()) / total
    busiest = round(busiest_share * n)

    flows = [KernelFlow(batch.src_ip, batch.dst_ip, src_port=p) for p in batch.sports]
    forecast = uplink_split_forecast(
        plan, flows, cfg.policy, fields_mask=cfg.fields_mask, trials=options.forecast_trials, seed=options.seed + index
    )[src.leaf]
    s = forecast.busiest_samples
    p1, p99 = _quantile(s, 1), _quantile(s, 99)
    model = {
        "distinct_keys": forecast.distinct_keys,
        "busiest_p1": p1,
        "busiest_p50": _quantile(s, 50),
        "busiest_p99": p99,
        "busiest_mean": round(float(s.mean()), 3),
        # Mid-rank percentile: a discrete distribution puts much weight on single values.
        "percentile": round(100.0 * float(np.mean(s < busiest) + 0.5 * np.mean(s == busiest)), 1),
        "p_at_least": round(forecast.p_at_least(busiest), 4),
        "in_band": bool(p1 <= busiest <= p99),
    }

    replica = kernel = agree = None
    kernel_devs = _route_get(leaf, batch, src.leaf_port)
    kernel = {i: kernel_devs.count(i) for i in uplinks}
    if seed_value:
        weights = [1] * len(order)
        replica_devs = [
            order[select_member(kernel_multipath_hash(seed_value, cfg.policy, cfg.fields_mask, f), weights)]
            for f in flows
        ]
        replica = {i: replica_devs.count(i) for i in uplinks}
        agree = sum(a == b for a, b in zip(replica_devs, kernel_devs, strict=True))
    result = BatchResult(
        index=index,
        sports=list(batch.sports),
        sent_datagrams=expected_packets,
        send_errors=sent.errors,
        elapsed_s=round(sent.elapsed_s, 3),
        uplink_bytes=tx_bytes,
        uplink_packets=tx_packets,
        other_bytes=total - expected_packets * (batch.payload_bytes + ETH_IP_UDP_OVERHEAD),
        measured_flows=measured,
        busiest_share=round(busiest_share, 4),
        busiest_flows=busiest,
        model=model,
        replica_flows=replica,
        kernel_flows=kernel,
        replica_vs_kernel=agree,
    )
    return result, s


def _flows_from_bytes(tx_bytes: dict[str, int], flows: int) -> dict[str, int]:
    """Flows per uplink from its share of the bytes (every flow sends the same), by largest remainder so the
    counts add up to the flows sent."""
    total = sum(tx_bytes.values())
    raw = {i: flows * b / total for i, b in tx_bytes.items()}
    out = {i: math.floor(v) for i, v in raw.items()}
    for i in sorted(raw, key=lambda i: raw[i] - out[i], reverse=True)[: flows - sum(out.values())]:
        out[i] += 1
    return out


def _tvd_test(measured: np.ndarray, model: np.ndarray, flows: int, reps: int = 1000) -> tuple[float, float]:
    """Total variation distance between the measured busiest-count histogram and the model's, and how often
    `measured.size` draws from the model itself land at least that far (a parametric bootstrap p-value: a few
    batches are far from any distribution by sampling noise alone). Seeded: same inputs, same numbers."""
    pmf = np.bincount(model, minlength=flows + 1) / model.size

    def distance(x: np.ndarray) -> np.ndarray:
        hist = np.apply_along_axis(np.bincount, -1, x, minlength=flows + 1) / x.shape[-1]
        return 0.5 * np.abs(hist - pmf).sum(axis=-1)

    observed = float(distance(measured))
    draws = np.random.default_rng(0).choice(model, size=(reps, measured.size))
    return observed, float(np.mean(distance(draws) >= observed - 1e-12))


def _quantile(samples: np.ndarray, q: float) -> int:
    return int(np.percentile(samples, q, method="inverted_cdf")) if samples.size else 0


def _same_hash(a: HashConfig, b: HashConfig) -> bool:
    if a.policy != b.policy:
        return False
    return a.policy != 3 or a.fields_mask == b.fields_mask


def _apply(leaf: _Node, cfg: HashConfig) -> None:
    # Fields first: policy 3 never runs with a stale mask. Policies 0-2 ignore the mask, so it stays as found.
    if cfg.policy == 3:
        leaf.write_sysctl("fib_multipath_hash_fields", f"0x{cfg.fields_mask:04x}")
    leaf.write_sysctl("fib_multipath_hash_policy", str(cfg.policy))


def _restore(leaf: _Node, before: dict[str, str]) -> dict[str, str]:
    for name in ("fib_multipath_hash_fields", "fib_multipath_hash_policy"):
        # A failed write shows below: the value read back differs and the check says "not restored".
        with suppress(LabCheckError):
            leaf.write_sysctl(name, before[name])
    try:
        return leaf.read_sysctls([*HASH_SYSCTLS, SEED_SYSCTL])
    except LabCheckError:
        return {}


def _check_address(host: _Node, ep: Endpoint) -> None:
    out = host.out(["ip", "-j", "-4", "addr", "show", "dev", ep.nic])
    have = {a.get("local") for link in json.loads(out or "[]") for a in link.get("addr_info", [])}
    if ep.ip not in have:
        raise LabCheckError(
            f"{ep.host}:{ep.nic} has {', '.join(sorted(filter(None, have))) or 'no address'}, the plan says "
            f"{ep.ip}: the lab was brought up from another intent"
        )


def _nexthop_order(leaf: _Node, dst_ip: str) -> list[str]:
    """The uplinks of the route to dst_ip in the kernel's next-hop order (hash-threshold walks them in order)."""
    routes = json.loads(leaf.out(["ip", "-j", "route", "show", "match", dst_ip]) or "[]")
    best: dict[str, Any] | None = None
    for r in routes:
        plen = 0 if r.get("dst") == "default" else int(str(r.get("dst", "0/32")).partition("/")[2] or 32)
        if best is None or plen >= best["plen"]:
            best = {"plen": plen, "route": r}
    if best is None:
        return []
    r = best["route"]
    if "nexthops" in r:
        return [nh["dev"] for nh in r["nexthops"]]
    return [r["dev"]] if "dev" in r else []


def _route_get(leaf: _Node, batch: FlowBatch, iif: str) -> list[str]:
    """The kernel's own choice per flow: `ip route get` builds a packet with these headers and routes it as
    input on the host port, through the same fib_multipath_hash as forwarded traffic."""
    lines = "".join(
        f"route get {batch.dst_ip} from {batch.src_ip} iif {iif} ipproto udp sport {p} dport {batch.dst_port}\n"
        for p in batch.sports
    )
    out = leaf.out(["ip", "-o", "-b", "-"], stdin=lines)
    devs = [ln.split(" dev ", 1)[1].split()[0] for ln in out.splitlines() if " dev " in ln]
    if len(devs) != len(batch.sports):
        raise LabCheckError(f"{leaf.name}: ip route get answered {len(devs)} of {len(batch.sports)} flows")
    return devs


def _seed_notes(seed: int | None, planned: int, leaf: str) -> list[str]:
    if seed is None:
        return [
            f"{leaf}: this kernel has no fib_multipath_hash_seed (< 6.11): its hash key is random per boot, so only "
            "the distribution can be compared; the kernel-hash replica is off"
        ]
    if seed == 0:
        return [
            f"{leaf}: fib_multipath_hash_seed is 0 (a random key): only the distribution can be compared; "
            "the kernel-hash replica is off"
        ]
    if seed != planned:
        return [f"{leaf}: runs hash seed {seed}, the plan says {planned} (the leaf's script did not set it)"]
    return []


# --- the kernel's multipath hash, replicated -------------------------------------------------------------
# net/ipv4/route.c fib_multipath_hash() on a forwarded IPv4 packet, kernel >= 6.11 with the seed set:
#   policy 0: addresses; policy 1: 5-tuple; policy 3: the fields_mask fields, then jhash_2words(outer, 0, 0)
#   (fib_multipath_custom_hash_skb always folds in an inner hash, 0 without encapsulation).
# Each hash is flow_hash_from_keys_seed(): zero a struct flow_keys, fill the hashed fields (addr_type IPv4),
# order addresses and ports so both directions hash alike (__flow_hash_consistentify), and siphash-2-4 the
# bytes from `basic` on (48 of them with IPv4 addresses) under the key (seed << 32 | seed) twice. The result
# (0 -> 1) is shifted right by one: a 31-bit hash that fib_select_multipath / nexthop_select_path compares
# with each next hop's upper bound in order. Checked against `ip route get` on 6.18 for all four policies.
# Policy 1 on a packet that carries an skb->hash (l4_hash; e.g. from a connected socket's sk_txhash) uses that
# instead: the flow generator sends from unconnected sockets so the headers are what is hashed.

_M64 = (1 << 64) - 1
_M32 = 0xFFFFFFFF
_FLOW_KEYS_HASH_BYTES = 48
_OFF_PROTO, _OFF_PORTS, _OFF_ADDRS = 2, 28, 36
"""Offsets from flow_keys.basic: basic.ip_proto, ports (src, dst), addrs.v4addrs (src, dst)."""


def _rotl64(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & _M64


def siphash24(k0: int, k1: int, data: bytes) -> int:
    """SipHash-2-4 (lib/siphash.c) of data under the 128-bit key (k0, k1), as a 64-bit integer."""
    v0, v1 = k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D
    v2, v3 = k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573

    def rounds(n: int) -> None:
        nonlocal v0, v1, v2, v3
        for _ in range(n):
            v0 = (v0 + v1) & _M64
            v1 = _rotl64(v1, 13) ^ v0
            v0 = _rotl64(v0, 32)
            v2 = (v2 + v3) & _M64
            v3 = _rotl64(v3, 16) ^ v2
            v0 = (v0 + v3) & _M64
            v3 = _rotl64(v3, 21) ^ v0
            v2 = (v2 + v1) & _M64
            v1 = _rotl64(v1, 17) ^ v2
            v2 = _rotl64(v2, 32)

    full = len(data) - len(data) % 8
    for i in range(0, full, 8):
        m = int.from_bytes(data[i : i + 8], "little")
        v3 ^= m
        rounds(2)
        v0 ^= m
    b = ((len(data) & 0xFF) << 56) | int.from_bytes(data[full:], "little")
    v3 ^= b
    rounds(2)
    v0 ^= b
    v2 ^= 0xFF
    rounds(4)
    return v0 ^ v1 ^ v2 ^ v3


def _rol32(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _M32


def jhash_2words(a: int, b: int, initval: int) -> int:
    """include/linux/jhash.h jhash_2words (__jhash_nwords + __jhash_final)."""
    iv = (initval + 0xDEADBEEF + (2 << 2)) & _M32
    a, b, c = (a + iv) & _M32, (b + iv) & _M32, iv
    c ^= b
    c = (c - _rol32(b, 14)) & _M32
    a ^= c
    a = (a - _rol32(c, 11)) & _M32
    b ^= a
    b = (b - _rol32(a, 25)) & _M32
    c ^= b
    c = (c - _rol32(b, 16)) & _M32
    a ^= c
    a = (a - _rol32(c, 4)) & _M32
    b ^= a
    b = (b - _rol32(a, 14)) & _M32
    c ^= b
    c = (c - _rol32(b, 24)) & _M32
    return c


def kernel_multipath_hash(seed: int, policy: int, fields_mask: int, flow: KernelFlow) -> int:
    """The 31-bit hash the kernel's fib_multipath_hash gives a forwarded IPv4 packet of `flow`."""
    if policy in (0, 2):  # 2 = L3 or inner L3: plain UDP has no inner header
        mask = 0x0003
    elif policy == 1:
        mask = 0x0037
    elif policy == 3:
        mask = fields_mask
    else:
        raise ValueError(f"fib_multipath_hash_policy {policy} is not 0-3")
    if policy == 3 and not mask & 0x0037:
        outer = 0  # fib_multipath_custom_hash_outer: no outer field selected
    else:
        src = socket.inet_aton(flow.src_ip) if mask & 0x0001 else bytes(4)
        dst = socket.inet_aton(flow.dst_ip) if mask & 0x0002 else bytes(4)
        sport = struct.pack(">H", flow.src_port) if mask & 0x0010 else bytes(2)
        dport = struct.pack(">H", flow.dst_port) if mask & 0x0020 else bytes(2)
        # __flow_hash_consistentify compares the raw network-order words as host (little-endian) integers.
        if int.from_bytes(dst, "little") < int.from_bytes(src, "little"):
            src, dst = dst, src
        if int.from_bytes(dport, "little") < int.from_bytes(sport, "little"):
            sport, dport = dport, sport
        keys = bytearray(_FLOW_KEYS_HASH_BYTES)
        if mask & 0x0004:
            keys[_OFF_PROTO] = flow.protocol or UDP_PROTOCOL
        keys[_OFF_PORTS : _OFF_PORTS + 4] = sport + dport
        keys[_OFF_ADDRS : _OFF_ADDRS + 8] = src + dst
        key = ((seed & _M32) << 32) | (seed & _M32)
        outer = (siphash24(key, key, bytes(keys)) & _M32) or 1
    h = jhash_2words(outer, 0, 0) if policy == 3 else outer
    return h >> 1


def select_member(hash31: int, weights: Sequence[int]) -> int:
    """Hash-threshold next-hop selection: the first member whose upper bound the hash does not exceed
    (upper bound = round(cumulative weight * 2**31 / total) - 1, as nh_hthr_group_rebalance sets it)."""
    total = sum(weights)
    cum = 0
    for i, w in enumerate(weights):
        cum += w
        if hash31 <= ((cum << 31) + total // 2) // total - 1:
            return i
    return len(weights) - 1


# --- findings and rendering -----------------------------------------------------------------------------


def lab_findings(check: LabCheck, source_file: str) -> list[Finding]:
    findings = []
    for c in check.configs:
        s = c.summary()
        if not c.agrees:
            if c.deterministic:
                msg = (
                    f"lab {check.prefix}: {c.config.label} spread flows the model says cannot be told apart: "
                    f"busiest uplink {s['measured_busiest_share']['min']:.0%} of the bytes at least, expected "
                    f">= {DETERMINISTIC_MIN_SHARE:.0%}"
                )
            else:
                msg = (
                    f"lab {check.prefix}: {c.config.label}: {s['batches'] - s['batches_in_band']} of {s['batches']} "
                    f"batches outside the model's [p1, p99] band (p = {s['p_value']:.3g} by chance)"
                )
            findings.append(
                Finding(
                    "ANALYZE003",
                    Severity.ERROR,
                    msg,
                    Location(source_file),
                    hint="check that the leaf runs the policy the check set, and that nothing else sends over "
                    "its uplinks; then the kernel model is wrong",
                    path="load_balancing.hash_fields",
                )
            )
        if s["replica_batches"] and s["replica_exact_batches"] != s["replica_batches"]:
            findings.append(
                Finding(
                    "ANALYZE004",
                    Severity.WARNING,
                    f"lab {check.prefix}: {c.config.label}: the kernel-hash replica predicted the measured split "
                    f"in {s['replica_exact_batches']} of {s['replica_batches']} batches "
                    f"({s['replica_vs_kernel_flows']}/{s['kernel_flows_checked']} flows as `ip route get`)",
                    Location(source_file),
                    hint="replica != ip route get: this kernel hashes differently; ip route get != measured: "
                    "the traffic did not go where the kernel routes it (skb hash from the sender?)",
                    path="load_balancing.hash_fields",
                )
            )
    if not check.restored:
        findings.append(
            Finding(
                "ANALYZE005",
                Severity.ERROR,
                f"lab {check.prefix}: {check.src.leaf}'s hash sysctls were not restored: before "
                f"{check.sysctls_before}, now {check.sysctls_after or 'unreadable'}",
                Location(source_file),
                hint=f"re-run the leaf's rendered script, or netfab lab down/up --prefix {check.prefix}",
            )
        )
    return findings


def render_lab_text(doc: dict[str, Any]) -> str:
    """The text report of a lab check (`LabCheck.as_dict()`); formats the dict only."""
    p = doc["parameters"]
    src, dst = doc["src"], doc["dst"]
    seed = doc["hash_seed"]
    lines = [
        f"LAB CHECK  lab {doc['lab_prefix']} (fabric {doc['fabric']}), kernel {doc['kernel_release']}",
        f"  {p['flows']} UDP flows x {p['batches']} batches, {src['host']} {src['nic']} {src['ip']} -> "
        f"{dst['host']} {dst['nic']} {dst['ip']}, dport 4791; per flow {p['packets_per_flow']} datagrams x "
        f"{p['wire_bytes_per_datagram']} B at {p['rate_pps_per_flow']:g}/s",
        f"  measured: tx counters of {doc['leaf']} {' '.join(doc['uplinks'])} (kernel next-hop order "
        f"{' '.join(doc['nexthop_order'])}); hash seed {seed['read'] if seed['read'] is not None else 'n/a'}"
        f" (plan {seed['plan']})",
        "",
    ]
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
    rows = []
    for c in doc["configs"]:
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
        rows.append(
            (
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
        )
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    right = {4, 6, 7, 8, 10}

    def fmt(r: Sequence[str]) -> str:
        cells = (str(v).rjust(widths[i]) if i in right else str(v).ljust(widths[i]) for i, v in enumerate(r))
        return ("  " + "  ".join(cells)).rstrip()

    lines += [fmt(header), fmt(["-" * w for w in widths]), *map(fmt, rows)]
    lines += [
        f"  busiest = flows (of {p['flows']}) on the busier uplink, from its share of the bytes; * = the intent's hash",
        "  z = lab mean - model mean in standard errors; TVD = distance of the lab's histogram from the model's",
        "  (p = how often as many batches drawn from the model land at least that far)",
    ]
    su = doc["summary"]
    lines.append("")
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
            f"  kernel-hash replica (seed {seed['read']}): exact split in {su['replica_exact_batches']}/"
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
    for f in doc.get("findings", []):
        lines.append(f"  {f['rule_id']} {f['severity']}: {f['message']}" + (f" ({f['hint']})" if f["hint"] else ""))
    lines.append(f"  verdict: {'lab and model agree' if su['agrees'] else 'LAB AND MODEL DISAGREE'}")
    return "\n".join(lines) + "\n"
