"""What a lab check runs: the kernel hash configurations, the traffic per batch, and the check's thresholds."""

from __future__ import annotations

from dataclasses import dataclass

from netfab.analyze.hashing import KERNEL_DEFAULT_FIELDS_MASK

DETERMINISTIC_MIN_SHARE = 0.95
"""Where the model puts every flow on one uplink, the lab must carry at least this share of the bytes there."""
BAND_OUTSIDE_RATE = 0.02
"""At most this share of batches falls outside a forecast's [p1, p99] band when lab and model agree."""
DISAGREE_P = 0.01
"""A configuration disagrees when that many out-of-band batches would happen by chance with p below this."""


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

    def renders_like(self, other: HashConfig) -> bool:
        """Same kernel behaviour: policies 0-2 ignore the fields mask."""
        if self.policy != other.policy:
            return False
        return self.policy != 3 or self.fields_mask == other.fields_mask


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
    """One end of the check's flows: a server NIC and the leaf port it is cabled to."""

    host: str
    nic: str
    ip: str
    leaf: str
    leaf_port: str
