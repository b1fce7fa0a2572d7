"""The health data: counters per device and port in one vocabulary, samples of them over time, port metadata.

Every platform's output is parsed into the same flat names (a port's ``pfc_rx_us:3`` is the time its egress was
held by PFC pauses on priority 3, in microseconds, whatever the device calls it), so analysis never knows which
NOS a number came from. A counter only grows (until it wraps or the device resets it); a gauge is a level read
at the sample's instant (a watermark, optics power, link state). Suffix ``:N`` is a priority or queue number.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

# Re-exported: the vocabulary lives in a numpy-free module (see there), its users import it from here.
from netfab.health.counters import COUNTER_DOCS as COUNTER_DOCS
from netfab.health.counters import GAUGES as GAUGES

PortCounters = dict[str, float]
"""Counter name -> value for one port."""


def base(name: str) -> str:
    """``pfc_rx_us:3`` -> ``pfc_rx_us``."""
    return name.split(":", 1)[0]


def index(name: str) -> int | None:
    """``pfc_rx_us:3`` -> 3; None for a name without a priority or queue."""
    _, sep, rest = name.partition(":")
    return int(rest) if sep and rest.isdigit() else None


def is_gauge(name: str) -> bool:
    return base(name) in GAUGES


class CounterTable(Mapping[str, PortCounters]):
    """One device's counters, columnar: a row per port, a column per counter name, NaN where not measured.

    A fleet sample is ~640,000 ports x ~15 counters: as one dict per port (and a float object per value) that is
    ~2 GB of Python objects, as one float64 array per device it is ~80 MB. Read as a mapping (port -> counters,
    NaN left out) for tests and small callers; the analysis reads `data` directly.
    """

    __slots__ = ("_row", "data", "names", "ports")

    def __init__(self, ports: Sequence[str], names: Sequence[str], data: npt.NDArray[np.float64]) -> None:
        if data.shape != (len(ports), len(names)):
            raise ValueError(f"counter table of {len(ports)} ports x {len(names)} names has shape {data.shape}")
        self.ports: tuple[str, ...] = tuple(ports)
        self.names: tuple[str, ...] = tuple(names)
        self.data = data
        self._row: dict[str, int] | None = None

    @classmethod
    def empty(cls) -> CounterTable:
        return cls((), (), np.zeros((0, 0)))

    @classmethod
    def from_rows(cls, ports: Sequence[str], names: Sequence[str], rows: list[list[Any]]) -> CounterTable:
        """Rows of raw values as a device printed them (numbers, numeric strings, None or "N/A" = absent)."""
        if not rows:
            return cls(ports, names, np.zeros((0, len(names))))
        try:
            values = np.array(rows, dtype=np.float64)
        except (TypeError, ValueError):
            # Something not a plain number ("1,234", "N/A", a nested object): the careful, per-value path.
            values = np.array([[_number(v) for v in row] for row in rows], dtype=np.float64)
        return cls(ports, names, values)

    @classmethod
    def from_dicts(cls, ports: Mapping[str, PortCounters]) -> CounterTable:
        names: dict[str, None] = {}
        for counters in ports.values():
            names.update(dict.fromkeys(counters))
        order = list(names)
        nan = math.nan
        rows = [[c.get(n, nan) for n in order] for c in ports.values()]
        return cls(list(ports), order, np.array(rows, dtype=np.float64).reshape(len(rows), len(order)))

    @staticmethod
    def merge(tables: Sequence[CounterTable]) -> CounterTable:
        """Several sources' tables as one; where two measured the same counter of a port, the later one wins."""
        tables = [t for t in tables if t.ports]
        if not tables:
            return CounterTable.empty()
        if len(tables) == 1:
            return tables[0]
        first = tables[0].ports
        names = list(dict.fromkeys(n for t in tables for n in t.names))
        if all(t.ports == first for t in tables) and len(names) == sum(len(t.names) for t in tables):
            # The common case: whole-device commands over the same ports, each its own counters.
            return CounterTable(first, names, np.hstack([t.data for t in tables]))
        ports = list(dict.fromkeys(p for t in tables for p in t.ports))
        row = {p: i for i, p in enumerate(ports)}
        col = {n: i for i, n in enumerate(names)}
        values = np.full((len(ports), len(names)), np.nan)
        for t in tables:
            block = np.ix_([row[p] for p in t.ports], [col[n] for n in t.names])
            values[block] = np.where(np.isnan(t.data), values[block], t.data)
        return CounterTable(ports, names, values)

    def __getitem__(self, port: str) -> PortCounters:
        if self._row is None:
            self._row = {p: i for i, p in enumerate(self.ports)}
        values = self.data[self._row[port]].tolist()
        return {n: v for n, v in zip(self.names, values, strict=True) if not math.isnan(v)}

    def __iter__(self) -> Iterator[str]:
        return iter(self.ports)

    def __len__(self) -> int:
        return len(self.ports)

    def __repr__(self) -> str:
        return f"CounterTable({len(self.ports)} ports x {len(self.names)} counters)"


def _number(value: Any) -> float:
    from netfab.health.parsers import number

    n = number(value)
    return math.nan if n is None else n


@dataclass(slots=True)
class DeviceSample:
    """One read of one device: every port's counters at (about) one instant."""

    device: str
    at: float
    """Seconds on one clock for the whole collection (time.monotonic() of the collector, or the file's)."""
    ports: CounterTable = field(default_factory=CounterTable.empty)
    error: str | None = None
    """Why the read failed (unreachable, a parser refused the output): the device is then not analysed."""
    at_error: float = 0.0
    """The read happened within at +- at_error (half the round trip; 0 when unknown): two ends of a link are
    compared only as closely as their read instants are known."""

    @classmethod
    def of(cls, device: str, at: float, ports: Mapping[str, PortCounters]) -> DeviceSample:
        """A sample from per-port dicts (tests, hand-built inputs)."""
        return cls(device, at, CounterTable.from_dicts(ports))


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
