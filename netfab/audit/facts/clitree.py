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
from netfab.audit.textconfig import Tree as Tree  # re-exported: the tree the fact rules walk


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
    prefixes: tuple[str, ...] = ()
    """Each level's literal head ("interface ", "set interfaces "): a cheap startswith before the regex."""


_META = re.compile(r"[\\()\[\].*+?{}|^$]")


def _literal_head(pattern: str) -> str:
    m = _META.search(pattern)
    return pattern if m is None else pattern[: m.start()]


def rule(levels: Sequence[str], emit: Callable[[tuple[str, ...]], Emitted]) -> LineRule:
    return LineRule(tuple(re.compile(level) for level in levels), emit, tuple(_literal_head(lv) for lv in levels))


@dataclass(frozen=True)
class Scope:
    """The section a catch-all line belongs to: the top-level line's pattern and the fact prefix."""

    pattern: re.Pattern[str]
    prefix: str
    """Formatted with the pattern's groups: "interface[{0}]"."""


def scope(pattern: str, prefix: str) -> Scope:
    return Scope(re.compile(pattern), prefix)


# (the candidate rules, depth, line) -> which of them match and their groups. Lines repeat across ports and
# across devices ("mtu 9216", "no switchport"): matching each distinct line once per rule set is what keeps
# fact extraction at a few ms for a 2,000-line spine. Process-wide, bounded.
_MATCHES: dict[tuple[tuple[int, ...], int, str], list[tuple[int, tuple[str, ...]]]] = {}
_MATCHES_MAX = 200_000


def _match(
    candidates: list[tuple[LineRule, tuple[str, ...]]], depth: int, text: str
) -> list[tuple[int, tuple[str, ...]]]:
    hits = []
    for index, (line_rule, _) in enumerate(candidates):
        if not text.startswith(line_rule.prefixes[depth]):
            continue
        m = line_rule.lineage[depth].fullmatch(text)
        if m is not None:
            hits.append((index, m.groups()))
    return hits


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
        node: Tree,
        depth: int,
        candidates: list[tuple[LineRule, tuple[str, ...]]],
        lineage: tuple[str, ...],
    ) -> None:
        rules_key = tuple(id(r) for r, _ in candidates)
        for text, children in node.items():
            here = (*lineage, text)
            key = (rules_key, depth, text)
            hits = _MATCHES.get(key)
            if hits is None:
                hits = _match(candidates, depth, text)
                if len(_MATCHES) > _MATCHES_MAX:
                    _MATCHES.clear()
                _MATCHES[key] = hits
            claimed = False
            deeper: list[tuple[LineRule, tuple[str, ...]]] = []
            for index, groups in hits:
                line_rule, prior = candidates[index]
                got = prior + groups
                if len(line_rule.lineage) == depth + 1:
                    self.emit(line_rule.emit(got))
                    claimed = True
                else:
                    deeper.append((line_rule, got))
            if children:
                self.walk(children, depth + 1, deeper, here)
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
        return ",".join(str(v) for v in sorted(items))
    return ",".join(sorted(str(v) for v in items))


def extract(
    root: Tree | HConfig,
    rules: tuple[LineRule, ...],
    scopes: tuple[Scope, ...],
    only: frozenset[str] | None = None,
) -> Facts:
    """Facts of a config tree: the cleaned lines' own tree (fast), or a hier_config tree (same lines).

    `only`: just these top-level sections. Valid where every fact comes from within one top-level section
    (no set spans two sections, no cross-section joins): the platform module says so (SECTION_LOCAL)."""
    tree = root if isinstance(root, dict) else _from_hconfig(root)
    if only is not None:
        tree = {text: children for text, children in tree.items() if text in only}
    walker = _Walk(rules, scopes)
    walker.walk(tree, 0, [(r, ()) for r in rules], ())
    return walker.result()


def _from_hconfig(node: HConfig | HConfigChild) -> Tree:
    return {child.text: _from_hconfig(child) for child in node.children}


def to_bytes(value: str, unit: str) -> int | str:
    """A threshold as the device prints it -> bytes. Segments/cells depend on the ASIC: kept as text."""
    factor = {"bytes": 1, "kbytes": 1000, "mbytes": 1_000_000}.get(unit.lower())
    return int(value) * factor if factor else f"{value} {unit}"
