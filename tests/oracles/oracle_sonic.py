"""SONiC config_db.json checked against SONiC's own YANG models (sonic-buildimage src/sonic-yang-models), with
libyang, translated into YANG instance data the way SONiC's sonic-yang-mgmt does it:

- a table T is the container `sonic-<x>:sonic-<x>/T` of the module whose top-level container holds it;
- a row key "A|B" fills the keys of the table's first list whose key count matches (tables with several lists,
  INTERFACE_LIST / INTERFACE_IPPREFIX_LIST, are told apart that way); a table without lists (DEVICE_METADATA,
  SWITCH_HASH) has one container per row key instead;
- a list with an inner list is a map (DSCP_TO_TC_MAP, CABLE_LENGTH...): each field of the row is one inner entry,
  field -> the inner key, value -> its other leaf;
- values are strings in CONFIG_DB; a leaf typed uint8-32/int8-32 takes a JSON number (RFC 7951), a boolean a JSON
  boolean; a leaf-list given as a string is split on commas (CONFIG_DB's `field@` form, e.g. profile_list).

A table no loaded module models is an error, as it is for SONiC's patch tool (GCU refuses changes to it);
tables.tsv tells "SONiC has no model for T" from "the oracle copy lacks T's module" (then the copy needs it).
The schema is read into plain tuples once: walking libyang's schema nodes per value costs more than validating.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import libyang as ly

from netfab.deploy.drivers.sonic import owned_target

NUMBER_TYPES = frozenset({"uint8", "uint16", "uint32", "int8", "int16", "int32"})

Leaves = dict[str, tuple[str, bool]]
"""field -> (YANG base type, is a leaf-list)."""


@dataclass(frozen=True)
class MapShape:
    """The inner list of a map row: one entry per CONFIG_DB field."""

    name: str
    key: tuple[str, str]
    value: tuple[str, str]


@dataclass(frozen=True)
class ListShape:
    name: str
    keys: tuple[tuple[str, str], ...]
    leaves: Leaves
    inner_map: MapShape | None


@dataclass(frozen=True)
class TableShape:
    module: str
    lists: tuple[ListShape, ...]
    rows: dict[str, Leaves]
    """Tables without lists: row key -> that container's leaves."""


class TranslationError(ValueError):
    """A config_db row that cannot be mapped onto its table's model (unknown field, key count, ...)."""


def _leaves(node: Any) -> Leaves:
    return {
        c.name(): (c.type().basename(), isinstance(c, ly.SLeafList))
        for c in node.children(types=(ly.SNode.LEAF, ly.SNode.LEAFLIST))
    }


def _list_shape(node: Any) -> ListShape:
    # SList.keys() is libyang's list of key leaves, not a dict's keys (hence the noqa).
    keys = tuple((k.name(), k.type().basename()) for k in node.keys())  # noqa: SIM118
    inner = next(iter(node.children(types=(ly.SNode.LIST,))), None)
    inner_map = None
    if inner is not None:
        (inner_key,) = [(k.name(), k.type().basename()) for k in inner.keys()]  # noqa: SIM118
        value = next((n, t) for n, (t, _) in _leaves(inner).items() if n != inner_key[0])
        inner_map = MapShape(inner.name(), inner_key, value)
    return ListShape(node.name(), keys, _leaves(node), inner_map)


class SonicYang:
    """The models under `folder`, compiled once; `errors(config_db)` lists what they refuse."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.ctx = ly.Context(str(folder))
        self.tables: dict[str, TableShape] = {}
        for path in sorted(folder.glob("*.yang")):
            module = self.ctx.load_module(path.stem)
            top: Any = next(iter(module.children(types=(ly.SNode.CONTAINER,))), None)
            if top is None or top.name() != module.name():
                continue  # typedefs and groupings only
            for table in top.children(types=(ly.SNode.CONTAINER,)):
                if table.config_false():
                    continue
                lists = tuple(_list_shape(lst) for lst in table.children(types=(ly.SNode.LIST,)))
                rows = {c.name(): _leaves(c) for c in table.children(types=(ly.SNode.CONTAINER,))}
                self.tables[table.name()] = TableShape(module.name(), lists, rows)
        self.upstream = _upstream_tables(folder / "tables.tsv")

    def errors(self, config_db: dict[str, Any]) -> list[str]:
        """Every problem SONiC's models find in one config_db document ([] = valid). libyang stops at its first
        error, so a document has at most one libyang message besides the translation's."""
        problems: list[str] = []
        data: dict[str, dict[str, Any]] = {}
        for name, rows in config_db.items():
            table = self.tables.get(name)
            if table is None:
                if name in self.upstream:
                    problems.append(f"{name}: oracle copy lacks module {self.upstream[name]} (add it to the oracle)")
                else:
                    problems.append(f"{name}: table has no YANG model in SONiC (GCU refuses it)")
                continue
            try:
                body = _table(table, rows, name)
            except TranslationError as exc:
                problems.append(str(exc))
                continue
            data.setdefault(f"{table.module}:{table.module}", {})[f"{table.module}:{name}"] = body
        try:
            tree = self.ctx.parse_data_mem(json.dumps(data), "json", strict=True, no_state=True)
            if tree is not None:
                tree.free()
        except ly.LibyangError as exc:
            problems.append(str(exc).removeprefix("failed to parse data tree: "))
        return problems


def _table(table: TableShape, rows: dict[str, Any], name: str) -> dict[str, Any]:
    if not isinstance(rows, dict):
        raise TranslationError(f"{name}: a table is an object of rows")
    if not table.lists:
        out: dict[str, Any] = {}
        for key, fields in rows.items():
            leaves = table.rows.get(key)
            if leaves is None:
                raise TranslationError(f"{name}|{key}: the model has no row {key!r} (rows: {sorted(table.rows)})")
            out[key] = _fields(leaves, fields, name, key)
        return out
    lists: dict[str, list[dict[str, Any]]] = {}
    for key, fields in rows.items():
        parts = key.split("|")
        shape = next((s for s in table.lists if len(s.keys) == len(parts)), None)
        if shape is None:
            raise TranslationError(f"{name}|{key}: no list of {name} has {len(parts)} key part(s)")
        entry = {k: _value(base, part, name, key, k) for (k, base), part in zip(shape.keys, parts, strict=True)}
        if shape.inner_map is None:
            entry.update(_fields(shape.leaves, fields, name, key))
        elif fields:
            m = shape.inner_map
            entry[m.name] = [
                {m.key[0]: _value(m.key[1], f, name, key, f), m.value[0]: _value(m.value[1], v, name, key, f)}
                for f, v in fields.items()
            ]
        lists.setdefault(shape.name, []).append(entry)
    return lists


def _fields(leaves: Leaves, fields: Any, table: str, key: str) -> dict[str, Any]:
    if not isinstance(fields, dict):
        raise TranslationError(f"{table}|{key}: a row is an object of fields")
    out: dict[str, Any] = {}
    for name, value in fields.items():
        found = leaves.get(name)
        if found is None:
            raise TranslationError(f"{table}|{key}: field {name!r} is not in the model")
        base, is_list = found
        if is_list:
            items = value.split(",") if isinstance(value, str) else value
            if not isinstance(items, list):
                raise TranslationError(f"{table}|{key}: field {name!r} is a leaf-list, given {value!r}")
            out[name] = [_value(base, item, table, key, name) for item in items]
        else:
            out[name] = _value(base, value, table, key, name)
    return out


def _value(base: str, value: Any, table: str, key: str, field: str) -> Any:
    if not isinstance(value, str):
        raise TranslationError(f"{table}|{key}: {field} = {value!r}: CONFIG_DB values are strings")
    if base in NUMBER_TYPES:
        try:
            return int(value, 10)
        except ValueError:
            return value  # libyang then reports the type error in the model's own words
    if base == "boolean" and value in ("true", "false"):
        return value == "true"
    return value


def as_deployed(config_db: dict[str, Any]) -> dict[str, Any]:
    """The CONFIG_DB a switch ends with: netfab's document applied by the deploy (owned_target) onto a stand-in
    factory CONFIG_DB.

    netfab's document is a patch of what it owns (FIDELITY_REVIEW SON-2): without a hwsku it writes no PORT lanes
    and no DEVICE_METADATA hwsku/platform/mac, which SONiC's models make mandatory and which every real switch's
    factory config has. Judging the document alone would fail on fields the device owns; judging it merged onto
    a factory config judges what the patch tool would be asked to accept. The stand-in's lanes are distinct per
    port and say nothing about the hardware (the hwsku tests check real lanes).
    """
    ports = config_db.get("PORT", {})
    factory: dict[str, Any] = {
        "DEVICE_METADATA": {
            "localhost": {"hwsku": "stand-in", "platform": "x86_64-stand_in-r0", "mac": "02:00:00:00:00:01"}
        },
        "PORT": {name: {"lanes": str(1000 + 8 * i)} for i, name in enumerate(sorted(ports))},
    }
    return owned_target(factory, config_db)


def _upstream_tables(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    rows = (line.split("\t") for line in path.read_text(encoding="utf-8").splitlines() if line and line[0] != "#")
    return {r[0]: r[1] for r in rows if len(r) >= 2}


@cache
def sonic_yang(folder: Path) -> SonicYang:
    return SonicYang(folder)
