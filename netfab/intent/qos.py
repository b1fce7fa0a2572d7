"""Lossless QoS: traffic classes, PFC and its watchdog, ECN thresholds, buffers/headroom."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from netfab.intent.base import IntentModel
from netfab.intent.types import ByteSize, Dscp, Microseconds, Name, Percent, Priority, ShaperPercent, size, us


class EcnProfile(IntentModel):
    """ECN marking on a queue: mark with probability rising from 0 at Kmin to Pmax at Kmax."""

    kmin: ByteSize
    kmax: ByteSize
    pmax: Percent = 100
    """Marking probability at Kmax, percent."""
    weight: int = Field(default=0, ge=0, le=15)
    """Queue-averaging weight; 0 = instantaneous queue, which RoCE wants."""


class TrafficClass(IntentModel):
    """A class of traffic: which DSCPs it carries, its priority (= traffic class = egress queue) and how it
    is treated."""

    name: Name
    kind: Literal["roce", "cnp", "default", "other"] = "other"
    """roce: the RDMA data class; cnp: congestion notification packets; default: everything unmatched."""
    dscp: list[Dscp] = []
    priority: Priority
    lossless: bool = False
    scheduling: Literal["strict", "dwrr"] = "dwrr"
    weight: Percent | None = None
    """DWRR bandwidth share in percent (dwrr classes only)."""
    max_rate_percent: ShaperPercent | None = 5
    """Strict classes only: the queue's shaper, a cap in percent of the port speed (default 5). A strict queue
    is served before every other queue, so without a cap a host marking the class's DSCPs (CS6 is also many
    NOSes' routing-protocol marking) can starve RoCE; Juniper recommends a rate on every strict-high queue and
    AMD's RoCE reference caps CNP at 5 % (FIDELITY_REVIEW JUN-3, X-1). null = unshaped (lint warns)."""
    ecn: EcnProfile | None = None


def _default_classes() -> list[TrafficClass]:
    return [
        TrafficClass(
            name="roce",
            kind="roce",
            dscp=[26],
            priority=3,
            lossless=True,
            weight=50,
            ecn=EcnProfile(kmin=size("150KB"), kmax=size("1500KB"), pmax=100),
        ),
        TrafficClass(name="cnp", kind="cnp", dscp=[48], priority=6, scheduling="strict"),
        TrafficClass(name="default", kind="default", dscp=[], priority=0, weight=50),
    ]


class PfcWatchdog(IntentModel):
    """Breaks PFC deadlocks/storms: if a lossless queue stays paused for `detect`, apply `action` until no
    pause frames were seen for `restore`."""

    enabled: bool = True
    detect: Microseconds = us("200ms")
    restore: Microseconds = us("400ms")
    polling: Microseconds = us("100ms")
    action: Literal["drop", "forward", "alert"] = "drop"


class Pfc(IntentModel):
    priorities: list[Priority] | None = None
    """Priorities with PFC. Omitted = the priorities of the lossless classes."""
    watchdog: PfcWatchdog | None = PfcWatchdog()
    """Set to null to run without a watchdog (lint warns)."""


class Buffers(IntentModel):
    headroom: Literal["auto"] | ByteSize = "auto"
    """Per port, per lossless priority. 'auto' sizes it from cable length, speed and MTU."""
    small_packet_percent: Percent = 0
    """Share of small packets assumed when sizing headroom (cell occupancy); 0 for pure RoCE MTU frames."""
    cell_bytes: int = Field(default=0, ge=0, le=1024)
    """ASIC buffer cell size in bytes when known (used with small_packet_percent); 0 = platform data."""


class Qos(IntentModel):
    trust: Literal["dscp", "pcp"] = "dscp"
    classes: list[TrafficClass] = Field(default_factory=_default_classes)
    pfc: Pfc = Pfc()
    buffers: Buffers = Buffers()

    def class_of_kind(self, kind: str) -> TrafficClass | None:
        return next((c for c in self.classes if c.kind == kind), None)

    @property
    def pfc_priorities(self) -> list[int]:
        if self.pfc.priorities is not None:
            return sorted(set(self.pfc.priorities))
        return sorted({c.priority for c in self.classes if c.lossless})
