"""Check an NVUE startup.yaml `set` document against NVIDIA's object model of one Cumulus Linux release.

The models are nvueschema's (PyPI, generated from NVIDIA's openapi.json per release). They ignore unknown keys,
which is exactly the mistake to catch (a 5.14 `ip` leaf under a 5.15 interface is silently dropped by the model
and refused by the switch), so the document is walked here: every key must be a field of the model at that
path, and the values are then validated by the model itself. Nothing in nvueschema is modified.
"""

from __future__ import annotations

import importlib
import types
import typing
from collections.abc import Iterator
from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError


@cache
def model(release: str) -> type[BaseModel]:
    module = importlib.import_module("nvueschema.models.v" + release.replace(".", "_"))
    root: type[BaseModel] = module.NvueConfig
    return root


def _models_in(annotation: Any) -> Iterator[Any]:
    """The BaseModel classes and Dict value types an annotation admits (through Optional, Union, Annotated)."""
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


def errors(release: str, doc: dict[str, Any]) -> list[str]:
    """Why `doc` (the `set` mapping) is not a valid configuration of `release`; [] when it is."""
    root = model(release)
    found = list(_unknown_keys(root, doc, ""))
    try:
        root.model_validate(doc)
    except ValidationError as exc:
        found += [f"/{'/'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
    return found
