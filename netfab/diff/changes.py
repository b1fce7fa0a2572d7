"""One file's change, explained: a switch config's as facts that differ (the audit's parsers and comparison,
with the previous text as the "running" side and the new text as the "intended" one); any other file's as the
lines that differ.

Thousands of configs usually change the same way (one QoS knob on every leaf), so the facts comparison is
memoised on the change's *shape*: the set of removed and added lines, each with the lines of the sections it
sits in. Two files with the same shape differ by the same lines in the same sections, so they have the same
fact differences; the audit's parsers then run once per shape, not once per file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from netfab.audit.model import Collected, Drift

Shape = tuple[frozenset[tuple[str, ...]], frozenset[tuple[str, ...]]]
LINES_SHOWN = 2
LINE_WIDTH = 100


@dataclass(frozen=True, slots=True)
class FileChange:
    """How one file of a build changed (it always did: unchanged files have no FileChange)."""

    drifts: tuple[Drift, ...] = ()
    """Config files: (path, previous value, new value) per fact that differs."""
    removed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    """The lines that differ (at most LINES_SHOWN of each), for files the audit has no facts for."""
    unreadable: str = ""
    """Why the previous file could not be parsed into facts (then only its lines are compared)."""


def _lineage(lines: list[str]) -> set[tuple[str, ...]]:
    """Each line with the section lines above it (by indentation), so 'mtu 9216' under two interfaces is two
    different lines and a moved line is a change."""
    out: set[tuple[str, ...]] = set()
    stack: list[tuple[int, str]] = []
    for line in lines:
        body = line.strip()
        if not body:
            continue
        depth = len(line) - len(line.lstrip())
        while stack and stack[-1][0] >= depth:
            stack.pop()
        out.add((*(s for _, s in stack), body))
        stack.append((depth, body))
    return out


def _ancestry(lines: list[str], i: int) -> tuple[str, ...]:
    """Line i with the section lines above it (each less indented than the one below)."""
    out = [lines[i].strip()]
    depth = len(lines[i]) - len(lines[i].lstrip())
    for j in range(i - 1, -1, -1):
        if depth == 0:
            break
        line = lines[j]
        if not line.strip():
            continue
        d = len(line) - len(line.lstrip())
        if d < depth:
            out.append(line.strip())
            depth = d
    return tuple(reversed(out))


def shape(before: str, after: str, owner: str = "") -> Shape:
    """The change as (removed, added) lines with their sections; `owner` (the device or server the file is for)
    is replaced by '{name}' so a change that names each host is still one shape."""
    if owner:
        before, after = before.replace(owner, "{name}"), after.replace(owner, "{name}")
    old_lines, new_lines = before.splitlines(), after.splitlines()
    if len(old_lines) == len(new_lines):
        # The usual case (a value changed in place): only the differing lines need their sections.
        diff = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
        removed = {_ancestry(old_lines, i) for i in diff if old_lines[i].strip()}
        added = {_ancestry(new_lines, i) for i in diff if new_lines[i].strip()}
        return frozenset(removed - added), frozenset(added - removed)
    old, new = _lineage(old_lines), _lineage(new_lines)
    return frozenset(old - new), frozenset(new - old)


@dataclass
class Explainer:
    """Explains changed build files in the render workers (netfab.render.build.Explain). `platforms` maps each
    device to its platform, so a file's name says which parser reads it."""

    platforms: dict[str, str]
    max_fact_diffs: int = 32
    """Distinct shapes reduced to facts per process; beyond it, files are explained by their lines only. A
    change of every file in its own way (a netfab upgrade rewording every description) would otherwise cost
    a parse and a facts comparison per device: seconds of a rebuild for a summary."""
    _memo: dict[tuple[str, str, Shape], FileChange] = field(default_factory=dict)
    _fact_diffs: int = 0

    def __call__(self, rel: str, before: str, after: str) -> FileChange:
        device, suffix = _device_file(rel, self.platforms)
        s = shape(before, after, device if suffix else _owner(rel))
        key = (self.platforms.get(device, ""), suffix, s)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._explain(device, suffix, before, after, s)
        return hit

    def _explain(self, device: str, suffix: str, before: str, after: str, s: Shape) -> FileChange:
        platform = self.platforms.get(device)
        lines = _lines(s)
        if platform is None or not suffix or self._fact_diffs >= self.max_fact_diffs:
            return FileChange(removed=lines[0], added=lines[1])
        self._fact_diffs += 1
        from netfab.audit.device import audit_texts
        from netfab.audit.rules import AuditRules

        # The drifts name the change; the remediation that would undo it is not needed here.
        audit = audit_texts(
            device, platform, {suffix: after}, Collected(device, {suffix: before}), AuditRules(), remediate=False
        )
        if audit.status == "unreadable":
            return FileChange(removed=lines[0], added=lines[1], unreadable=audit.error or "")
        if not audit.drifts:
            # Bytes differ but no fact does (a comment, an order the device does not care about): show lines.
            return FileChange(removed=lines[0], added=lines[1])
        return FileChange(drifts=tuple(audit.drifts))


def _owner(rel: str) -> str:
    """hosts/<server>.sh -> the server's name; other files name no one."""
    if rel.startswith("hosts/") and rel.endswith(".sh"):
        return rel[len("hosts/") : -len(".sh")]
    return ""


def _lines(s: Shape) -> tuple[tuple[str, ...], tuple[str, ...]]:
    # The changed line itself, not its sections: a person recognises the line, the sections only keep shapes apart.
    removed = sorted(x[-1][:LINE_WIDTH] for x in s[0])
    added = sorted(x[-1][:LINE_WIDTH] for x in s[1])
    return tuple(removed[:LINES_SHOWN]), tuple(added[:LINES_SHOWN])


def _device_file(rel: str, platforms: dict[str, str]) -> tuple[str, str]:
    """'configs/leaf1.frr.conf' -> ('leaf1', '.frr.conf'); any other file -> (its path, '')."""
    if not rel.startswith("configs/"):
        return rel, ""
    name = rel[len("configs/") :]
    # The longest device name that prefixes the file name followed by '.' (device names may contain dots).
    cut = name.find(".")
    while cut != -1:
        if name[:cut] in platforms:
            return name[:cut], name[cut:]
        cut = name.find(".", cut + 1)
    return rel, ""
