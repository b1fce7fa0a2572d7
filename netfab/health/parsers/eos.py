"""Arista EOS eAPI JSON (`| json`). Shapes: `show interfaces` (interfaceCounters), `show priority-flow-control
counters` revision 3 (interfaceCounters.<intf>.rxFrames/txFrames, as ANTA's VerifyInterfacesPFCCounters reads
it), `show qos interfaces ecn counters queue` (intfQueueCounters.<intf>.queueCounters.<queue> = marked packets,
as ANTA's VerifyInterfacesECNCounters reads it), `show interfaces transceiver` (interfaces.<intf>.rxPower,
temperature). EOS's PFC counters are per port, not per priority. EOS has no pause-duration source netfab can
read: its PFC history counters (EOS >= 4.35.0F) are documented without an eAPI command output or JSON shape, so
the platform record declares pfc_rx_us/pfc_tx_us unavailable and every report over EOS devices says so; EOS
links are judged on pause frame rates, watermarks and busy time at peak rate instead.
"""

from __future__ import annotations

from typing import Any

from netfab.health.model import PortCounters
from netfab.health.parsers import Parsed, ParseError, load_json, put


def _section(text: str, key: str, what: str) -> dict[str, Any]:
    doc = load_json(text, what)
    body = doc.get(key) if isinstance(doc, dict) else None
    if not isinstance(body, dict):
        raise ParseError(f"{what}: no {key!r} object")
    return body


def interfaces(text: str, port: str = "") -> Parsed:
    out: Parsed = {}
    for name, intf in _section(text, "interfaces", "show interfaces | json").items():
        if not isinstance(intf, dict):
            continue
        c: PortCounters = {}
        counters = intf.get("interfaceCounters", {})
        if isinstance(counters, dict):
            put(c, "rx_bytes", counters.get("inOctets"))
            put(c, "tx_bytes", counters.get("outOctets"))
            put(c, "rx_packets", counters.get("inUcastPkts"))
            put(c, "tx_packets", counters.get("outUcastPkts"))
            put(c, "rx_errors", counters.get("totalInErrors"))
            put(c, "tx_errors", counters.get("totalOutErrors"))
            put(c, "rx_drops", counters.get("inDiscards"))
            put(c, "tx_drops", counters.get("outDiscards"))
            put(c, "link_flaps", counters.get("linkStatusChanges"))
            detail = counters.get("inputErrorsDetail", {})
            if isinstance(detail, dict):
                put(c, "fcs_errors", detail.get("fcsErrors"))
        put(c, "speed_bps", intf.get("bandwidth"))
        c["oper_up"] = 1.0 if intf.get("lineProtocolStatus") == "up" else 0.0
        out[name] = c
    return out


def pfc_counters(text: str, port: str = "") -> Parsed:
    out: Parsed = {}
    for name, counters in _section(text, "interfaceCounters", "show priority-flow-control counters | json").items():
        if isinstance(counters, dict):
            c = out.setdefault(name, {})
            put(c, "pfc_rx", counters.get("rxFrames"))
            put(c, "pfc_tx", counters.get("txFrames"))
    return out


def ecn_counters(text: str, port: str = "") -> Parsed:
    out: Parsed = {}
    for name, body in _section(text, "intfQueueCounters", "show qos interfaces ecn counters queue | json").items():
        queues = body.get("queueCounters") if isinstance(body, dict) else None
        if isinstance(queues, dict):
            c = out.setdefault(name, {})
            for queue, marked in queues.items():
                if str(queue).isdigit():
                    put(c, f"ecn_marked:{queue}", marked)
    return out


def transceivers(text: str, port: str = "") -> Parsed:
    out: Parsed = {}
    for name, xcvr in _section(text, "interfaces", "show interfaces transceiver | json").items():
        if isinstance(xcvr, dict):
            c = out.setdefault(name, {})
            put(c, "rx_power_dbm", xcvr.get("rxPower"))
            put(c, "temperature_c", xcvr.get("temperature"))
    return out
