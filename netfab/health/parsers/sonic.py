"""SONiC CLIs (sonic-net/sonic-utilities scripts): `portstat -j` (JSON per port: STATE, RX_OK, RX_ERR, RX_DRP,
TX_OK, TX_ERR, TX_DRP with thousands separators), `pfcstat -s all` (the `show pfc counters` tables, Rx then Tx,
PFC0..PFC7 per port; "N/A" where the ASIC does not count a priority), `pfcwd stats` (`show pfcwd stats`: per
port:queue STATUS, STORM DETECTED/RESTORED, TX OK/DROP, RX OK/DROP), `watermarkstat -t q_shared_uni` (`show
queue watermark unicast`: UC0..UC7 bytes per port). The same numbers sit in COUNTERS_DB
(SAI_PORT_STAT_PFC_n_RX_PKTS ...); the CLIs are what an operator can run, so they are what is read.
"""

from __future__ import annotations

import re

from netfab.health.model import PortCounters
from netfab.health.parsers import Parsed, ParseError, load_json, number, put

_PORT = re.compile(r"^Ethernet\d+")


def portstat(text: str, port: str = "") -> Parsed:
    doc = load_json(text, "portstat -j")
    if not isinstance(doc, dict):
        raise ParseError("portstat -j: expected a JSON object of ports")
    out: Parsed = {}
    for name, row in doc.items():
        if not isinstance(row, dict):
            continue
        c: PortCounters = {}
        for theirs, ours in (
            ("RX_OK", "rx_packets"),
            ("TX_OK", "tx_packets"),
            ("RX_ERR", "rx_errors"),
            ("TX_ERR", "tx_errors"),
            ("RX_DRP", "rx_drops"),
            ("TX_DRP", "tx_drops"),
        ):
            put(c, ours, row.get(theirs))
        c["oper_up"] = 1.0 if row.get("STATE") == "U" else 0.0
        out[name] = c
    return out


def _tables(text: str, what: str) -> list[tuple[list[str], list[list[str]]]]:
    """Whitespace tables as tabulate prints them: a header line, a dashed line, rows, a blank line."""
    tables: list[tuple[list[str], list[list[str]]]] = []
    lines = text.splitlines()
    for i, line in enumerate(lines[1:], start=1):
        if set(line.strip()) <= {"-", " "} and line.strip():
            header = re.split(r"\s{2,}", lines[i - 1].strip())
            rows = []
            for row in lines[i + 1 :]:
                if not row.strip() or (set(row.strip()) <= {"-", " "}):
                    break
                rows.append(re.split(r"\s{2,}", row.strip()))
            tables.append((header, rows))
    if not tables:
        raise ParseError(f"{what}: no table in the output")
    return tables


def pfcstat(text: str, port: str = "") -> Parsed:
    out: Parsed = {}
    for header, rows in _tables(text, "pfcstat -s all"):
        direction = (
            "rx" if header[0].lower().startswith("port rx") else "tx" if header[0].lower().startswith("port tx") else ""
        )
        if not direction:
            continue
        for row in rows:
            if not _PORT.match(row[0]):
                continue
            c = out.setdefault(row[0], {})
            for col, value in zip(header[1:], row[1:], strict=False):
                if col.upper().startswith("PFC") and col[3:].isdigit():
                    put(c, f"pfc_{direction}:{col[3:]}", value)
    if not out:
        raise ParseError("pfcstat -s all: no 'Port Rx' / 'Port Tx' table")
    return out


def pfcwd_stats(text: str, port: str = "") -> Parsed:
    out: Parsed = {}
    for header, rows in _tables(text, "pfcwd stats"):
        cols = [h.upper() for h in header]
        if "STORM DETECTED/RESTORED" not in cols:
            continue
        at = cols.index("STORM DETECTED/RESTORED")
        for row in rows:
            name, _, queue = row[0].partition(":")
            if not queue.isdigit() or len(row) <= at:
                continue
            detected, _, restored = row[at].partition("/")
            c = out.setdefault(name, {})
            put(c, f"pfcwd_detected:{queue}", detected)
            put(c, f"pfcwd_restored:{queue}", restored)
    return out


def queue_watermarks(text: str, port: str = "") -> Parsed:
    out: Parsed = {}
    for header, rows in _tables(text, "watermarkstat -t q_shared_uni"):
        for row in rows:
            if not _PORT.match(row[0]):
                continue
            c = out.setdefault(row[0], {})
            for col, value in zip(header[1:], row[1:], strict=False):
                if col.upper().startswith("UC") and col[2:].isdigit() and number(value) is not None:
                    put(c, f"watermark_bytes:{col[2:]}", value)
    return out
