"""NVUE startup.yaml checked against NVIDIA's object model of one Cumulus Linux release, as the PyPI package
`nvueschema` generates it from NVIDIA's openapi.json (one pydantic model per release, no network at run time).
The one NVUE checker of the suite: the oracle matrix (tests/oracles) and the per-release render tests
(tests/render/test_nvue_releases.py) both use it. Nothing in nvueschema is modified.

The generated models ignore unknown keys (pydantic's default) and coerce values, so validation alone would
accept a misspelt or removed object. Each document is therefore also walked against the model's fields (a key
no field names is unknown to that release, reported even where validation fails elsewhere, so one run shows
every kind of mistake), and a valid one is dumped back through the model: a value that came back changed was
coerced (e.g. 'on' into a boolean). All count as errors, as `nv config replace` would refuse them.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import marshal
import types
import typing
from collections.abc import Iterator
from functools import cache
from typing import Any

import yaml
from nvueschema.models._versions import VERSIONS
from pydantic import BaseModel, ValidationError

__all__ = ["VERSIONS", "errors", "model_release", "set_errors"]

# libyaml's parser where PyYAML was built with it: the pure-Python one costs more than the validation.
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def _model(release: str) -> type[BaseModel]:
    module = importlib.import_module("nvueschema.models.v" + release.replace(".", "_"))
    model: type[BaseModel] = module.NvueConfig
    return model


def model_release(os_version: str | None) -> str:
    """The model a device at `os_version` is checked against: its major.minor, the newest for an unset one."""
    if os_version is None:
        return VERSIONS[-1]
    major_minor = ".".join(os_version.split(".")[:2])
    if major_minor not in VERSIONS:
        raise ValueError(f"nvueschema has no model of Cumulus Linux {os_version} (it has {', '.join(VERSIONS)})")
    return major_minor


_PARSED: dict[str, bytes] = {}


def _parsed(text: str) -> Any:
    """The YAML of `text`, parsed once per distinct text: every release of a cell renders the same file, and
    YAML parsing costs more than validating it. Kept marshalled (types intact, a fraction of the objects'
    memory); a YAML value marshal cannot hold (a date) is parsed afresh each time."""
    key = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if key in _PARSED:
        return marshal.loads(_PARSED[key])
    document = yaml.load(text, Loader=_LOADER)
    with contextlib.suppress(ValueError):
        _PARSED[key] = marshal.dumps(document)
    return document


def errors(text: str, release: str) -> list[str]:
    """What the `release` model finds wrong in one startup.yaml ([] = valid)."""
    try:
        document = _parsed(text)
    except yaml.YAMLError as exc:
        return [f"not YAML: {exc}"]
    if not isinstance(document, list):
        return ["startup.yaml is a list of operations (- set: ...)"]
    problems: list[str] = []
    for index, operation in enumerate(document):
        if not isinstance(operation, dict) or set(operation) - {"set", "header"}:
            problems.append(f"[{index}]: an operation is `set:` (or the `header:`), got {operation!r:.80}")
            continue
        if "set" in operation:
            problems.extend(set_errors(operation["set"], release))
    return problems


def set_errors(body: Any, release: str) -> list[str]:
    """What the `release` model finds wrong in one `set:` mapping ([] = valid): keys it has no field for, its
    validation errors, and (when it validates) every value it coerced."""
    model = _model(release)
    unknown = list(_unknown_keys(model, body, ""))
    try:
        parsed = model.model_validate(body)
    except ValidationError as exc:
        invalid = [
            f"/{'/'.join(str(p) for p in e['loc'])}: {e['msg']} (got {e.get('input')!r:.60})" for e in exc.errors()
        ]
        return unknown + invalid
    kept = parsed.model_dump(by_alias=True, exclude_unset=True, mode="json")
    # A key the walk already reported is also missing from the dump: say it once.
    return unknown + [c for c in _changes(body, kept, "") if not c.endswith("(dropped)") or not unknown]


def _models_in(annotation: Any) -> Iterator[Any]:
    """The BaseModel classes and dict value types an annotation admits (through Optional, Union, Annotated)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        yield from _models_in(typing.get_args(annotation)[0])
    elif origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            yield from _models_in(arg)
    elif origin is dict:
        yield ("dict", typing.get_args(annotation)[1])
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation


def _unknown_keys(cls: type[BaseModel], value: Any, path: str) -> Iterator[str]:
    if not isinstance(value, dict):
        return
    fields = {(f.alias or name): f for name, f in cls.model_fields.items()}
    for key, item in value.items():
        field = fields.get(str(key))
        if field is None:
            yield f"{path}/{key}: not in the model"
            continue
        for target in _models_in(field.annotation):
            if isinstance(target, tuple):
                inner = [m for m in _models_in(target[1]) if not isinstance(m, tuple)]
                if inner and isinstance(item, dict):
                    for k, v in item.items():
                        yield from _unknown_keys(inner[0], v, f"{path}/{key}/{k}")
            else:
                yield from _unknown_keys(target, item, f"{path}/{key}")


def _changes(given: Any, kept: Any, path: str) -> Any:
    if isinstance(given, dict) and isinstance(kept, dict):
        for key, value in given.items():
            if key not in kept:
                yield f"{path}/{key}: not in the model (dropped)"
            else:
                yield from _changes(value, kept[key], f"{path}/{key}")
    elif isinstance(given, list) and isinstance(kept, list) and len(given) == len(kept):
        for index, (a, b) in enumerate(zip(given, kept, strict=True)):
            yield from _changes(a, b, f"{path}[{index}]")
    elif given != kept and not _same_number(given, kept):
        yield f"{path}: {given!r} was coerced to {kept!r}"


def _same_number(a: Any, b: Any) -> bool:
    numbers = (int, float)
    return isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and a == b
