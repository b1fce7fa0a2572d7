"""Canonical digests of plain data: the same value gives the same digest in every process, whatever
PYTHONHASHSEED, object ids or memory layout, so a digest recorded by one build can be compared by the next.

A value is first made plain (atoms, tuples, lists): a dataclass or pydantic model becomes its class name and
its fields' values in declaration order, an enum its class and member name, a set its members sorted (a set's
own order follows string hashing, which the seed changes), a dict its items. A dict keeps its insertion order
rather than sorting its keys: that order is deterministic (the design builds it in a fixed order) and it is
what a template iterating the dict sees, so two dicts with the same items in another order may render
differently and must not share a digest. The plain value is pickled without the pickler's memo and hashed.

Shared objects (the plan's QosPlan, a platform's capabilities and template data) are made plain once per
CanonicalDigest: a frozen dataclass, a pydantic model or a dict with anything but plain fields always stands
in its container as the digest of its own plain form, so whether one was already seen never changes the
result. A value of any other type (a function, a path, a version object) raises NotCanonical: the caller must
then not trust a digest at all.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import io
import pickle
from collections.abc import Callable, Iterable
from itertools import chain
from operator import attrgetter
from typing import Any

from pydantic import BaseModel

_ATOMS: frozenset[type] = frozenset({str, int, float, bool, type(None)})
"""Types that are plain as they are (pickle tells True, 1 and 1.0 apart, and a float by its exact bits)."""

_CONTAINERS: frozenset[type] = frozenset({tuple, list, dict, set, frozenset})

_MEMO_LIMIT = 200_000
"""Entries kept before the memo starts over. It only saves work (a result never depends on it), and most
entries (one per NIC, one per BGP neighbour) are never met again."""


class NotCanonical(TypeError):
    """A value has no canonical text (its type is not plain data)."""


@dataclasses.dataclass(frozen=True, slots=True)
class _Shape:
    tag: bytes
    """b'module.Qualname' of the class."""
    values: Callable[[Any], tuple[Any, ...]]
    """Every field's value, in declaration order."""
    memo: bool
    extras: bool
    """Instances may carry attributes beyond the fields (a dataclass without slots, a model's extra or private
    attributes); a template could read them, so they are part of the text."""


class CanonicalDigest:
    """Digests of values, with a memo of the shared parts (valid while the values are not mutated, e.g. for the
    duration of one build over a read-only plan)."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[object, tuple[bytes, bytes]]] = {}
        self._shapes: dict[type, _Shape] = {}

    def digest(self, *values: object) -> str:
        """One digest over `values` (a tuple of them)."""
        return hashlib.blake2b(_dumps(self.canonical(values)), digest_size=16).hexdigest()

    def canonical(self, value: object) -> object:
        """`value` as plain data (atoms, tuples, lists) whose pickle is canonical. What netfab's own types
        become is tagged with bytes, which plain data never holds, so no plain value can take its place."""
        cls = type(value)
        if cls in _ATOMS:
            return value
        if cls is tuple or cls is list:
            return self._sequence(value, cls is tuple)  # type: ignore[arg-type]
        hit = self._memo.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        if cls is dict:
            items: dict[Any, Any] = value  # type: ignore[assignment]
            if _ATOMS.issuperset(map(type, items)) and _ATOMS.issuperset(map(type, items.values())):
                pairs = tuple(items.items())
            else:
                pairs = tuple([(self.canonical(k), self.canonical(v)) for k, v in items.items()])
            return self._remember(value, (b"dict", pairs))
        if cls is set or cls is frozenset:
            members: set[Any] | frozenset[Any] = value  # type: ignore[assignment]
            return (b"set", tuple(sorted((self.canonical(v) for v in members), key=_dumps)))
        shape = self._shapes.get(cls) or self._shape(cls)
        vals = shape.values(value)
        if not shape.extras and _plain(vals):
            # All fields plain (a cable, a NIC port, a BGP neighbour): written out in place, since hashing it on
            # its own to remember it would cost more than writing it again.
            return (shape.tag, vals)
        out: tuple[object, ...] = (shape.tag, tuple([self.canonical(v) for v in vals]))
        if shape.extras:
            out += self._extras(value)
        return self._remember(value, out) if shape.memo else out

    def _sequence(self, seq: tuple[Any, ...] | list[Any], is_tuple: bool) -> object:
        kinds = set(map(type, seq))
        if _ATOMS.issuperset(kinds):
            return seq
        if len(kinds) == 1:
            # A device's interfaces, a server's NICs: one class of plain records, written as rows of values.
            (kind,) = kinds
            if kind not in _CONTAINERS:
                shape = self._shapes.get(kind) or self._shape(kind)
                rows = list(map(shape.values, seq))
                if not shape.extras and (
                    _ATOMS.issuperset(map(type, chain.from_iterable(rows))) or all(map(_plain, rows))
                ):
                    return (b"rows", is_tuple, shape.tag, rows)
        return (b"tuple" if is_tuple else b"list", [self.canonical(v) for v in seq])

    def _remember(self, value: object, out: tuple[object, ...]) -> tuple[bytes, bytes]:
        token = (b"#", hashlib.blake2b(_dumps(out), digest_size=16).digest())
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()
        self._memo[id(value)] = (value, token)  # the reference keeps the id from being reused
        return token

    def _extras(self, value: object) -> tuple[object, ...]:
        if isinstance(value, BaseModel):
            extra = value.__pydantic_extra__ or {}
            private = value.__pydantic_private__ or {}
            return () if not extra and not private else (self.canonical(dict(extra)), self.canonical(dict(private)))
        own = getattr(value, "__dict__", None) or {}
        names = {f.name for f in dataclasses.fields(value)}  # type: ignore[arg-type]
        rest = {k: v for k, v in sorted(own.items()) if k not in names}
        return (self.canonical(rest),) if rest else ()

    def _shape(self, cls: type) -> _Shape:
        tag = f"{cls.__module__}.{cls.__qualname__}".encode()
        if issubclass(cls, enum.Enum):
            shape = _Shape(tag, lambda member: (member.name,), False, False)
        elif issubclass(cls, BaseModel):
            shape = _Shape(tag, _getter(tuple(cls.model_fields)), True, True)
        elif dataclasses.is_dataclass(cls):
            names = tuple(f.name for f in dataclasses.fields(cls))
            frozen = bool(getattr(getattr(cls, "__dataclass_params__", None), "frozen", False))
            unslotted = any("__slots__" not in c.__dict__ for c in cls.__mro__ if c is not object)
            shape = _Shape(tag, _getter(names), frozen, unslotted)
        else:
            raise NotCanonical(f"no canonical form for a {tag.decode()}")
        self._shapes[cls] = shape
        return shape


def _dumps(value: object) -> bytes:
    """The pickle of plain data, without the memo: with it, whether two equal strings are one object or two
    (an accident of how they were built) would change the bytes."""
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=5)
    pickler.fast = True  # no memo (the data is never recursive)
    pickler.dump(value)
    return buf.getvalue()


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if not names:
        return lambda _: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    many: Callable[[Any], tuple[Any, ...]] = attrgetter(*names)
    return many


def _plain(values: Iterable[Any]) -> bool:
    """Every value an atom, or a tuple or list of atoms: then the repr of `values` is canonical as it is."""
    for v in values:
        kind = type(v)
        if kind in _ATOMS:
            continue
        if (kind is tuple or kind is list) and _ATOMS.issuperset(map(type, v)):
            continue
        return False
    return True
