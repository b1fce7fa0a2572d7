"""The switch-model catalogue: every netfab/platforms/models/<name>.yaml, validated once per process.

NETFAB_PLATFORMS_PATH roots may add `<root>/models/<name>.yaml` for hardware netfab does not ship. An entry
with `base: <other>` starts from that entry's fields (a SONiC hwsku refines its box). The platform records'
`switch_models` slot lists, per NOS, the entries that run it (netfab.platforms.load_registry attaches them).

Public entry points: `switch_model(name)` (UnknownSwitchModel with a did-you-mean), `model_names()`,
`models_for(platform)`.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from netfab.platforms import ENV_PATH, PlatformRecordError, Registry, _extra_roots, platform_names, registry
from netfab.platforms.hardware import SwitchModel

MODELS = "models"
_BUILTIN = Path(__file__).resolve().parent / MODELS


class UnknownSwitchModel(KeyError, ValueError):
    """No catalogue entry has this name (a KeyError for lookups, a ValueError for intent validation)."""

    def __str__(self) -> str:
        return str(self.args[0])


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`over` on top of `base`, mappings merged key by key (lists and scalars replaced whole)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _read_raw(path: Path, user_supplied: bool) -> dict[str, Any]:
    import yaml

    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise PlatformRecordError(f"switch model {path}: {exc}", user_supplied) from exc
    if not isinstance(raw, dict):
        raise PlatformRecordError(f"switch model {path}: expected a mapping", user_supplied)
    if raw.get("name") != path.stem:
        raise PlatformRecordError(f"switch model {path}: name must be the file's stem {path.stem!r}", user_supplied)
    return raw


def load_catalogue(extra: tuple[Path, ...] = (), known: frozenset[str] | None = None) -> dict[str, SwitchModel]:
    """Every entry of the built-in catalogue plus `<root>/models/` of each extra root, bases merged; each
    entry's platforms must be in `known` (default: the registered platform names)."""
    from pydantic import ValidationError

    raws: dict[str, tuple[dict[str, Any], Path, bool]] = {}
    for root, user_supplied in ((_BUILTIN, False), *((Path(p) / MODELS, True) for p in extra)):
        if not root.is_dir():
            continue
        for path in sorted(root.glob("*.yaml")):
            raw = _read_raw(path, user_supplied)
            if raw["name"] in raws:
                raise PlatformRecordError(
                    f"switch model {path}: {raw['name']!r} is already defined by {raws[raw['name']][1]}", user_supplied
                )
            raws[raw["name"]] = (raw, path, user_supplied)

    def resolved(name: str, chain: tuple[str, ...]) -> dict[str, Any]:
        raw, path, user_supplied = raws[name]
        base = raw.get("base")
        if base is None:
            return raw
        if base in chain or base not in raws:
            why = "a base cycle" if base in chain else "an unknown base"
            raise PlatformRecordError(f"switch model {path}: {why} {base!r}", user_supplied)
        # The base's own `base` and `notes` describe the base, not this entry.
        parent = {k: v for k, v in resolved(base, (*chain, name)).items() if k not in ("base", "notes")}
        return _merge(parent, raw)

    known = known if known is not None else frozenset(platform_names())
    out: dict[str, SwitchModel] = {}
    for name, (_, path, user_supplied) in raws.items():
        try:
            model = SwitchModel.model_validate(resolved(name, (name,)))
        except ValidationError as exc:
            raise PlatformRecordError(f"switch model {path}: {exc}", user_supplied) from exc
        unknown = [p for p in model.platforms if p not in known]
        if unknown:
            raise PlatformRecordError(f"switch model {path}: runs unknown platforms {unknown}", user_supplied)
        out[name] = model
    return out


@cache
def _catalogue(reg: Registry) -> dict[str, SwitchModel]:
    return {m.name: m for spec in reg.specs.values() for m in spec.switch_models}


def catalogue() -> Mapping[str, SwitchModel]:
    """Every entry, by name: read with the platform records (one parse per process), from their slots."""
    return _catalogue(registry())


@cache
def _names(env_value: str) -> tuple[str, ...]:
    roots = (_BUILTIN, *(p / MODELS for p in _extra_roots(env_value)))
    return tuple(sorted({p.stem for root in roots if root.is_dir() for p in root.glob("*.yaml")}))


def model_names() -> tuple[str, ...]:
    """Catalogue names from the file names alone (the intent's schema enum needs no entry parsed)."""
    return _names(os.environ.get(ENV_PATH, ""))


def did_you_mean(name: str, names: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(name.lower(), names, n=3, cutoff=0.5)
    return (" (did you mean " + " or ".join(repr(c) for c in close) + "?)") if close else ""


def switch_model(name: str) -> SwitchModel:
    """The catalogue entry `name`; UnknownSwitchModel (with a did-you-mean) when there is none."""
    models = catalogue()
    try:
        return models[name]
    except KeyError:
        raise UnknownSwitchModel(
            f"unknown switch model {name!r}{did_you_mean(name, tuple(models))} (`netfab schema` lists them)"
        ) from None


def models_for(platform: str) -> tuple[SwitchModel, ...]:
    """The entries that run NOS record `platform`, by name."""
    return tuple(m for _, m in sorted(catalogue().items()) if platform in m.platforms)


def clear_cache() -> None:
    _catalogue.cache_clear()
    _names.cache_clear()


__all__ = [
    "UnknownSwitchModel",
    "catalogue",
    "clear_cache",
    "did_you_mean",
    "load_catalogue",
    "model_names",
    "models_for",
    "switch_model",
]
