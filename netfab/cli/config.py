"""Project defaults for the options every verb repeats, from ./netfab.toml or [tool.netfab] in ./pyproject.toml.

    # netfab.toml (or the same keys under [tool.netfab] in pyproject.toml)
    build = "out/build"        # --build
    runs = "/var/lib/netfab"   # --runs
    lab = "nf"                 # --lab (lab verbs: the lab's name; pipeline verbs: act on that lab)
    inventory = ["site/inv"]   # --inventory
    strict = true              # --strict
    workers = 32               # --workers

Only the current directory is read (netfab.toml first): what a run uses never depends on a file found
somewhere up the tree. Relative paths are relative to the file. The command line beats the environment
(NETFAB_BUILD, NETFAB_RUNS, NETFAB_LAB, NETFAB_INVENTORY, NETFAB_STRICT, NETFAB_WORKERS), which beats the file.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from netfab.cli.options import LAB_PREFIX_PATTERN


class ConfigError(ValueError):
    """The project config file cannot be used (exit 2)."""


def _path(value: object, base: Path) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("a path (text)")
    return str(base / value)


def _paths(value: object, base: Path) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise ValueError("a path or a list of paths")
    return [_path(v, base) for v in items]


def _lab(value: object, base: Path) -> str:
    if not isinstance(value, str) or not LAB_PREFIX_PATTERN.fullmatch(value):
        raise ValueError("1-8 lowercase letters or digits, starting with a letter")
    return value


def _flag(value: object, base: Path) -> bool:
    if not isinstance(value, bool):
        raise ValueError("true or false")
    return value


def _count(value: object, base: Path) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("a whole number >= 1")
    return value


KEYS: dict[str, tuple[str, Callable[[object, Path], Any]]] = {
    "build": ("--build", _path),
    "runs": ("--runs", _path),
    "lab": ("--lab", _lab),
    "inventory": ("--inventory", _paths),
    "strict": ("--strict", _flag),
    "workers": ("--workers", _count),
}
"""Config key -> the option it sets a default for, and how its value is checked."""


def find_config(cwd: Path) -> tuple[Path, dict[str, Any]] | None:
    """The config file in `cwd` and its netfab table, or None when there is none."""
    own = cwd / "netfab.toml"
    if own.is_file():
        return own, _read(own)
    project = cwd / "pyproject.toml"
    if project.is_file():
        table = _read(project).get("tool", {}).get("netfab")
        if table is not None:
            if not isinstance(table, dict):
                raise ConfigError(f"{project}: [tool.netfab] must be a table")
            return project, table
    return None


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def option_defaults(path: Path, table: dict[str, Any]) -> dict[str, Any]:
    """Checked option defaults by option name (`--build` -> value)."""
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(f"{path}: unknown key {', '.join(map(repr, unknown))} (known: {', '.join(KEYS)})")
    out: dict[str, Any] = {}
    for key, value in table.items():
        option, check = KEYS[key]
        try:
            out[option] = check(value, path.parent)
        except ValueError as exc:
            raise ConfigError(f"{path}: {key} = {value!r}: expected {exc}") from None
    return out


def default_map(command: Any, defaults: dict[str, Any]) -> dict[str, Any]:
    """click's default_map for every (sub)command that has one of the options: {verb: {param: value}}.

    Only options that also read the matching NETFAB_* variable take a default from the file (analyze's
    --lab, which starts traffic, reads neither). `command` is typer's click command tree (typer vendors
    click, so it is typed loosely here)."""
    out: dict[str, Any] = {}
    for param in command.params:
        for option, value in defaults.items():
            envvar = "NETFAB_" + option.removeprefix("--").upper()
            if option in param.opts and param.name and getattr(param, "envvar", None) == envvar:
                out[param.name] = value
    for name, sub in getattr(command, "commands", {}).items():
        if sub_map := default_map(sub, defaults):
            out[name] = sub_map
    return out
