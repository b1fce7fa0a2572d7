"""Turn a pydantic ValidationError into Findings that point at the user's YAML line, with a hint.

Works for any pydantic model. Pass the root model class as `model` to get "did you mean" suggestions for
unknown fields; without it the hints are generic.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from netfab.core.findings import Finding, Location, Severity
from netfab.load.merge import IntentSource
from netfab.load.yamlsource import DataPath, dotted

_MISSING = {"missing", "union_tag_not_found", "missing_argument", "missing_keyword_only_argument"}
_EXTRA = {"extra_forbidden", "unexpected_keyword_argument"}
_TYPE_HINTS = {
    "int": "write a whole number without quotes",
    "float": "write a number without quotes",
    "bool": "use true or false",
    "dict": "expected a mapping here (indented `key: value` lines)",
    "model": "expected a mapping here (indented `key: value` lines)",
    "list": "expected a list here (`- item` lines or [a, b])",
    "string": "expected text here; quote it if YAML reads it as a number or boolean",
}


def validation_findings(
    err: ValidationError, source: IntentSource, model: type[BaseModel] | None = None
) -> list[Finding]:
    return [_finding(error, source, model) for error in err.errors(include_url=False)]


def _finding(error: Any, source: IntentSource, model: type[BaseModel] | None) -> Finding:
    kind: str = error["type"]
    path, is_key_error = _data_path(error["loc"], source.data)
    where = dotted(path) or "(top level)"
    family = _family(kind)
    message = f"{where}: {error['msg']}"
    # A whole section (a model validator's input) is never echoed: the message already names the fields, and
    # a truncated dict dump is noise; a scalar's value is.
    if (
        family in ("type", "value")
        and kind not in ("model_type", "dict_type")
        and not isinstance(error.get("input"), dict | list)
    ):
        message += f" (got {_short(error.get('input'))})"
    hint = _hint(family, kind, path, error, source, model)
    location = _location(family, kind, path, source, is_key_error, error.get("ctx") or {})
    return Finding(f"SCHEMA-{family}", Severity.ERROR, message, location, hint, dotted(path))


def _data_path(loc: Sequence[str | int], data: Any) -> tuple[DataPath, bool]:
    """pydantic's loc with its own markers removed, so it names a path that exists in the YAML.

    Unions and validators insert segments such as ``Leaf`` or ``function-after[...]`` into loc; a segment that
    is not in the data is one of those, unless it is the last one (a missing or mistyped field).
    """
    path: list[str | int] = []
    cursor: Any = data
    is_key_error = False
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if part == "[key]":  # dict-key validation: the problem is the key itself
            is_key_error = True
            continue
        present = (isinstance(cursor, Mapping) and part in cursor) or (
            isinstance(cursor, list) and isinstance(part, int) and -len(cursor) <= part < len(cursor)
        )
        if present:
            cursor = cursor[part]
        elif not last:
            continue
        path.append(part)
    return tuple(path), is_key_error


def _family(kind: str) -> str:
    if kind in _MISSING:
        return "missing"
    if kind in _EXTRA:
        return "extra"
    if kind.endswith(("_type", "_parsing")) or kind in ("is_instance_of", "is_subclass_of"):
        return "type"
    return "value"


def _location(
    family: str, kind: str, path: DataPath, source: IntentSource, is_key_error: bool, ctx: dict[str, Any]
) -> Location:
    smap = source.source_map
    if family == "extra" or is_key_error:
        return smap.key_location(path) or smap.locate(path)
    if kind == "union_tag_invalid":  # point at the wrong `kind: c`, not at the whole item
        return smap.locate((*path, _discriminator(ctx)))
    if family == "missing" and path and path not in smap.values:
        # Report at the key that opens the parent mapping (`qos:`), which reads better than its first child.
        return smap.key_location(path[:-1]) or smap.locate(path)
    return smap.locate(path)


def _discriminator(ctx: dict[str, Any]) -> str:
    return str(ctx.get("discriminator", "")).strip("'\"")


def _hint(family: str, kind: str, path: DataPath, error: Any, source: IntentSource, model: Any) -> str:
    name = path[-1] if path else ""
    if family == "extra":
        allowed = _allowed_fields(model, path[:-1]) if model is not None else []
        if name in allowed:  # allowed in a sibling variant of an undiscriminated union
            return f"'{name}' belongs to another variant here; check which variant this entry is meant to be"
        close = difflib.get_close_matches(str(name), allowed, n=3, cutoff=0.6)
        if close:
            return "did you mean " + " or ".join(f"'{c}'" for c in close) + "?"
        if allowed:
            return "remove it or check spelling; allowed here: " + ", ".join(sorted(allowed))
        return "remove it or check spelling"
    ctx = error.get("ctx") or {}
    if kind == "union_tag_not_found":
        return f"add '{_discriminator(ctx)}' to say which kind of entry this is"
    if kind == "union_tag_invalid":
        return f"'{_discriminator(ctx)}' must be one of {ctx.get('expected_tags', '')}"
    if family == "missing":
        parent = dotted(path[:-1]) or "the top level"
        siblings = _keys_at(source.data, path[:-1])
        typo = difflib.get_close_matches(str(name), siblings, n=1, cutoff=0.6)
        if typo and typo[0] != name:
            return f"add '{name}' under {parent} ('{typo[0]}' is written there: a misspelling?)"
        return f"add '{name}' under {parent}"
    if family == "type":
        return _TYPE_HINTS.get(kind.split("_")[0], "check the type of this value")
    if "expected" in ctx:
        return f"allowed: {ctx['expected']}"
    bounds = [f"{op} {ctx[key]}" for key, op in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")) if key in ctx]
    if bounds:
        return "must be " + " and ".join(bounds)
    return "check the value against the field's documented constraints"


def _keys_at(data: Any, path: DataPath) -> list[str]:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return []
    return [str(k) for k in data] if isinstance(data, Mapping) else []


def _allowed_fields(model: Any, path: DataPath) -> list[str]:
    """Field names (and aliases) of the model(s) that validate the mapping at `path`."""
    current = [model]
    for part in path:
        current = [child for tp in current for t in _flatten(tp) for child in _child_types(t, part)]
    names: set[str] = set()
    for tp in current:
        for t in _flatten(tp):
            if _is_model(t):
                names.update(_input_names(t))
    return sorted(names)


def _input_names(model: type[BaseModel]) -> list[str]:
    """The keys a user may write: the alias, plus the field name only where the model accepts it."""
    config = model.model_config
    by_name = bool(config.get("populate_by_name") or config.get("validate_by_name"))
    names = []
    for field_name, info in model.model_fields.items():
        alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
        if alias:
            names.append(alias)
        if not alias or by_name:
            names.append(field_name)
    return names


def _child_types(tp: Any, part: str | int) -> list[Any]:
    if _is_model(tp):
        for field_name, info in tp.model_fields.items():
            if part in (field_name, info.alias):
                return [info.annotation]
        return []
    origin, args = get_origin(tp), get_args(tp)
    if origin is None or not args:
        return []
    if isinstance(origin, type) and issubclass(origin, Mapping):
        return [args[-1]]
    if origin is tuple and isinstance(part, int) and args[-1] is not Ellipsis:
        return [args[part]] if 0 <= part < len(args) else []
    if isinstance(origin, type) and issubclass(origin, (Sequence, set, frozenset)):
        return [args[0]]
    return []


def _flatten(tp: Any) -> list[Any]:
    """Strip Annotated/Optional/Union so that `Annotated[list[X] | None, ...]` yields `list[X]`."""
    origin = get_origin(tp)
    if origin is Annotated:
        return _flatten(get_args(tp)[0])
    if origin is Union or origin is types.UnionType:
        return [t for arg in get_args(tp) for t in _flatten(arg)]
    return [tp]


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
