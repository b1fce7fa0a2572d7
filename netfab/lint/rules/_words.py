"""How rules name things in messages: the fabric's words, the same everywhere."""

from __future__ import annotations

from collections.abc import Iterable

from netfab.intent.qos import TrafficClass
from netfab.lint.fabric import DataPath


def class_path(index: int, *rest: str | int) -> DataPath:
    return ("qos", "classes", index, *rest)


def dscps(values: Iterable[int]) -> str:
    items = sorted(set(values))
    if not items:
        return "no DSCP"
    return ("DSCP " if len(items) == 1 else "DSCPs ") + ", ".join(str(d) for d in items)


def klass(tc: TrafficClass) -> str:
    """class 'cnp' (DSCP 48)"""
    return f"class '{tc.name}' ({dscps(tc.dscp)})" if tc.dscp else f"class '{tc.name}'"


def priorities(values: Iterable[int]) -> str:
    items = sorted(set(values))
    return ("priority " if len(items) == 1 else "priorities ") + ", ".join(str(p) for p in items)


def join(words: Iterable[str]) -> str:
    items = list(words)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def duration(us: int) -> str:
    if us >= 1000 and us % 1000 == 0:
        return f"{us // 1000} ms"
    return f"{us} us"


def speed(gbps: int) -> str:
    return f"{gbps // 1000}.{gbps % 1000 // 100}T" if gbps >= 1000 else f"{gbps}G"


def ratio(value: float) -> str:
    """'7:1' oversubscribed, '1:2' undersubscribed (more uplink than downlink capacity)."""
    if 0 < value < 1:
        return "1:" + f"{1 / value:.2f}".rstrip("0").rstrip(".")
    return f"{value:.2f}".rstrip("0").rstrip(".") + ":1"


def size(n: int) -> str:
    """A byte count exactly as large as it is, in the largest unit that divides it: 8 MB, 1,500 KB, 126,416 B."""
    if n and n % 1_000_000 == 0:
        return f"{n // 1_000_000:,} MB"
    if n and n % 1000 == 0:
        return f"{n // 1000:,} KB"
    return f"{n:,} B"


def approx(n: float) -> str:
    """A computed byte count to the precision it deserves: 433 KB, 5.4 MB."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f} MB"
    if n >= 10_000:
        return f"{n / 1000:.0f} KB"
    return f"{round(n):,} B"


_PLURALS = {"leaf": "leaves"}


def plural(n: int, word: str) -> str:
    """'1 rail', '4 leaves', '1,536 leaves'."""
    return f"{n:,} {word if n == 1 else _PLURALS.get(word, word + 's')}"


def percent(value: float) -> str:
    """33.3 -> "33.3 %", 5.0 -> "5 %"."""
    return f"{value:g} %"
