"""Walk a JSON/YAML config document (SONiC config_db, NVUE startup.yaml) into facts with pointer rules.

A PointerRule matches a leaf by its JSON-pointer segments ('*' captures one segment) and says which facts the
leaf carries. A leaf no rule claims is compared as a catch-all fact (``config[/PORT/*/fec]`` under its
interface when the pointer names a port), so every rendered value counts. Dict key order never matters;
lists of scalars are compared as sets (config_db lists such as ecmp_hash are unordered by the YANG model).

Scope: netfab manages the subtrees it renders. Only the running document's branches the intended document
also has (``managed`` roots) are compared; device-owned branches (FEATURE, AAA...) are counted, not reported.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from netfab.audit.facts.clitree import Acc, Emitted, join_values
from netfab.audit.model import PRESENT, Facts, FactValue
from netfab.audit.rules import join_pointer

Segments = tuple[str, ...]


@dataclass(frozen=True)
class PointerRule:
    pattern: Segments
    emit: Callable[[tuple[str, ...], Any], Emitted]
    """Gets the captured segments (in order) and the leaf value."""


def prule(pointer: str, emit: Callable[[tuple[str, ...], Any], Emitted]) -> PointerRule:
    return PointerRule(tuple(pointer.strip("/").split("/")), emit)


def flatten(doc: Any, prefix: Segments = ()) -> Iterator[tuple[Segments, Any]]:
    """Leaves of a document: scalars, lists, and empty mappings (which mean "this key exists")."""
    if isinstance(doc, dict):
        if not doc and prefix:
            yield prefix, PRESENT
        for key, value in doc.items():
            yield from flatten(value, (*prefix, str(key)))
    else:
        yield prefix, doc


def scalar(value: Any) -> FactValue:
    if isinstance(value, list):
        return join_values(str(v) for v in value)
    if value is None:
        return "null"
    if isinstance(value, bool | int | float | str):
        return value
    return str(value)


@dataclass(frozen=True)
class JsonShape:
    rules: tuple[PointerRule, ...]
    port_of: Callable[[Segments], str | None]
    """The port a pointer belongs to (catch-all facts go under interface[port]), or None."""

    def index(self) -> dict[tuple[int, str], list[PointerRule]]:
        out: dict[tuple[int, str], list[PointerRule]] = defaultdict(list)
        for r in self.rules:
            out[len(r.pattern), r.pattern[0]].append(r)
        return out


def extract(
    doc: Any,
    shape: JsonShape,
    managed: Callable[[Segments], bool],
    excluded: Callable[[Segments], bool],
) -> tuple[Facts, int]:
    """(facts, number of leaves outside netfab's scope)."""
    index = shape.index()
    facts: Facts = {}
    sets: dict[str, set[FactValue]] = {}
    unmanaged = 0
    for segs, value in flatten(doc):
        if not segs or excluded(segs):
            continue
        if not managed(segs):
            unmanaged += 1
            continue
        emitted = _match(index.get((len(segs), segs[0]), ()), segs, value)
        if emitted is None:
            port = shape.port_of(segs)
            pointer = join_pointer(["*" if s == port else s for s in segs])
            facts[f"interface[{port}].config[{pointer}]" if port else f"config[{pointer}]"] = scalar(value)
            continue
        for path, v in emitted:
            if isinstance(v, Acc):
                sets.setdefault(path, set()).add(v.value)
            else:
                facts[path] = v
    for path, values in sets.items():
        facts[path] = join_values(values)
    return facts, unmanaged


def _match(rules: list[PointerRule] | tuple[()], segs: Segments, value: Any) -> list[tuple[str, Any]] | None:
    for r in rules:
        captured: list[str] = []
        for p, s in zip(r.pattern, segs, strict=True):
            if p == "*":
                captured.append(s)
            elif p != s:
                break
        else:
            return list(r.emit(tuple(captured), value))
    return None


def managed_roots(intended: Any, depth_by_root: dict[str, int] | None = None) -> Callable[[Segments], bool]:
    """A predicate: is this pointer inside a branch the intended document renders? Roots are the intended
    document's top-level keys, or deeper (depth_by_root) where a top-level key is shared with the device."""
    depth_by_root = depth_by_root or {}
    roots: set[Segments] = set()
    if isinstance(intended, dict):
        for key, value in intended.items():
            depth = depth_by_root.get(str(key), 1)
            if depth > 1 and isinstance(value, dict):
                roots.update((str(key), str(sub)) for sub in value)
            else:
                roots.add((str(key),))

    def inside(segs: Segments) -> bool:
        return segs[:1] in roots or segs[:2] in roots

    return inside


def as_int(value: Any) -> int | str:
    try:
        return int(value)
    except (TypeError, ValueError):
        return str(value)
