"""Checks on what an operator types (option values, paths), done before netfab touches a file or a device.

Each check returns the value or raises InputError with the offending value and a hint; the CLI turns that into
exit code 2 (`netfab.cli.app`), so a typo can never become a traceback, an exit 3 "bug in netfab", or a write
somewhere nobody meant. Names that become path components (lab prefixes, fabric names, run ids) are checked
against one pattern each, so they can never carry '/', '..' or a leading '-'.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

LAB_PREFIX = re.compile(r"[a-z][a-z0-9]{0,7}")
"""Namespace and interface names are `<prefix>-<node>` and Linux allows 15 characters in an interface name."""
LAB_PREFIX_RULE = "1-8 lowercase letters or digits, starting with a letter"

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
"""Fabric names (the intent schema uses the same rule) and run ids: one safe path component each."""
NAME_RULE = "letters, digits, '_', '-', '.', starting with a letter or digit, at most 63 characters"


class InputError(ValueError):
    """Bad operator input: exit code 2, with what was wrong and how to fix it."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


def lab_prefix(value: str) -> str:
    if not LAB_PREFIX.fullmatch(value):
        raise InputError(f"lab prefix {value!r} is not valid", LAB_PREFIX_RULE)
    return value


def name(value: str, what: str) -> str:
    """A fabric name or run id: it becomes one directory name under the output or journal root."""
    if not NAME.fullmatch(value):
        raise InputError(f"{what} {value!r} is not valid", NAME_RULE)
    return value


def output_root(path: Path, option: str) -> Path:
    """A directory netfab may create files under: it is a directory (or can be made one) and is writable.

    Checked up front so a file given as --out or --runs, or a read-only mount, is refused before any build or
    device action, instead of failing halfway with an OSError.
    """
    problem = _not_a_writable_dir(path)
    if problem is not None:
        raise InputError(f"{option} {path}: {problem[0]}", problem[1].format(option=option, what="a directory"))
    return path


def output_file(path: Path, option: str) -> Path:
    """A report file netfab will (atomically) replace: not a directory, and its directory is writable."""
    if path.is_dir():
        raise InputError(f"{option} {path} is a directory", f"give {option} a file path")
    problem = _not_a_writable_dir(path.parent)
    if problem is not None:
        raise InputError(f"{option} {path}: {problem[0]}", problem[1].format(option=option, what="a file path"))
    return path


def _not_a_writable_dir(path: Path) -> tuple[str, str] | None:
    """What keeps `path` from being (or becoming) a directory netfab can write: (problem, hint template)."""
    existing = path
    while not existing.exists() and not existing.is_symlink() and existing.parent != existing:
        existing = existing.parent
    if existing.is_symlink() and not existing.exists():
        return f"{existing} is a dangling symbolic link", "point the link at a directory, or give {option} {what}"
    if existing.exists() and not existing.is_dir():
        return f"{existing} is not a directory", "give {option} {what}"
    if not os.access(existing, os.W_OK | os.X_OK):
        if _read_only(existing):
            return f"{existing} is on a read-only file system", "give {option} {what} on a writable file system"
        return f"{existing} is not writable", "check its permissions, or give {option} {what} you can write"
    return None


def _read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def directories(paths: list[Path], option: str) -> list[Path]:
    """Directories that must exist: a mistyped --inventory must not be skipped as if it were empty."""
    for path in paths:
        if not path.is_dir():
            raise InputError(f"{option} {path} is not a directory", f"give {option} an existing directory")
    return paths


def ipv4_network(value: str, option: str) -> str:
    import ipaddress

    try:
        ipaddress.IPv4Network(value)
    except ValueError as exc:
        raise InputError(f"{option} {value!r} is not an IPv4 network: {exc}", "write it as 172.31.255.0/24") from None
    return value


def typer_callback(check: Callable[..., T], *args: Any) -> Callable[[Any], Any]:
    """Adapt a check to a typer option callback: None (option not given) passes, InputError is a usage error."""

    def callback(value: Any) -> Any:
        if value is None:
            return None
        try:
            return check(value, *args)
        except InputError as exc:
            import typer

            raise typer.BadParameter(str(exc)) from None

    return callback
