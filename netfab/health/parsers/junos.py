"""Juniper Junos JSON (`| display json`): `show interfaces extensive` (interface-information.physical-interface:
oper-status, traffic-statistics, input-error-list, output-error-list, ethernet-fec-statistics,
interface-flapped) and `show interfaces queue` (queue-counters.queue: queue-number, queue-counters-tail-drop-
packets, queue-counters-red-packets, queue-counters-ecn-ce-packets). Junos JSON wraps every leaf as
[{"data": value}]. Field names as juniper's own exporters read them (czerwonk/junos_exporter
pkg/features/interfacequeue); the ECN CE field and the FEC block are reconstructed, not captured here.
"""

from __future__ import annotations

from typing import Any

from netfab.health.model import PortCounters
from netfab.health.parsers import Parsed, ParseError, load_json, put


def _leaf(node: Any, key: str) -> Any:
    """node[key][0]["data"] (Junos JSON's wrapping), or None."""
    value = node.get(key) if isinstance(node, dict) else None
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return value[0].get("data", value[0])
    return None


def _list(node: Any, key: str) -> list[Any]:
    value = node.get(key) if isinstance(node, dict) else None
    return value if isinstance(value, list) else []


def _physical(text: str, what: str) -> list[Any]:
    doc = load_json(text, what)
    info = _list(doc, "interface-information")
    if not info:
        raise ParseError(f"{what}: no interface-information")
    return _list(info[0], "physical-interface")


def interfaces_extensive(text: str, port: str = "") -> Parsed:
    out: Parsed = {}
    for intf in _physical(text, "show interfaces extensive | display json"):
        name = _leaf(intf, "name")
        if not isinstance(name, str):
            continue
        c: PortCounters = {"oper_up": 1.0 if _leaf(intf, "oper-status") == "up" else 0.0}
        for block, fields in (
            ("traffic-statistics", {"input-bytes": "rx_bytes", "output-bytes": "tx_bytes",
                                    "input-packets": "rx_packets", "output-packets": "tx_packets"}),
            ("input-error-list", {"input-errors": "rx_errors", "input-drops": "rx_drops",
                                  "framing-errors": "fcs_errors"}),
            ("output-error-list", {"output-errors": "tx_errors", "output-drops": "tx_drops",
                                   "carrier-transitions": "link_flaps"}),
            ("ethernet-fec-statistics", {"fec_ccw_count": "fec_corrected", "fec_nccw_count": "fec_uncorrectable"}),
        ):  # fmt: skip
            for node in _list(intf, block)[:1]:
                for theirs, ours in fields.items():
                    put(c, ours, _leaf(node, theirs))
        out[name] = c
    return out


def interfaces_queue(text: str, port: str = "") -> Parsed:
    out: Parsed = {}
    for intf in _physical(text, "show interfaces queue | display json"):
        name = _leaf(intf, "name")
        if not isinstance(name, str):
            continue
        c = out.setdefault(name, {})
        for counters in _list(intf, "queue-counters")[:1]:
            for q in _list(counters, "queue"):
                num = _leaf(q, "queue-number")
                if num is None or not str(num).isdigit():
                    continue
                put(c, f"queue_drops:{num}", _leaf(q, "queue-counters-tail-drop-packets"))
                put(c, f"wred_drops:{num}", _leaf(q, "queue-counters-red-packets"))
                put(c, f"ecn_marked:{num}", _leaf(q, "queue-counters-ecn-ce-packets"))
    return out
