"""The health data: counters per device and port in one vocabulary, samples of them over time, port metadata.

Every platform's output is parsed into the same flat names (a port's ``pfc_rx_us:3`` is the time its egress was
held by PFC pauses on priority 3, in microseconds, whatever the device calls it), so analysis never knows which
NOS a number came from. A counter only grows (until it wraps or the device resets it); a gauge is a level read
at the sample's instant (a watermark, optics power, link state). Suffix ``:N`` is a priority or queue number.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PortCounters = dict[str, float]
"""Counter name -> value for one port."""

GAUGES = frozenset(
    {
        "oper_up",
        "speed_bps",
        "watermark_bytes",
        "pg_watermark_bytes",
        "shaper_backlog_bytes",
        "rx_power_dbm",
        "temperature_c",
    }
)
"""Names (before any ``:N``) read as levels, never differenced."""

COUNTER_DOCS: dict[str, str] = {
    "rx_bytes": "bytes received",
    "tx_bytes": "bytes sent",
    "rx_packets": "packets received",
    "tx_packets": "packets sent",
    "rx_errors": "receive errors (CRC/FCS, symbol, length)",
    "tx_errors": "transmit errors",
    "rx_drops": "packets dropped on receive (buffer, discards)",
    "tx_drops": "packets dropped on transmit",
    "fcs_errors": "frames with a bad FCS",
    "fec_corrected": "FEC-corrected codewords or bits",
    "fec_uncorrectable": "FEC-uncorrectable codewords",
    "link_flaps": "link state changes",
    "oper_up": "1 when the link is operationally up",
    "speed_bps": "link speed, bits per second",
    "pfc_rx": "PFC pause frames received, per priority",
    "pfc_tx": "PFC pause frames sent, per priority",
    "pfc_rx_us": "time the port's egress was paused by received PFC, per priority (microseconds)",
    "pfc_tx_us": "time the port paused its peer, per priority (microseconds)",
    "pfcwd_detected": "PFC watchdog storms or deadlocks detected, per queue",
    "pfcwd_restored": "PFC watchdog restorations, per queue",
    "ecn_marked": "packets ECN-marked (CE) at egress, per queue",
    "queue_drops": "packets dropped by the egress queue (tail and buffer), per queue",
    "wred_drops": "packets dropped by WRED, per queue",
    "watermark_bytes": "peak egress queue occupancy since the last read, per queue (bytes)",
    "pg_watermark_bytes": "peak ingress priority-group occupancy, per priority group (bytes)",
    "shaper_overlimits": "times the port's shaper held a packet back (tc overlimits)",
    "shaper_drops": "packets the port's shaper dropped",
    "shaper_backlog_bytes": "bytes queued in the port's shaper",
    "rx_power_dbm": "optics receive power (dBm, the lowest lane)",
    "temperature_c": "optics temperature (Celsius)",
    "cnp_sent": "NIC: congestion notification packets sent (DCQCN notification point)",
    "cnp_handled": "NIC: congestion notification packets acted on (DCQCN reaction point)",
    "roce_ecn_marked": "NIC: RoCE packets received with CE",
    "out_of_sequence": "NIC: RoCE packets out of sequence (retransmission after loss)",
    "rx_buffer_discards": "NIC: packets discarded for lack of receive buffer",
    "pause_storm_events": "NIC: pause-storm warnings or errors (the NIC stopped sending pauses)",
}


def base(name: str) -> str:
    """``pfc_rx_us:3`` -> ``pfc_rx_us``."""
    return name.split(":", 1)[0]


def index(name: str) -> int | None:
    """``pfc_rx_us:3`` -> 3; None for a name without a priority or queue."""
    _, sep, rest = name.partition(":")
    return int(rest) if sep and rest.isdigit() else None


def is_gauge(name: str) -> bool:
    return base(name) in GAUGES


@dataclass(slots=True)
class DeviceSample:
    """One read of one device: every port's counters at (about) one instant."""

    device: str
    at: float
    """Seconds on one clock for the whole collection (time.monotonic() of the collector, or the file's)."""
    ports: dict[str, PortCounters] = field(default_factory=dict)
    error: str | None = None
    """Why the read failed (unreachable, a parser refused the output): the device is then not analysed."""


@dataclass(frozen=True, slots=True)
class PortMeta:
    """Where a port sits, from the plan: what it is compared with and what a finding says about it."""

    device: str
    port: str
    role: str
    """The device's role (leaf, spine, superspine, host)."""
    tier: str
    """The link's tier: host, leaf_spine, spine_superspine."""
    direction: str
    """host, fabric_down or fabric_up (the port role): uplinks and downlinks are not each other's peers."""
    peer_device: str
    peer_port: str
    speed_bps: float
    rail: int | None = None
    pod: int | None = None
    plane: int | None = None

    @property
    def name(self) -> str:
        return f"{self.device} {self.port}"
