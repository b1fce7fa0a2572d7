"""The platform registry: every NOS netfab knows, one record each (netfab/platforms/<name>/platform.yaml).

Built-in records ship in this package; NETFAB_PLATFORMS_PATH (directories separated by os.pathsep) adds more:
each `<dir>/<name>/platform.yaml` is a record, and `<dir>/<name>/templates/` (when present) holds its
templates, else they are looked up under templates/<name>/ like the built-ins'. Records are read and
validated once per process (per value of the variable), all of them at once, so a broken record fails the
first command that needs any platform, with the file and the field, never half-way through a build.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the model imports capabilities, which import the intent's types, which ask for names here
    from netfab.platforms.model import PlatformSpec

ENV_PATH = "NETFAB_PLATFORMS_PATH"
RECORD = "platform.yaml"
_BUILTIN = Path(__file__).resolve().parent


class PlatformRecordError(Exception):
    """A platform record is missing, unreadable or invalid. `user_supplied`: it came from NETFAB_PLATFORMS_PATH
    (bad input, exit 2) rather than from netfab's own package (a packaging bug)."""

    def __init__(self, message: str, user_supplied: bool) -> None:
        super().__init__(message)
        self.user_supplied = user_supplied


class UnknownPlatform(KeyError, ValueError):
    """No record has this name (a KeyError for lookups, a ValueError for validation)."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True, eq=False)  # identity hash: caches key on the registry a value came from
class Registry:
    specs: Mapping[str, PlatformSpec]
    template_dirs: Mapping[str, Path]
    sources: Mapping[str, Path]

    def names(self) -> tuple[str, ...]:
        return tuple(self.specs)

    def spec(self, name: str) -> PlatformSpec:
        try:
            return self.specs[name]
        except KeyError:
            raise UnknownPlatform(f"unknown platform {name!r}; known: {', '.join(self.specs)}") from None


def _read(path: Path, user_supplied: bool) -> PlatformSpec:
    import yaml
    from pydantic import ValidationError

    from netfab.platforms.model import PlatformSpec

    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        spec = PlatformSpec.model_validate(raw)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValidationError) as exc:
        raise PlatformRecordError(f"platform record {path}: {exc}", user_supplied) from exc
    if spec.name != path.parent.name:
        raise PlatformRecordError(f"{path} describes {spec.name!r}; its folder must have that name", user_supplied)
    return spec


def _record_dirs(root: Path) -> list[Path]:
    return sorted(d for d in root.iterdir() if (d / RECORD).is_file())


def load_registry(extra: tuple[Path, ...] = ()) -> Registry:
    """The built-in records plus those under each of `extra`, cross-checked."""
    from netfab.core.paths import templates_dir

    specs: dict[str, PlatformSpec] = {}
    template_dirs: dict[str, Path] = {}
    sources: dict[str, Path] = {}
    roots = [(_BUILTIN, False), *((Path(p), True) for p in extra)]
    for root, user_supplied in roots:
        if user_supplied and not root.is_dir():
            raise PlatformRecordError(f"{ENV_PATH}: {root} is not a directory", True)
        for folder in _record_dirs(root):
            spec = _read(folder / RECORD, user_supplied)
            if spec.name in specs:
                raise PlatformRecordError(
                    f"{folder / RECORD}: platform {spec.name!r} is already defined by {sources[spec.name]}",
                    user_supplied,
                )
            specs[spec.name] = spec
            sources[spec.name] = folder / RECORD
            own = folder / "templates"
            template_dirs[spec.name] = own if user_supplied and own.is_dir() else templates_dir() / spec.name
    from netfab.platforms.catalogue import load_catalogue

    models = load_catalogue(extra, frozenset(specs))
    for name, spec in specs.items():
        runs = tuple(m for _, m in sorted(models.items()) if name in m.platforms)
        specs[name] = spec.model_copy(update={"switch_models": runs})
    for spec in specs.values():
        for output, part in spec.audited:
            if part.kind != "cli":
                continue
            other = specs.get(part.syntax) if part.syntax else spec
            if other is None or other.cli is None:
                raise PlatformRecordError(
                    f"{sources[spec.name]}: output {output.file} reads as {part.syntax!r}, which has no cli: section",
                    sources[spec.name].parent.parent != _BUILTIN,
                )
    return Registry(specs, template_dirs, sources)


def _extra_roots(env_value: str) -> tuple[Path, ...]:
    return tuple(Path(p) for p in env_value.split(os.pathsep) if p)


@cache
def _registry(env_value: str) -> Registry:
    return load_registry(_extra_roots(env_value))


def registry() -> Registry:
    return _registry(os.environ.get(ENV_PATH, ""))


@cache
def _names(env_value: str) -> tuple[str, ...]:
    names: list[str] = []
    for root in (_BUILTIN, *_extra_roots(env_value)):
        if root.is_dir():
            names.extend(d.name for d in _record_dirs(root) if d.name not in names)
    return tuple(names)


def platform_spec(name: str) -> PlatformSpec:
    """The record of `name`; UnknownPlatform (a KeyError) when there is none."""
    return registry().spec(name)


def platform_names() -> tuple[str, ...]:
    """The names of every record, from the folders alone: the intent's platform check needs no record parsed
    (and the intent's types are imported while the records' model is being defined). The records themselves
    are validated, all at once, on first use of any of them."""
    return _names(os.environ.get(ENV_PATH, ""))


def template_dir(name: str) -> Path:
    registry().spec(name)
    return registry().template_dirs[name]


def namespace_lab_platform() -> PlatformSpec:
    """The platform `netfab lab` runs every switch on (the record with lab.namespace: true)."""
    found = [s for s in registry().specs.values() if s.lab.namespace]
    if len(found) != 1:
        names = [s.name for s in found]
        raise PlatformRecordError(f"exactly one platform record must set lab.namespace: true; found {names}", False)
    return found[0]


def clear_cache() -> None:
    """For tests that change NETFAB_PLATFORMS_PATH in-process."""
    from netfab.platforms import catalogue

    _registry.cache_clear()
    _names.cache_clear()
    catalogue.clear_cache()


__all__ = [
    "ENV_PATH",
    "PlatformRecordError",
    "PlatformSpec",
    "Registry",
    "UnknownPlatform",
    "clear_cache",
    "load_registry",
    "namespace_lab_platform",
    "platform_names",
    "platform_spec",
    "registry",
    "template_dir",
]
