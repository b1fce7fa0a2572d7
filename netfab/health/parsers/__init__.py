"""Parsers: one device output (text as the device printed it) -> port -> counters in netfab's vocabulary.

A parser is a function ``(text, port) -> {port: PortCounters}`` named by a platform record's health source
(netfab/platforms/<name>/platform.yaml, `health.sources[].parser`), so which parser reads which command is data.
Parsers raise ParseError (never KeyError or ValueError) for output they cannot read; unknown extra fields are
ignored, missing optional ones are left out (the analysis treats an absent counter as not measured, not 0).
Each is tested on a recorded output (tests/health/recordings/), named with where that recording came from.
A parser of a whole device's ports may return a CounterTable (columnar: no dict per port), the hot path of a
fleet's poll; the collector accepts either.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from netfab.health.model import CounterTable, PortCounters

Parsed = dict[str, PortCounters]
Parser = Callable[[str, str], Mapping[str, PortCounters]]
"""(output, port) -> counters: `port` is the port a per-port command ran for, "" for a whole-device one."""


class ParseError(ValueError):
    """The output is not what the parser reads (wrong command, an error message, a truncated reply)."""


def load_json(text: str, what: str) -> Any:
    try:
        # orjson: a fleet poll decodes ~1 GB of JSON, ~4x faster than the json module.
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(text)  # orjson refuses integers past 64 bits, which json reads
    except ValueError as exc:
        head = text.strip().splitlines()[0][:120] if text.strip() else "nothing"
        raise ParseError(f"{what}: expected JSON, got {head!r}") from exc


def number(value: Any) -> float | None:
    """A counter value as the devices print them: 12, "12", "1,234", "N/A" (None), "-4.31 dBm"."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip().replace(",", "").split()[0] if value.strip() else ""
        try:
            return float(text)
        except ValueError:
            return None
    return None


def put(counters: PortCounters, name: str, value: Any) -> None:
    """Set counters[name] when value reads as a number; an unsupported counter ("N/A") stays absent."""
    if type(value) is int or type(value) is float:  # JSON's own numbers: the hot path of a fleet's parse
        counters[name] = float(value)
        return
    n = number(value)
    if n is not None:
        counters[name] = n


__all__ = ["CounterTable", "ParseError", "Parsed", "Parser", "load_json", "number", "put", "resolve"]


def resolve(dotted: str) -> Parser:
    """The parser function a record names ('netfab.health.parsers.linux.ip_link')."""
    import importlib

    module, _, func = dotted.rpartition(".")
    found = getattr(importlib.import_module(module), func, None)
    if not callable(found):
        raise ImportError(f"{dotted} is not a parser function")
    parser: Parser = found
    return parser
