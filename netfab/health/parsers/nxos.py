"""Cisco NX-OS NX-API JSON (`| json`): `show interface` (TABLE_interface.ROW_interface with state, eth_inbytes,
eth_outbytes, eth_inucast, eth_outucast, eth_inerr, eth_outerr, eth_crc, eth_indiscard, eth_outdiscard,
eth_link_flapped, eth_bw in Kbit/s) and `show interface priority-flow-control` (TABLE_pfc.ROW_pfc with
if_name_str, rx_pause_frames / tx_pause_frames per port). The PFC table's field names are reconstructed from
community collectors, not from a device (NEXT_WAVE.md §A.1 marks them unverified). NX-API returns a single ROW as
an object and several as a list; both are read.
"""

from __future__ import annotations

from typing import Any

from netfab.health.model import PortCounters
from netfab.health.parsers import Parsed, ParseError, load_json, put


def _rows(text: str, table: str, row: str, what: str) -> list[dict[str, Any]]:
    doc = load_json(text, what)
    body = doc.get(table, {}) if isinstance(doc, dict) else None
    if not isinstance(body, dict):
        raise ParseError(f"{what}: no {table}")
    rows = body.get(row, [])
    rows = [rows] if isinstance(rows, dict) else rows
    return [r for r in rows if isinstance(r, dict)]


def interfaces(text: str, port: str = "") -> Parsed:
    out: Parsed = {}
    for r in _rows(text, "TABLE_interface", "ROW_interface", "show interface | json"):
        name = r.get("interface")
        if not isinstance(name, str):
            continue
        c: PortCounters = {}
        for theirs, ours in (
            ("eth_inbytes", "rx_bytes"),
            ("eth_outbytes", "tx_bytes"),
            ("eth_inucast", "rx_packets"),
            ("eth_outucast", "tx_packets"),
            ("eth_inerr", "rx_errors"),
            ("eth_outerr", "tx_errors"),
            ("eth_crc", "fcs_errors"),
            ("eth_indiscard", "rx_drops"),
            ("eth_outdiscard", "tx_drops"),
            ("eth_link_flapped", "link_flaps"),
        ):
            put(c, ours, r.get(theirs))
        bw = r.get("eth_bw")
        if isinstance(bw, int | float | str) and str(bw).isdigit():
            c["speed_bps"] = float(bw) * 1000.0
        c["oper_up"] = 1.0 if r.get("state") == "up" else 0.0
        out[name] = c
    return out


def pfc(text: str, port: str = "") -> Parsed:
    out: Parsed = {}
    for r in _rows(text, "TABLE_pfc", "ROW_pfc", "show interface priority-flow-control | json"):
        name = r.get("if_name_str")
        if isinstance(name, str):
            c = out.setdefault(name, {})
            put(c, "pfc_rx", r.get("rx_pause_frames"))
            put(c, "pfc_tx", r.get("tx_pause_frames"))
    return out
