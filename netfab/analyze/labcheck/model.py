"""The check's results: per batch, per hash configuration, and the whole check (JSON-able via as_dict)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from netfab.analyze.labcheck.options import (
    BAND_OUTSIDE_RATE,
    DETERMINISTIC_MIN_SHARE,
    DISAGREE_P,
    Endpoint,
    HashConfig,
    LabCheckOptions,
)
from netfab.analyze.labcheck.stats import binomial_tail, quantile, tvd_test
from netfab.analyze.traffic import ETH_IP_UDP_OVERHEAD


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
        return binomial_tail(len(self.batches), len(self.batches) - self.in_band, BAND_OUTSIDE_RATE)

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
        tvd, tvd_p = tvd_test(busiest, model, n)
        replica = [b.exact for b in self.batches if b.exact is not None]
        kernel = [b.replica_vs_kernel for b in self.batches if b.replica_vs_kernel is not None]
        return {
            "measured_busiest_share": {
                "mean": round(float(shares.mean()), 4),
                "min": round(float(shares.min()), 4),
                "max": round(float(shares.max()), 4),
            },
            "measured_busiest_flows": {
                "p50": quantile(busiest, 50),
                "p90": quantile(busiest, 90),
                "max": int(busiest.max()),
                "mean": round(float(busiest.mean()), 3),
            },
            "model_busiest_flows": {
                "p1": quantile(model, 1),
                "p50": quantile(model, 50),
                "p90": quantile(model, 90),
                "p99": quantile(model, 99),
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
