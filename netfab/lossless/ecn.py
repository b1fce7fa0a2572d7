"""ECN threshold bounds: where Kmin/Kmax sit relative to frame size, bandwidth-delay product and buffer.

VENDOR_REFERENCE §7.2 has no vendor-neutral standard, only published values and the rules all sources agree on:
mark before PFC fires, scale with port speed, keep Kmin above a few MTUs, use weight 0. The bounds here turn
those into numbers a linter can hold an intent to:

- Kmin >= 2 frames of the link MTU: below that, one jumbo frame in flight plus one queued already marks, and
  DCQCN throttles a sender that is merely at line rate.
- Kmax between 1x and 50x the path bandwidth-delay product at each egress port speed. Below one BDP the queue
  marks before a single round trip of data can be in flight, so a lone flow never reaches line rate. The
  published values of §7.2 sit between ~1.5x (Cumulus 1.5 MB at 800G) and ~25x (Azure 300 KB at 10G) of the
  BDP computed below; 50x leaves twice that room before calling a threshold out of proportion (marks so late
  that queues of tens of round trips build, and PFC fires first).
- Kmax <= the buffer one egress queue can hold on the platform (capability data): a threshold the queue can
  never reach never marks.

The round trip is the fabric's longest path: every cable twice (there and back), a fixed per-switch transit
latency per switch crossed each way, and the NIC's turnaround. The constants are typical cut-through switch
and ConnectX figures; they set the scale of the bound, not a precise RTT.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from netfab.lossless.headroom import SIGNAL_SPEED_M_PER_S

SWITCH_TRANSIT_US = 1.0
NIC_TURNAROUND_US = 2.0
KMIN_MIN_FRAMES = 2
KMAX_MIN_BDP = 1.0
KMAX_MAX_BDP = 50.0


def path_rtt_us(cables_m: Sequence[float]) -> float:
    """Round trip over a path whose hops (host to host) have these cable lengths.

    A path of n cables crosses n - 1 switches each way.
    """
    propagation_us = 2 * sum(cables_m) / SIGNAL_SPEED_M_PER_S * 1e6
    switches = max(0, len(cables_m) - 1)
    return propagation_us + 2 * switches * SWITCH_TRANSIT_US + NIC_TURNAROUND_US


def bdp_bytes(speed_gbps: int, rtt_us: float) -> int:
    return round(speed_gbps * 1e9 * rtt_us * 1e-6 / 8)


@dataclass(frozen=True, slots=True)
class KmaxBounds:
    speed_gbps: int
    rtt_us: float
    bdp: int

    @property
    def low(self) -> int:
        return round(self.bdp * KMAX_MIN_BDP)

    @property
    def high(self) -> int:
        return round(self.bdp * KMAX_MAX_BDP)


def kmax_bounds(speed_gbps: int, rtt_us: float) -> KmaxBounds:
    return KmaxBounds(speed_gbps, rtt_us, bdp_bytes(speed_gbps, rtt_us))


def kmin_floor(mtu: int) -> int:
    return KMIN_MIN_FRAMES * mtu
