"""Walk a hier_config tree into facts with per-platform line rules (data, not branches).

A LineRule names one line by its lineage (one regex per level, each matching the whole line text) and says
which facts the line carries. A line no rule claims is still compared: it becomes a catch-all fact
``<scope>.line[<lineage>]`` = present, where the scope is the section it lives in (``interface[Ethernet1]``,
``bgp``...), so extra or missing config is drift even where netfab has no semantic name for it, and the
same extra line on a thousand ports still groups as one finding.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from hier_config import HConfig
from hier_config.child import HConfigChild

from netfab.audit.model import PRESENT, Facts, FactValue


@dataclass(frozen=True, slots=True)
class Acc:
    """A value that joins a set-valued fact (``pfc.priorities`` = "3,4") instead of replacing it."""

    value: FactValue


Emitted = Iterable[tuple[str, FactValue | Acc]]


@dataclass(frozen=True)
class LineRule:
    lineage: tuple[re.Pattern[str], ...]
    emit: Callable[[tuple[str, ...]], Emitted]
    """Gets the regex groups of every level, in order."""


def rule(levels: Sequence[str], emit: Callable[[tuple[str, ...]], Emitted]) -> LineRule:
    return LineRule(tuple(re.compile(level) for level in levels), emit)


@dataclass(frozen=True)
class Scope:
    """The section a catch-all line belongs to: the top-level line's pattern and the fact prefix."""

    pattern: re.Pattern[str]
    prefix: str
    """Formatted with the pattern's groups: "interface[{0}]"."""


def scope(pattern: str, prefix: str) -> Scope:
    return Scope(re.compile(pattern), prefix)


@dataclass
class _Walk:
    rules: tuple[LineRule, ...]
    scopes: tuple[Scope, ...]
    facts: Facts = field(default_factory=dict)
    sets: dict[str, set[FactValue]] = field(default_factory=dict)

    def emit(self, pairs: Emitted) -> None:
        for path, value in pairs:
            if isinstance(value, Acc):
                self.sets.setdefault(path, set()).add(value.value)
            else:
                self.facts[path] = value

    def walk(
        self,
        node: HConfig | HConfigChild,
        depth: int,
        candidates: list[tuple[LineRule, tuple[str, ...]]],
        lineage: tuple[str, ...],
    ) -> None:
        for child in node.children:
            text = child.text
            here = (*lineage, text)
            claimed = False
            deeper: list[tuple[LineRule, tuple[str, ...]]] = []
            for line_rule, groups in candidates:
                if len(line_rule.lineage) <= depth:
                    continue
                m = line_rule.lineage[depth].fullmatch(text)
                if m is None:
                    continue
                got = (*groups, *m.groups())
                if len(line_rule.lineage) == depth + 1:
                    self.emit(line_rule.emit(got))
                    claimed = True
                else:
                    deeper.append((line_rule, got))
            if child.children:
                self.walk(child, depth + 1, deeper, here)
            elif not claimed:
                self.facts[self.catch_all(here)] = PRESENT

    def catch_all(self, lineage: tuple[str, ...]) -> str:
        for sc in self.scopes:
            m = sc.pattern.fullmatch(lineage[0])
            if m is not None:
                rest = lineage[1:]
                prefix = sc.prefix.format(*m.groups())
                return f"{prefix}.line[{' > '.join(rest)}]" if rest else prefix
        return f"line[{' > '.join(lineage)}]"

    def result(self) -> Facts:
        for path, values in self.sets.items():
            self.facts[path] = join_values(values)
        return self.facts


def join_values(values: Iterable[FactValue]) -> str:
    """A set as one comparable value: numbers in numeric order, "3,4"."""
    items = list(set(values))
    if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        return ",".join(str(v) for v in sorted(items))  # type: ignore[type-var]
    return ",".join(sorted(str(v) for v in items))


def extract(root: HConfig, rules: tuple[LineRule, ...], scopes: tuple[Scope, ...]) -> Facts:
    walker = _Walk(rules, scopes)
    walker.walk(root, 0, [(r, ()) for r in rules], ())
    return walker.result()


def to_bytes(value: str, unit: str) -> int | str:
    """A threshold as the device prints it -> bytes. Segments/cells depend on the ASIC: kept as text."""
    factor = {"bytes": 1, "kbytes": 1000, "mbytes": 1_000_000}.get(unit.lower())
    return int(value) * factor if factor else f"{value} {unit}"
