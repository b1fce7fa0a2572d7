"""Per-platform parsers of running AND intended configs into facts, and how a platform's files split into parts.

A platform's build output is one or more files (its record's `outputs`); each audited one is a *part* with
its own facts module, read as its record says (`audit:` of the output). The frr platform's Linux script is
compared against the kernel state rather than a file.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Literal

from netfab.platforms import Registry, registry
from netfab.platforms.model import Dialect, Remediation

_CLI_API = ("facts", "DEFAULTS", "SECTION_LOCAL")
_JSON_API = ("parse", "SHAPE", "SHARED_ROOTS")
# Every facts module of a kind provides these (a record naming a module without them fails at first use).


@dataclass(frozen=True)
class Part:
    suffix: str
    """The build file's suffix after the device name: ".cfg", ".frr.conf", ".sh"."""
    kind: Literal["cli", "json", "kernel"]
    module: ModuleType
    dialect: Dialect | None = None
    syntax: str = ""
    """cli parts: the platform whose record's `cli:` reads the text (its hier_config driver key)."""
    prefix: str = ""
    """Prepended to the part's fact paths where two parts would otherwise share names (SONiC's FRR)."""
    remediation: Remediation | None = None
    label: str = ""
    collect: str | None = None
    """Online: the driver getter that reads this part; None = get_config(running) (the primary file)."""


KERNEL_STATE_SUFFIX = ".state.json"
"""Offline, a kernel part's state is saved beside the config as <device>.state.json."""


def _module(name: str, kind: str) -> ModuleType:
    module = importlib.import_module(name)
    needs = {"cli": _CLI_API, "json": _JSON_API}.get(kind, ())
    missing = [attr for attr in needs if not hasattr(module, attr)]
    if missing:
        raise TypeError(f"facts module {name} lacks {', '.join(missing)}, which a {kind} part needs")
    return module


@cache
def _parts(reg: Registry, platform: str) -> tuple[Part, ...]:
    spec = reg.spec(platform)
    parts = []
    for output, audit in spec.audited:
        syntax = (audit.syntax or platform) if audit.kind == "cli" else ""
        cli = reg.spec(syntax).cli if syntax else None
        parts.append(
            Part(
                suffix=output.suffix,
                kind=audit.kind,
                module=_module(audit.facts, audit.kind),
                dialect=cli.dialect if cli is not None else None,
                syntax=syntax,
                prefix=audit.prefix,
                remediation=audit.remediation,
                label=audit.label,
                collect=audit.collect,
            )
        )
    if not parts:
        raise KeyError(f"the audit has no parser for platform {platform!r}: its record audits no output")
    return tuple(parts)


def parts_of(platform: str) -> tuple[Part, ...]:
    return _parts(registry(), platform)


def primary_suffix(platform: str) -> str:
    return parts_of(platform)[0].suffix
