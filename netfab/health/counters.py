"""The health counter vocabulary: every name netfab reads, and which of them are levels.

Pure data with no numpy, because the platform records validate their `health.unavailable` names against it
when they load, and every command (lint and build included) loads them: importing netfab.health.model there
cost ~0.2 s of numpy import per process.
"""

from __future__ import annotations

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
    "fec_corrected": "FEC-corrected codewords",
    "fec_corrected_bits": "bits the FEC corrected (the pre-FEC BER numerator; mlx5 rx_corrected_bits_phy)",
    "rx_bits": "bits received at the PHY (the pre-FEC BER denominator; mlx5 rx_bits_phy)",
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
