"""Fleet grouping: the same drift on many devices is one finding.

A group is (fact kind with interface names and neighbor keys normalised, running value, intended value).
Its sentence says what, where and what the intent wants, e.g.

    ECN Kmax on queue 3 (qos profile NETFAB-LOSSLESS) is 400 KB on 37 leaves (rails 2 and 5); the intent says 1,500 KB

and the devices are summarised by role, rail, pod and plane so the pattern (one rail? one pod? one vendor's
upgrade?) is visible before the device list is.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from netfab.audit import describe
from netfab.audit.facts.paths import device_keys, normalise
from netfab.audit.model import PRESENT, DeviceAudit, DeviceMeta, DriftGroup

_PLURAL = {"leaf": "leaves", "spine": "spines", "superspine": "superspines"}


def group_drifts(devices: Iterable[DeviceAudit]) -> list[DriftGroup]:
    groups: dict[tuple[object, ...], DriftGroup] = {}
    for dev in devices:
        for drift in dev.drifts:
            kind = normalise(drift.path)
            key = (kind, type(drift.actual), drift.actual, type(drift.intended), drift.intended)
            group = groups.get(key)
            if group is None:
                group = groups[key] = DriftGroup(kind, drift.actual, drift.intended)
            group.members.append((dev.device, drift.path))
    return sorted(groups.values(), key=lambda g: (-len(g.devices), -len(g.members), g.kind, str(g.actual)))


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _numbers(word: str, values: set[int]) -> str:
    ordered = sorted(values)
    return f"{word}{'s' if len(ordered) > 1 else ''} {_and([str(v) for v in ordered])}"


def summarise(devices: list[str], meta: dict[str, DeviceMeta]) -> str:
    """ "leaf2", "leaf2, leaf3 and leaf7", or "37 leaves (rails 2 and 5)"; "2 spines and 3 leaves (pod 1)"."""
    if len(devices) <= 3:
        return _and(devices)
    roles = Counter(meta[d].role if d in meta else "device" for d in devices)
    parts = [f"{n} {_PLURAL.get(r, r + 's') if n > 1 else r}" for r, n in sorted(roles.items(), key=lambda x: -x[1])]
    where: list[str] = []
    for attr, word in (("pod", "pod"), ("rail", "rail"), ("plane", "plane")):
        values = {getattr(meta[d], attr) for d in devices if d in meta and getattr(meta[d], attr) is not None}
        if 0 < len(values) <= 4:
            where.append(_numbers(word, values))
    return _and(parts) + (f" ({', '.join(where)})" if where else "")


def _things(kind: str) -> str:
    if kind.startswith("bgp.neighbor"):
        return "neighbors"
    if kind.startswith("bgp.network"):
        return "networks"
    return "ports"


def sentence(group: DriftGroup, meta: dict[str, DeviceMeta], details: tuple[str, ...] = ()) -> str:
    label = describe.label(group.kind)
    devices = group.devices
    where = summarise(devices, meta)
    keys: dict[str, list[str]] = defaultdict(list)
    for device, path in group.members:
        keys[device].extend(device_keys(path)[-1:])
    if any(keys.values()):
        if len(devices) <= 3 and len(group.members) <= 6:
            where = _and([f"{d} ({', '.join(keys[d])})" if keys[d] else d for d in devices])
        elif len(group.members) > len(devices):
            where = f"{len(group.members)} {_things(group.kind)} of {where}"
    actual = describe.value(group.kind, group.actual)
    intended = describe.value(group.kind, group.intended)
    carried = f" ({', '.join(details)})" if details else ""
    if group.actual is None:
        wanted = carried if group.intended == PRESENT else f": {intended}"
        return f"{label} is missing on {where}; the intent has it{wanted}"
    if group.intended is None:
        extra = f" {actual}" if group.actual != PRESENT else carried
        return f"{label}{extra} is configured on {where} but not in the intent"
    return f"{label} is {actual} on {where}; the intent says {intended}"


def device_index(devices: Iterable[DeviceAudit]) -> dict[str, DeviceAudit]:
    return {d.device: d for d in devices}


def group_details(group: DriftGroup, by_device: dict[str, DeviceAudit]) -> tuple[str, ...]:
    """What a missing/extra container carried, from its first member (they share kind and values)."""
    device, path = group.members[0]
    for drift in by_device[device].drifts:
        if drift.path == path:
            return drift.detail
    return ()


def notes_by_text(devices: Iterable[DeviceAudit]) -> list[tuple[str, list[str]]]:
    """Identical notes across the fleet, once each, with the devices they apply to."""
    seen: dict[str, list[str]] = defaultdict(list)
    for dev in devices:
        for note in dev.notes:
            seen[note].append(dev.device)
    return sorted(seen.items(), key=lambda kv: (-len(kv[1]), kv[0]))
