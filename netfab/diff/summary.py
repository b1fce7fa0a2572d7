"""Two builds' files -> what changed, per device and grouped across the fleet, as text and as Findings.

The grouping is the audit's (netfab.audit.group.group_drifts: one normalised fact path, one old value, one new
value) and so are its words (describe.label/value, group.summarise), with "previous -> new" in place of
"running vs intent". Files the audit has no facts for (host scripts, cabling, inventory) group by the lines
that differ.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from netfab.audit import describe
from netfab.audit.facts.paths import device_keys
from netfab.audit.group import group_drifts, summarise
from netfab.audit.model import DeviceAudit, DeviceMeta, DriftGroup
from netfab.audit.report.findings import area
from netfab.core.findings import Finding, Location, RuleInfo, Severity
from netfab.design.plan import FabricPlan
from netfab.diff.changes import FileChange

FileStatus = str  # "added" | "changed" | "removed" | "unchanged"

_KIND_WORDS = {"leaf": "leaf configs", "spine": "spine configs", "superspine": "superspine configs"}
_FIX = "review the change; `netfab build` writes it, `netfab deploy` pushes it"
RULES = tuple(
    RuleInfo(f"DIFF-{name}", f"{words} change", Severity.INFO, f"The new build changes {words}.", hint=_FIX)
    for name, words in (
        ("ECN", "ECN marking"),
        ("PFC", "PFC"),
        ("QOS", "QoS"),
        ("HASH", "ECMP hashing"),
        ("BGP", "BGP"),
        ("INTERFACE", "interfaces"),
        ("CONFIG", "other configuration"),
        ("FILE", "a build file"),
    )
)


@dataclass
class BuildChanges:
    """Every file of the new build (and of the previous one) with its status, and the explanation of each
    changed file. `meta` places devices in the fabric (role, pod, rail, plane) for fleet summaries."""

    status: dict[str, FileStatus]
    explained: Mapping[str, object]
    meta: dict[str, DeviceMeta]
    owner: dict[str, str] = field(default_factory=dict)
    """file -> the device or server it belongs to (configs/<device>*, hosts/<server>.sh)."""
    kind: dict[str, str] = field(default_factory=dict)
    """device or server -> what its files are called: 'leaf configs', 'host scripts'."""

    @property
    def changed(self) -> bool:
        return any(s != "unchanged" for s in self.status.values())

    def owners(self, status: FileStatus) -> set[str]:
        return {self.owner.get(f, f) for f, s in self.status.items() if s == status}

    def device_status(self) -> dict[str, FileStatus]:
        """One status per device or server (or fabric-wide file): changed if any of its files is not unchanged."""
        out: dict[str, FileStatus] = {}
        for f, s in self.status.items():
            who = self.owner.get(f, f)
            prev = out.get(who)
            if prev is None or prev == "unchanged":
                out[who] = s
            elif prev != s and s != "unchanged":
                out[who] = "changed"
        return out

    def audits(self) -> list[DeviceAudit]:
        """Fact changes per device as the audit's DeviceAudit (previous = 'actual', new = 'intended')."""
        by_device: dict[str, DeviceAudit] = {}
        for f, change in sorted(self.explained.items()):
            if not isinstance(change, FileChange) or not change.drifts:
                continue
            who = self.owner.get(f, f)
            meta = self.meta.get(who)
            dev = by_device.setdefault(who, DeviceAudit(who, meta.platform if meta else "", "drift"))
            dev.drifts.extend(change.drifts)
        return list(by_device.values())

    def line_groups(self) -> list[tuple[FileChange, list[str]]]:
        """Changed files without fact differences, grouped by the lines that differ."""
        groups: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[FileChange, list[str]]] = {}
        for f, change in sorted(self.explained.items()):
            if not isinstance(change, FileChange) or change.drifts:
                continue
            groups.setdefault((change.removed, change.added), (change, []))[1].append(self.owner.get(f, f))
        return sorted(groups.values(), key=lambda g: (-len(g[1]), g[1][0]))


def changes_between(
    old: Mapping[str, str] | None,
    new: Mapping[str, str],
    explained: Mapping[str, object],
    plan: FabricPlan,
    previous_plan: FabricPlan | None = None,
) -> BuildChanges:
    """`old`/`new`: file -> content digest (None = no previous build: everything is added)."""
    status: dict[str, FileStatus] = {}
    for f, digest in new.items():
        if old is None or f not in old:
            status[f] = "added"
        else:
            status[f] = "unchanged" if old[f] == digest else "changed"
    for f in (old or {}).keys() - new.keys():
        status[f] = "removed"
    meta, owner, kind = _placement(plan, previous_plan, status)
    return BuildChanges(status, explained, meta, owner, kind)


def _placement(
    plan: FabricPlan, previous: FabricPlan | None, files: Iterable[str]
) -> tuple[dict[str, DeviceMeta], dict[str, str], dict[str, str]]:
    meta: dict[str, DeviceMeta] = {}
    kind: dict[str, str] = {}
    for p in (previous, plan) if previous is not None else (plan,):
        for d in p.devices.values():
            meta[d.name] = DeviceMeta(d.name, d.role, d.platform, d.rail, d.pod, d.plane, d.su)
            kind[d.name] = _KIND_WORDS.get(d.role, f"{d.role} configs")
        for s in p.servers:
            kind[s.name] = "host scripts"
    owner: dict[str, str] = {}
    for f in files:
        if f.startswith("hosts/") and f.endswith(".sh"):
            owner[f] = f[len("hosts/") : -len(".sh")]
        elif f.startswith("configs/"):
            name = f[len("configs/") :]
            cut = name.find(".")
            while cut != -1 and name[:cut] not in kind:
                cut = name.find(".", cut + 1)
            owner[f] = name[:cut] if cut != -1 else f
        elif f.startswith("inventory/"):
            owner[f] = "inventory"
    kind.setdefault("inventory", "inventory")
    return meta, owner, kind


def _count(n: int, words: str) -> str:
    return f"{n:,} {words}"


def group_sentence(group: DriftGroup, meta: dict[str, DeviceMeta]) -> str:
    """'ECN Kmin on queue 3 (qos profile NETFAB-LOSSLESS): 150 KB -> 200 KB on 6,144 leaves'."""
    label = describe.label(group.kind)
    devices = group.devices
    where = summarise(devices, meta)
    ports = len(group.members)
    if any(device_keys(p) for _, p in group.members) and ports > len(devices):
        where = f"{ports:,} of {where}"
    if group.actual is None:
        return f"{label} added on {where}: {describe.value(group.kind, group.intended)}"
    if group.intended is None:
        return f"{label} removed on {where} (was {describe.value(group.kind, group.actual)})"
    before, after = describe.value(group.kind, group.actual), describe.value(group.kind, group.intended)
    return f"{label}: {before} -> {after} on {where}"


def _folded(groups: list[DriftGroup]) -> list[DriftGroup | list[DriftGroup]]:
    """The groups, with a change that takes another value on every device (a router ID, a loopback: one group
    per device) folded into one entry when it is on more than three devices, ordered by devices reached. A
    pool change then reads as one line for its 28 superspines, not 28 lines and "... and 39 more"."""
    alone: dict[str, list[DriftGroup]] = defaultdict(list)
    for g in groups:
        if len(g.devices) == 1:
            alone[g.kind].append(g)
    folded = {kind for kind, gs in alone.items() if len({g.devices[0] for g in gs}) > 3}
    out: list[DriftGroup | list[DriftGroup]] = []
    for g in groups:
        if g.kind not in folded or len(g.devices) > 1:
            out.append(g)
        elif alone[g.kind][0] is g:
            out.append(alone[g.kind])

    def reach(entry: DriftGroup | list[DriftGroup]) -> int:
        return len({g.devices[0] for g in entry}) if isinstance(entry, list) else len(entry.devices)

    return sorted(out, key=lambda entry: -reach(entry))  # stable: group_drifts' order among equals


def per_device_sentence(groups: list[DriftGroup], meta: dict[str, DeviceMeta]) -> str:
    """'BGP router-id: a change of its own on each of 28 superspines, e.g. 10.0.0.1 -> 10.0.1.1 on atsw01'."""
    kind = groups[0].kind
    devices = sorted({g.devices[0] for g in groups})
    first = min(groups, key=lambda g: g.devices[0])
    on = first.devices[0]
    if first.actual is None:
        example = f"{describe.value(kind, first.intended)} added on {on}"
    elif first.intended is None:
        example = f"{describe.value(kind, first.actual)} removed on {on}"
    else:
        example = f"{describe.value(kind, first.actual)} -> {describe.value(kind, first.intended)} on {on}"
    return f"{describe.label(kind)}: a change of its own on each of {summarise(devices, meta)}, e.g. {example}"


def render_text(changes: BuildChanges, against: str = "the previous build", limit: int = 20) -> str:
    """The summary a person reads: counts per kind of file, then each group of changes once."""
    per_owner = changes.device_status()
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for who, s in per_owner.items():
        counts[changes.kind.get(who, who)][s] += 1
    if not changes.changed:
        return f"nothing changed against {against} ({len(changes.status):,} files)\n"
    lines = [f"changes against {against}:"]
    parts = []
    order = [*_KIND_WORDS.values(), "host scripts"]
    for words in sorted(counts, key=lambda w: (order.index(w) if w in order else len(order), w)):
        c = counts[words]
        said = [_count(c[s], s) for s in ("changed", "added", "removed") if c[s]]
        if len(c) == 1 and "unchanged" in c:
            parts.append(f"{words}: {c['unchanged']:,} unchanged" if c["unchanged"] > 1 else f"{words} unchanged")
        else:
            total = sum(c[s] for s in ("changed", "added", "removed"))
            tail = f" ({c['unchanged']:,} unchanged)" if c["unchanged"] else ""
            parts.append(f"{total:,} {words} {', '.join(s.split(' ', 1)[1] for s in said)}{tail}")
    lines += [f"  {p}" for p in parts]
    groups = _folded(group_drifts(changes.audits()))
    shown = 0
    for g in groups:
        if shown >= limit:
            break
        if isinstance(g, list):
            lines.append(f"  - {per_device_sentence(g, changes.meta)}")
        else:
            lines.append(f"  - {group_sentence(g, changes.meta)}")
        shown += 1
    for change, owners in changes.line_groups():
        if shown >= limit:
            break
        kinds = Counter(changes.kind.get(o, o) for o in owners)
        words = (
            ", ".join(_count(n, k) for k, n in kinds.most_common()) if len(owners) > 3 else ", ".join(sorted(owners))
        )
        diff = "; ".join([*(f"-{x}" for x in change.removed), *(f"+{x}" for x in change.added)])
        lines.append(f"  - {words}: {diff or 'whitespace only'}")
        shown += 1
    more = len(groups) + len(changes.line_groups()) - shown
    if more > 0:
        lines.append(f"  ... and {more} more kinds of change (--format json lists every device)")
    return "\n".join(lines) + "\n"


def to_findings(changes: BuildChanges, locations: Mapping[str, str]) -> list[Finding]:
    """One finding per fact that changed on a device, and one per other file that changed (added/removed)."""
    out: list[Finding] = []
    for dev in changes.audits():
        where = Location(locations.get(dev.device, dev.device))
        for d in dev.drifts:
            keys = device_keys(d.path)
            prefix = f"{keys[-1]}: " if keys else ""
            message = (
                f"{prefix}{describe.label(d.path)}: {describe.value(d.path, d.actual)} -> "
                f"{describe.value(d.path, d.intended)} ({d.path})"
            )
            rule = "DIFF-" + area(d.path).split("-", 1)[1]
            out.append(
                Finding(
                    rule,
                    Severity.INFO,
                    message,
                    where,
                    path=f"{dev.device}:{d.path}",
                    subject=dev.device,
                    expected=d.intended,
                    actual=d.actual,
                )
            )
    with_facts = {d.device for d in changes.audits()}
    for f, s in sorted(changes.status.items()):
        who = changes.owner.get(f, f)
        if s == "unchanged" or (who in with_facts and s == "changed"):
            continue
        change = changes.explained.get(f)
        detail = ""
        if isinstance(change, FileChange) and (change.removed or change.added):
            detail = ": " + "; ".join([*(f"-{x}" for x in change.removed), *(f"+{x}" for x in change.added)])
        out.append(Finding("DIFF-FILE", Severity.INFO, f"{f} {s}{detail}", Location(f), path=f, subject=who))
    return out
