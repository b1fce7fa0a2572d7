"""CLI configs (EOS, NX-OS, Junos, FRR): cleaned once, canonical form for the fast path, tree on demand."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from hier_config import HConfig

from netfab.audit.hconfig import driver_for
from netfab.audit.rules import AuditRules
from netfab.audit.textconfig import Cleaned, Tree, clean, to_hconfig, to_tree
from netfab.platforms.model import Dialect


@dataclass
class CliConfig:
    driver: str
    """hier_config driver key (hconfig.driver_for)."""
    cleaned: Cleaned

    @property
    def canonical(self) -> frozenset[str]:
        return self.cleaned.canonical

    @cached_property
    def tree(self) -> HConfig:
        """The hier_config tree: built only where remediation or a unified diff needs it."""
        return to_hconfig(self.cleaned, driver_for(self.driver))

    @cached_property
    def lines(self) -> Tree:
        """The same lines as nested dicts, for fact extraction."""
        return to_tree(self.cleaned)


def parse_cli(driver: str, dialect: Dialect, text: str, rules: AuditRules) -> CliConfig:
    return CliConfig(driver, clean(text, dialect, rules))


@dataclass(frozen=True)
class Defaults:
    """Values a device does not print because they are its defaults: a fact missing on one side is taken
    to have this value. Patterns match the whole fact path."""

    entries: tuple[tuple[re.Pattern[str], object], ...] = field(default=())

    @classmethod
    def of(cls, pairs: dict[str, object]) -> Defaults:
        return cls(tuple((re.compile(p), v) for p, v in pairs.items()))

    def get(self, path: str) -> object | None:
        for pattern, value in self.entries:
            if pattern.fullmatch(path):
                return value
        return None
