"""PFC headroom: the bytes that still arrive on a lossless priority after the receiver decides to pause.

Model: VENDOR_REFERENCE §7.1, in the structure of SONiC's Mellanox dynamic-buffer calculator
(buffer_headroom_mellanox.lua):

    propagation = MTU (peer's frame already on the wire) + PFC frame + cable round trip
                  + peer response (pause quanta per speed) + local MAC/PHY delay
    xoff        = MTU (frame in progress when XOFF is decided) + propagation x cell occupancy

The cable term uses the physical v = 2e8 m/s (5 ns/m), as the §7.1 worked example does; SONiC's own
1.98e8 m/s with a /1024 gives 1.4 % less (49,321 B instead of 50,000 B at 400G/100m).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PFC_FRAME_BYTES = 64
SIGNAL_SPEED_M_PER_S = 2.0e8
PAUSE_QUANTUM_BITS = 512

# Peer response time in pause quanta (IEEE 802.3 Annex 31B as tabulated in SONiC's calculator, §7.1).
PAUSE_QUANTA_BY_SPEED_GBPS: dict[int, int] = {10: 67, 25: 80, 40: 118, 50: 147, 100: 394, 200: 453, 400: 905, 800: 905}


def pause_quanta(speed_gbps: int) -> int:
    """Peer response in quanta. Speeds outside the table take the nearest slower entry scaled by speed, so
    1.6T gets 1810 (twice 800G: the same response time counted in twice as many bit times), 1G gets 67."""
    if speed_gbps in PAUSE_QUANTA_BY_SPEED_GBPS:
        return PAUSE_QUANTA_BY_SPEED_GBPS[speed_gbps]
    slower = [s for s in PAUSE_QUANTA_BY_SPEED_GBPS if s < speed_gbps]
    if not slower:
        return PAUSE_QUANTA_BY_SPEED_GBPS[min(PAUSE_QUANTA_BY_SPEED_GBPS)]
    base = max(slower)
    return math.ceil(PAUSE_QUANTA_BY_SPEED_GBPS[base] * speed_gbps / base)


def cable_round_trip_bytes(cable_m: float, speed_gbps: int) -> float:
    """Bytes the link carries during one round trip over the cable: 2 x L / v x R / 8."""
    return 2 * cable_m / SIGNAL_SPEED_M_PER_S * speed_gbps * 1e9 / 8


def peer_response_bytes(speed_gbps: int) -> int:
    return pause_quanta(speed_gbps) * PAUSE_QUANTUM_BITS // 8


def cell_occupancy(small_packet_percent: float, cell_bytes: int | None) -> float:
    """How much more buffer small packets take than their bytes (a 64 B packet still fills a whole cell).

    SONiC: (100 - small% + small% x cell/64) / 100, applied only when cells are larger than 128 B.
    """
    if not cell_bytes or cell_bytes <= 128 or small_packet_percent <= 0:
        return 1.0
    return (100 - small_packet_percent + small_packet_percent * cell_bytes / 64) / 100


@dataclass(frozen=True, slots=True)
class HeadroomBreakdown:
    """Headroom for one lossless priority on one port, term by term (bytes)."""

    speed_gbps: int
    cable_m: float
    mtu: int
    cable: float
    peer_response: int
    pfc_frame: int
    mac_phy: int
    occupancy: float
    cell_bytes: int | None

    @property
    def propagation(self) -> float:
        return self.mtu + self.pfc_frame + self.cable + self.peer_response + self.mac_phy

    @property
    def xoff(self) -> float:
        return self.mtu + self.propagation * self.occupancy

    @property
    def required_bytes(self) -> int:
        """xoff rounded up to whole buffer cells (to whole bytes when the cell size is unknown)."""
        cell = self.cell_bytes or 1
        return math.ceil(self.xoff / cell) * cell


def headroom(
    speed_gbps: int,
    cable_m: float,
    mtu: int,
    *,
    small_packet_percent: float = 0,
    cell_bytes: int | None = None,
    mac_phy_delay_bytes: int = 0,
) -> HeadroomBreakdown:
    """Headroom one lossless priority needs on a port of `speed_gbps` with `cable_m` of cable and `mtu`."""
    return HeadroomBreakdown(
        speed_gbps=speed_gbps,
        cable_m=cable_m,
        mtu=mtu,
        cable=cable_round_trip_bytes(cable_m, speed_gbps),
        peer_response=peer_response_bytes(speed_gbps),
        pfc_frame=PFC_FRAME_BYTES,
        mac_phy=mac_phy_delay_bytes,
        occupancy=cell_occupancy(small_packet_percent, cell_bytes),
        cell_bytes=cell_bytes,
    )
