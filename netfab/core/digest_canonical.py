"""Canonical digests of plain data: the same value gives the same digest in every process, whatever
PYTHONHASHSEED, object ids or memory layout, so a digest recorded by one build can be compared by the next.

What is digested is the value's canonical form: a dataclass or pydantic model is its class name and its fields'
values in declaration order, an enum its class and member name, a set its members sorted (a set's own order
follows string hashing, which the seed changes), a dict its items. A dict keeps its insertion order rather than
sorting its keys: that order is deterministic (the design builds it in a fixed order) and it is what a template
iterating the dict sees, so two dicts with the same items in another order may render differently and must not
share a digest.

CanonicalDigest writes that form with the C pickler itself (protocol 3, no memo), netfab's records in place as
tag and fields and a list of one class of records as rows of field values; only records and the rare value
it cannot order (a set) cost Python code (the Python-built plain form, `_Plain`, was ~20 % of a render
worker). Shared objects (the plan's QosPlan, a platform's capabilities and template data) are digested once
per CanonicalDigest and stand as their digest wherever they are met, so whether one was already seen never
changes the result. A value of any other type (a function, a path, a version object) raises NotCanonical: the
caller must then not trust a digest at all.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import io
import ipaddress
import keyword
import pickle
from collections.abc import Callable, Iterable, Sequence
from itertools import chain
from operator import attrgetter
from types import FunctionType
from typing import Any

from pydantic import BaseModel

_ATOMS: frozenset[type] = frozenset({str, int, float, bool, type(None)})
"""Types that are plain as they are (pickle tells True, 1 and 1.0 apart, and a float by its exact bits)."""

_CONTAINERS: frozenset[type] = frozenset({tuple, list, dict, set, frozenset})

_ADDRESSES = (
    ipaddress.IPv4Address,
    ipaddress.IPv6Address,
    ipaddress.IPv4Network,
    ipaddress.IPv6Network,
    ipaddress.IPv4Interface,
    ipaddress.IPv6Interface,
)

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
    rows: Callable[[Sequence[Any]], list[tuple[Any, ...]]]
    """`values` of each record of a sequence of them."""


class CanonicalDigest:
    """Digests of values, with a memo of the shared parts (valid while the values are not mutated, e.g. for the
    duration of one build over a read-only plan).

    A value is pickled as it is, with netfab's own types reduced to their class tag and field values by
    `_reduce` (the pickler calls it for every object that is not an atom, a tuple, a list, a dict or bytes, so
    the many atoms of a plan are written by C code and never looked at in Python). Protocol 3 writes a set
    as a call of `set`, which `_reduce` sees and refuses: a value holding a set is made plain by `_Plain`
    instead (members sorted). The bytes hashed start with which of the two it was, so neither can take the
    other's digest.
    """

    def __init__(self) -> None:
        self._memo: dict[int, tuple[object, bytes]] = {}
        self._shapes: dict[type, _Shape] = {}
        self._plain = _Plain(self._shapes)
        self._buf = io.BytesIO()
        self._pickler = _Pickler(self._buf, self._reduce)

    def digest(self, *values: object) -> str:
        """One digest over `values` (a tuple of them)."""
        return self._hash(values, self._node(values, 0), self._pickler, self._buf).hex()

    def _hash(self, value: object, written: object, pickler: _Pickler, buf: io.BytesIO) -> bytes:
        """The digest of `value`, pickled as `written` (see `_node`)."""
        buf.seek(0)
        buf.truncate()
        # SHA-256 cut to 128 bits: with the CPU's SHA extensions ~2x BLAKE2b (netfab.render.manifest.digest_bytes).
        try:
            pickler.dump(written)
        except BaseException as exc:
            if pickler is self._pickler:  # a dump cut short may leave state behind (fast mode's cycle check)
                self._pickler = _Pickler(self._buf, self._reduce)
            if isinstance(exc, _Unordered):
                return hashlib.sha256(b"S" + _dumps(self._plain.canonical(value))).digest()[:16]
            if isinstance(exc, (pickle.PicklingError, ValueError, RecursionError)):  # ValueError: a cycle
                raise NotCanonical(str(exc)) from exc
            raise
        h = hashlib.sha256(b"F")
        with buf.getbuffer() as data:  # not copied; released before the buffer is truncated again
            h.update(data)
        return h.digest()[:16]

    def _node(self, values: tuple[Any, ...], level: int) -> tuple[bytes, tuple[Any, ...]]:
        """`values` as (kinds, written): one kind letter per value saying how it is written, so that no way of
        writing one value can be read as another (b"" when all are written as they are):

        - ``v`` as it is (the pickler calls `_reduce` for any record inside it);
        - ``r`` a list or tuple of one class of records (a device's interfaces, a server's NICs): (tag, is a
          tuple, rows of field values), one getter call per record;
        - ``d`` a record: (tag, kinds, written) of its fields;
        - ``t`` the digest of a shared value: a frozen record (QosPlan, a platform record), or a dict held by
          a dict passed to `digest` (a template context's template data, one per platform release);
        - ``m`` a dict passed to `digest` (a template context): (keys, kinds, written) of its values.

        Records written in place cost no `_reduce` call and no name written by the pickler (each costs more
        than the record's fields)."""
        if _ATOMS.issuperset(map(type, values)):
            return (b"", values)
        kinds = bytearray()
        out: list[Any] = []
        for v in values:
            cls = type(v)
            if cls in _ATOMS:
                kinds += b"v"
                out.append(v)
            elif cls is list or cls is tuple:
                rows = self._rows(v)
                kinds += b"v" if rows is None else b"r"
                out.append(v if rows is None else rows)
            elif cls is dict and level < 2:
                if level == 0:
                    kinds += b"m"
                    out.append((tuple(v), *self._node(tuple(v.values()), 1)))
                else:
                    kinds += b"t"
                    out.append(self._shared(v))
            elif cls in _CONTAINERS:
                kinds += b"v"  # a set or frozenset: the pickler refuses it, and the value is made plain instead
                out.append(v)
            else:
                shape = self._shapes.get(cls) or self._shape(cls)
                if shape.memo:
                    kinds += b"t"
                    out.append(self._shared_record(v, shape))
                else:
                    kinds += b"d"
                    out.append((shape.tag, *self._node(self._fields(v, shape), 2)))
        return (bytes(kinds), tuple(out))

    def _shape(self, cls: type) -> _Shape:
        shape = self._shapes[cls] = _shape(cls)
        return shape

    def _shared(self, value: object) -> bytes:
        """The digest of a shared dict, taken once (a fresh pickler: this may run inside another one's dump)."""
        hit = self._memo.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        buf = io.BytesIO()
        return self._remember(value, self._hash(value, value, _Pickler(buf, self._reduce), buf))

    def _shared_record(self, obj: object, shape: _Shape) -> bytes:
        hit = self._memo.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        buf = io.BytesIO()
        written = (shape.tag, *self._node(self._fields(obj, shape), 2))
        return self._remember(obj, self._hash(obj, written, _Pickler(buf, self._reduce), buf))

    def _remember(self, value: object, token: bytes) -> bytes:
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()
        self._memo[id(value)] = (value, token)  # the reference keeps the id from being reused
        return token

    def _reduce(self, obj: object) -> object:
        """What the pickler writes for an object it cannot write itself: a record met inside a plain
        container or a row, as a call of `_record` (or `_token`), which plain data never holds."""
        cls = type(obj)
        shape = self._shapes.get(cls)
        if shape is None:
            if obj is set or obj is frozenset:
                raise _Unordered
            if cls is FunctionType and (obj is _record or obj is _token):
                return NotImplemented  # written by name
            shape = self._shape(cls)
        if shape.memo:
            return (_token, (self._shared_record(obj, shape),))
        return (_record, (shape.tag, *self._node(self._fields(obj, shape), 2)))

    def _fields(self, obj: object, shape: _Shape) -> tuple[Any, ...]:
        vals = shape.values(obj)
        return vals + _extras(obj) if shape.extras else vals

    def _rows(self, seq: list[Any] | tuple[Any, ...]) -> tuple[bytes, bool, list[tuple[Any, ...]]] | None:
        if not seq:
            return None
        kind = type(seq[0])
        if kind in _ATOMS or kind in _CONTAINERS or len(set(map(type, seq))) != 1:
            return None
        shape = self._shapes.get(kind) or self._shape(kind)
        if shape.extras:
            return None
        return (shape.tag, type(seq) is tuple, shape.rows(seq))


class _Pickler(pickle.Pickler):
    def __init__(self, buf: io.BytesIO, reduce: Callable[[object], object]) -> None:
        # Set before __init__, which looks the hook up once (an attribute, so no method frame per call).
        self.reducer_override = reduce  # type: ignore[method-assign,assignment]
        super().__init__(buf, protocol=3)  # 3: a set is written as a call of `set` (4 and 5 write it natively)
        self.fast = True  # no memo: whether two equal strings are one object or two must not change the bytes


class _Unordered(Exception):
    """A value holds a set, which the pickle would write in hash order."""


# The callables named in the pickle for a record met inside plain data, and for a shared record's digest.
# Never called.
def _record(*_: object) -> None: ...
def _token(*_: object) -> None: ...


def _extras(value: object) -> tuple[object, ...]:
    if isinstance(value, BaseModel):
        extra = value.__pydantic_extra__ or {}
        private = value.__pydantic_private__ or {}
        # Which fields the input gave, not only their values: code may read it (a lint rule tells a stated
        # value from a default), so a value written out and the same value by default are two inputs.
        given = tuple(sorted(value.model_fields_set))
        return (given,) if not extra and not private else (given, dict(extra), dict(private))
    own = getattr(value, "__dict__", None) or {}
    names = {f.name for f in dataclasses.fields(value)}  # type: ignore[arg-type]
    rest = {k: v for k, v in sorted(own.items()) if k not in names}
    return (rest,) if rest else ()


def _shape(cls: type) -> _Shape:
    tag = f"{cls.__module__}.{cls.__qualname__}".encode()
    if issubclass(cls, enum.Enum):
        return _Shape(tag, lambda member: (member.name,), False, False, lambda seq: [(m.name,) for m in seq])
    if issubclass(cls, _ADDRESSES):
        # Immutable values whose text is canonical per class (the compressed form: one text per value).
        return _Shape(tag, lambda value: (str(value),), False, False, lambda seq: [(str(v),) for v in seq])
    if issubclass(cls, BaseModel):
        values, rows = _getters(tuple(cls.model_fields))
        return _Shape(tag, values, True, True, rows)
    if dataclasses.is_dataclass(cls):
        names = tuple(f.name for f in dataclasses.fields(cls))
        frozen = bool(getattr(getattr(cls, "__dataclass_params__", None), "frozen", False))
        unslotted = any("__slots__" not in c.__dict__ for c in cls.__mro__ if c is not object)
        values, rows = _getters(names)
        return _Shape(tag, values, frozen, unslotted, rows)
    raise NotCanonical(f"no canonical form for a {tag.decode()}")


class _Plain:
    """The plain form of values (the scheme the module doc describes), for the values the pickle below cannot
    write in a canonical order because they hold a set; with a memo of the shared parts."""

    def __init__(self, shapes: dict[type, _Shape]) -> None:
        self._memo: dict[int, tuple[object, tuple[bytes, bytes]]] = {}
        self._shapes = shapes

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
        return tuple([self.canonical(extra) for extra in _extras(value)])

    def _shape(self, cls: type) -> _Shape:
        shape = self._shapes[cls] = _shape(cls)
        return shape


def _dumps(value: object) -> bytes:
    """The pickle of plain data, without the memo: with it, whether two equal strings are one object or two
    (an accident of how they were built) would change the bytes."""
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=5)
    pickler.fast = True  # no memo (the data is never recursive)
    pickler.dump(value)
    return buf.getvalue()


def _getters(
    names: tuple[str, ...],
) -> tuple[Callable[[Any], tuple[Any, ...]], Callable[[Sequence[Any]], list[tuple[Any, ...]]]]:
    """(every field's value of a record, the same for each record of a sequence). Made as Python source for the
    class: `o.name` is specialised by the interpreter to a slot read, and one comprehension over a device's
    interfaces is ~4x `map(attrgetter(...))` (512 InterfacePlans: 80 vs 333 us)."""
    if all(n.isidentifier() and not keyword.iskeyword(n) for n in names):
        attrs = "".join(f"o.{n}, " for n in names)
        ns: dict[str, Any] = {}
        exec(f"def values(o):\n    return ({attrs})\ndef rows(seq):\n    return [({attrs}) for o in seq]\n", ns)
        return ns["values"], ns["rows"]
    values = _getter(names)
    return values, lambda seq: list(map(values, seq))


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
