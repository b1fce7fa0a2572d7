"""Indented CLI text (EOS, NX-OS, FRR) and Junos `set` lines, reduced to what is configuration.

One pass per config strips what is not configuration (comments, banners such as FRR's "Building
configuration...", "end", sectional exits: the platform record's `cli.dialect`) and what the audit runbook
declares unmanaged, and yields each line with its depth. Two things are built from that pass:

- the *canonical form*: the set of every line's full lineage ("router bgp 65100 / neighbor swp3 ..."). Equal
  sets mean equal configs whatever the order of stanzas and lines, so a device whose running config is the
  intended one in another order costs one pass (~1 ms for 2,000 lines) instead of two hier_config parses
  (~30 ms each);
- the hier_config tree, built from exactly the same lines, for devices whose canonical forms differ.

Because both come from the same cleaned lines, "canonically equal" can never hide a difference the tree
would show.
"""

from __future__ import annotations

from dataclasses import dataclass

from hier_config import HConfig
from hier_config.child import HConfigChild
from hier_config.platforms.driver_base import HConfigDriverBase
from hier_config.platforms.functions import convert_to_set_commands

from netfab.audit.rules import AuditRules
from netfab.platforms.model import Dialect

SEP = "\x1f"  # joins a lineage into one string: never part of a config line


@dataclass(frozen=True)
class Cleaned:
    lines: tuple[tuple[int, str], ...]
    """(depth, text) in file order; depth 0 = top level."""
    canonical: frozenset[str]


def clean(text: str, dialect: Dialect, rules: AuditRules) -> Cleaned:
    if dialect.flat:
        return _clean_flat(text, dialect, rules)
    # The hot loop of the fleet audit (every line of both configs of every device): locals only.
    out: list[tuple[int, str]] = []
    canonical: set[str] = set()
    stack: list[tuple[int, str, str]] = []  # (indent, lineage, text) of the open sections
    skip_below = -1  # indent of an unmanaged section being skipped (-1: none)
    comment, drop_exact, drop_prefix = dialect.comment, dialect.drop_exact, dialect.drop_prefix or None
    defaults: dict[str, tuple[str, ...]] = {}
    for parent, line in dialect.default_lines:
        defaults[line] = (*defaults.get(line, ()), parent)
    # rules.line_unmanaged inlined (a method call per line was a fifth of this loop): a line is unmanaged when
    # it, or what follows a leading "set ", starts with one of the runbook's prefixes.
    unmanaged = rules.unmanaged or None
    add, append, push, pop = canonical.add, out.append, stack.append, stack.pop
    for raw in text.splitlines():
        lstripped = raw.lstrip()
        if not lstripped or lstripped.startswith(comment):
            continue
        indent = len(raw) - len(lstripped)
        if skip_below >= 0:
            if indent > skip_below:
                continue
            skip_below = -1
        stripped = lstripped.rstrip()
        if stripped in drop_exact or (drop_prefix and stripped.startswith(drop_prefix)):
            continue
        if "  " in stripped or "\t" in stripped:
            stripped = " ".join(stripped.split())
        if unmanaged is not None and (
            stripped.startswith(unmanaged) or (stripped.startswith("set ") and stripped[4:].startswith(unmanaged))
        ):
            skip_below = indent
            continue
        while stack and stack[-1][0] >= indent:
            pop()
        if defaults and stripped in defaults and stack and stack[-1][2].startswith(defaults[stripped]):
            continue
        lineage = f"{stack[-1][1]}{SEP}{stripped}" if stack else stripped
        add(lineage)
        append((len(stack), stripped))
        push((indent, lineage, stripped))
    return Cleaned(tuple(out), frozenset(canonical))


def _clean_flat(text: str, dialect: Dialect, rules: AuditRules) -> Cleaned:
    body = [line for line in text.splitlines() if line.strip() and not line.strip().startswith(dialect.comment)]
    if body and not body[0].lstrip().startswith(("set ", "delete ", "deactivate ")):
        # `show configuration` (curly braces), as NAPALM's junos get_config returns it: same statements
        body = convert_to_set_commands("\n".join(body)).splitlines()
    out: list[tuple[int, str]] = []
    seen: set[str] = set()
    for line in body:
        stripped = " ".join(line.split())
        if not stripped or stripped.startswith(dialect.comment) or rules.line_unmanaged(stripped):
            continue
        if dialect.drop_prefix and stripped.startswith(dialect.drop_prefix):
            continue
        if stripped not in seen:
            seen.add(stripped)
            out.append((0, stripped))
    return Cleaned(tuple(out), frozenset(seen))


Tree = dict[str, "Tree"]
"""A config as nested dicts: line text -> its children (insertion-ordered; repeated sections merged)."""


def to_tree(cleaned: Cleaned) -> Tree:
    """The cleaned lines as nested dicts (text -> children). Facts are walked from this: it holds exactly
    what the hier_config tree holds, at a tenth of the cost (hier_config builds ~10 us objects per line)."""
    root: Tree = {}
    stack: list[Tree] = [root]
    for depth, text in cleaned.lines:
        del stack[depth + 1 :]
        parent = stack[min(depth, len(stack) - 1)]
        stack.append(parent.setdefault(text, {}))
    return root


def to_hconfig(cleaned: Cleaned, driver: HConfigDriverBase) -> HConfig:
    """The hier_config tree of the cleaned lines. Repeated sections merge (a config may open
    `interface Ethernet1` twice); hier_config's own loader would refuse the duplicate."""
    root = HConfig(driver)
    stack: list[HConfig | HConfigChild] = [root]
    for depth, text in cleaned.lines:
        del stack[depth + 1 :]
        parent = stack[min(depth, len(stack) - 1)]
        stack.append(parent.add_child(text, return_if_present=True))
    return root
