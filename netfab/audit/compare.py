"""Running facts vs intended facts -> drift, with device defaults filled in and containers folded.

A fact missing on one side is first given the platform's default for it (a value the device does not print).
When a whole container is missing or unexpected (an interface, a BGP neighbor, an ECN queue on a port), the
facts inside it are folded into that one finding's detail: removing a neighbor is one drift, not four.
"""

from __future__ import annotations

from typing import Protocol

from netfab.audit import describe
from netfab.audit.facts.paths import under
from netfab.audit.model import PRESENT, Drift, Facts, FactValue


class DefaultsLike(Protocol):
    def get(self, path: str) -> object | None: ...


def compare(actual: Facts, intended: Facts, defaults: DefaultsLike) -> list[Drift]:
    raw: list[Drift] = []
    for path in sorted(actual.keys() | intended.keys()):
        a, i = actual.get(path), intended.get(path)
        if _same(a, i):
            continue
        if a is None:
            a = _default(defaults, path)
        if i is None:
            i = _default(defaults, path)
        if not _same(a, i):
            raw.append(Drift(path, a, i))
    return fold_containers(raw)


def _same(a: FactValue | None, b: FactValue | None) -> bool:
    # type-strict: True must not equal 1, nor "9216" equal 9216 silently
    return a == b and type(a) is type(b)


def _default(defaults: DefaultsLike, path: str) -> FactValue | None:
    value = defaults.get(path)
    return value if isinstance(value, str | int | float | bool) else None


def fold_containers(drifts: list[Drift]) -> list[Drift]:
    containers = {d.path for d in drifts if PRESENT in (d.actual, d.intended) and None in (d.actual, d.intended)}
    if not containers:
        return drifts
    folded: dict[str, list[str]] = {c: [] for c in containers}
    kept: list[Drift] = []
    for d in drifts:
        owner = max((c for c in containers if under(d.path, c)), key=len, default=None)
        if owner is None:
            kept.append(d)
            continue
        value = d.intended if d.intended is not None else d.actual
        if value is not None and value != PRESENT:
            folded[owner].append(f"{d.path[len(owner) + 1 :]} {describe.value(d.path, value)}")
    return [Drift(d.path, d.actual, d.intended, tuple(folded[d.path])) if d.path in folded else d for d in kept]
