"""NVIDIA Cumulus Linux NVUE JSON (`nv show ... -o json`), per interface. Shapes from the Cumulus Linux 5.16 QoS
documentation (CumulusNetworks/docs content/cumulus-linux-516/Layer-1-and-Switch-Ports/Quality-of-Service):
`nv show interface <if> counters qos pfc-stats` (per switch priority rx/tx-pause-frames and -duration),
`nv show interface <if> counters qos egress-queue-stats` (per traffic class tx-uc-buffer-discards,
wred-discards, ecn-marked-packets), `nv show interface <if> qos pfc-watchdog status` (deadlock-count per
traffic class, CL >= 5.6), `nv show interface <if> link` (oper-status, stats). Before CL 5.5 the counters lived
under `qos counters`; those releases are not read.
"""

from __future__ import annotations

from typing import Any

from netfab.health.model import PortCounters
from netfab.health.parsers import Parsed, ParseError, load_json, put


def _body(text: str, what: str) -> dict[str, Any]:
    doc = load_json(text, what)
    if not isinstance(doc, dict):
        raise ParseError(f"{what}: expected a JSON object")
    return doc


def _per_index(doc: dict[str, Any], fields: dict[str, str], what: str, port: str) -> Parsed:
    c: PortCounters = {}
    for idx, row in doc.items():
        if str(idx).isdigit() and isinstance(row, dict):
            for theirs, ours in fields.items():
                put(c, f"{ours}:{idx}", row.get(theirs))
    if not c and doc:
        raise ParseError(f"{what}: no per-priority rows")
    return {port: c}


def pfc_stats(text: str, port: str = "") -> Parsed:
    what = f"nv show interface {port} counters qos pfc-stats"
    fields = {
        "rx-pause-frames": "pfc_rx",
        "tx-pause-frames": "pfc_tx",
        "rx-pause-duration": "pfc_rx_us",
        "tx-pause-duration": "pfc_tx_us",
    }
    return _per_index(_body(text, what), fields, what, port)


def egress_queue_stats(text: str, port: str = "") -> Parsed:
    what = f"nv show interface {port} counters qos egress-queue-stats"
    fields = {"tx-uc-buffer-discards": "queue_drops", "wred-discards": "wred_drops", "ecn-marked-packets": "ecn_marked"}
    return _per_index(_body(text, what), fields, what, port)


def pfc_watchdog(text: str, port: str = "") -> Parsed:
    what = f"nv show interface {port} qos pfc-watchdog status"
    doc = _body(text, what)
    rows = doc.get("traffic-class", doc)
    return _per_index(rows if isinstance(rows, dict) else {}, {"deadlock-count": "pfcwd_detected"}, what, port)


def link(text: str, port: str = "") -> Parsed:
    doc = _body(text, f"nv show interface {port} link")
    c: PortCounters = {"oper_up": 1.0 if doc.get("oper-status") == "up" else 0.0}
    stats = doc.get("stats", {})
    if isinstance(stats, dict):
        for theirs, ours in (
            ("in-bytes", "rx_bytes"),
            ("out-bytes", "tx_bytes"),
            ("in-pkts", "rx_packets"),
            ("out-pkts", "tx_packets"),
            ("in-errors", "rx_errors"),
            ("out-errors", "tx_errors"),
            ("in-drops", "rx_drops"),
            ("out-drops", "tx_drops"),
            ("carrier-transitions", "link_flaps"),
        ):
            put(c, ours, stats.get(theirs))
    speed = str(doc.get("speed", "")).upper().rstrip("BPS")
    if speed[:-1].isdigit() and speed[-1:] in ("G", "M"):
        c["speed_bps"] = float(speed[:-1]) * (1e9 if speed[-1] == "G" else 1e6)
    return {port: c}
