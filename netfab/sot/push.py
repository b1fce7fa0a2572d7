"""`sot push`: make NetBox hold the plan, kind by kind, touching only what netfab owns.

For each kind in dependency order: read what NetBox has at the plan's keys, then
- missing -> create (bulk), with the netfab tag and the creation-only fields;
- netfab's (tagged) but different in a field netfab owns -> patch only those fields (bulk);
- equal -> nothing (so a second push reports 0 changes, and a grown fabric only adds);
- there but not netfab's -> never changed: a vocabulary kind (manufacturer, role, site...) is used as is,
  any other kind is a conflict finding and what depends on it is skipped.
netfab never deletes: an object it owns that the plan no longer has is reported and kept.
`dry_run` reads the same and writes nothing; the changes it reports are the ones a push would make.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from netfab.sot.client import Api, Record
from netfab.sot.desired import ORDER, Desired, Key, Ref, Value, Want
from netfab.sot.kinds import KINDS, Kind, Scope, cable_ends

PLACEHOLDER = -1
"""The id a dry run gives an object it would create, so what refers to it still compares."""


class Unresolved(LookupError):
    pass


@dataclass(frozen=True, slots=True)
class Change:
    kind: str
    key: Key
    action: str  # "create" | "update"
    fields: tuple[str, ...] = ()
    before: dict[str, Any] = field(default_factory=dict, hash=False)
    after: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True, slots=True)
class Conflict:
    kind: str
    key: Key
    why: str
    rule: str = "SOT-NOT-OWNED"


@dataclass
class PushResult:
    changes: list[Change] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    """Objects not written because something they depend on is not netfab's, by kind."""
    unplanned: list[tuple[str, Key]] = field(default_factory=list)
    """netfab's objects the plan no longer has (kept)."""
    unchanged: Counter[str] = field(default_factory=Counter)
    seconds: dict[str, float] = field(default_factory=dict)

    def counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for kind in ORDER:
            created = sum(1 for c in self.changes if c.kind == kind and c.action == "create")
            updated = sum(1 for c in self.changes if c.kind == kind and c.action == "update")
            row = {
                "create": created,
                "update": updated,
                "unchanged": self.unchanged[kind],
                "conflict": sum(1 for c in self.conflicts if c.kind == kind),
                "skipped": self.skipped[kind],
            }
            if any(row.values()):
                out[kind] = row
        return out


def _norm(value: Any) -> Any:
    """An API value in the shape netfab writes: nested objects by id, choices by value, numbers as float."""
    if isinstance(value, dict):
        if "id" in value:
            return value["id"]
        if "value" in value and "label" in value:
            return value["value"]
        return {k: _norm(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [_norm(v) for v in value]
        return sorted(items, key=repr)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return float(value)
    return value


def _same(have: Any, want: Any) -> bool:
    if isinstance(want, dict) and isinstance(have, dict):
        return all(_same(have.get(k), v) for k, v in want.items())
    return bool(_norm(have) == _norm(want))


class _Ids:
    def __init__(self, dry_run: bool) -> None:
        self.ids: dict[str, dict[Key, int]] = {kind: {} for kind in ORDER}
        self.blocked: dict[str, set[Key]] = {kind: set() for kind in ORDER}
        self.dry_run = dry_run

    def resolve(self, value: Value) -> Any:
        if isinstance(value, Ref):
            found = self.ids[value.kind].get(value.key)
            if found is None:
                raise Unresolved(value)
            return found
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value


class Pusher:
    def __init__(self, nb: Api, desired: Desired, dry_run: bool = False) -> None:
        self.nb = nb
        self.desired = desired
        self.dry_run = dry_run
        self.ids = _Ids(dry_run)
        self.result = PushResult()
        self.devices: dict[Key, Record] = {}

    def run(self) -> PushResult:
        for kind in ORDER:
            start = time.monotonic()
            if kind == "primary_ip":
                self._primary_ips()
            else:
                self._reconcile(KINDS[kind])
            self.result.seconds[kind] = round(time.monotonic() - start, 3)
        return self.result

    def _scope(self) -> Scope:
        site = self.ids.ids["site"].get((self.desired.site,))
        return Scope(
            site_slug=self.desired.site,
            site_id=site if site not in (None, PLACEHOLDER) else None,
            keys=[],
            prefixes=[str(k[0]) for k in self.desired.of("prefix")],
        )

    def _reconcile(self, kind: Kind) -> None:
        wants = self.desired.of(kind.name)
        if not wants:
            return
        base = self._scope()
        asked = {name for want in wants.values() for name in want.fields}
        scope = Scope(base.site_slug, base.site_id, list(wants), base.prefixes, tuple(sorted({*kind.fields, *asked})))
        existing: dict[Key, Record] = {}
        for record in kind.fetch(self.nb, scope):
            existing.setdefault(kind.key_of(record), record)
        if kind.name == "device":
            self.devices = existing
        creates: list[tuple[Want, dict[str, Any]]] = []
        updates: list[tuple[Want, Record, dict[str, Any]]] = []
        for key, want in wants.items():
            found = existing.get(key)
            try:
                fields = self.ids.resolve(want.fields)
            except Unresolved as exc:
                ref = exc.args[0]
                if ref.key in self.ids.blocked[ref.kind]:
                    self.result.skipped[kind.name] += 1
                    self.ids.blocked[kind.name].add(key)
                    continue
                raise
            if found is None:
                creates.append((want, fields))
                continue
            record = found
            self.ids.ids[kind.name][key] = int(record["id"])
            # netfab's own objects of another fabric (a shared address pool in one NetBox) are not this push's.
            other = ""
            if kind.owned(record):
                other = (record.get("custom_fields") or {}).get("netfab_fabric") or self.desired.fabric
            if other != self.desired.fabric:
                if not kind.shared:
                    self.ids.blocked[kind.name].add(key)
                    del self.ids.ids[kind.name][key]
                    why = f"belongs to netfab fabric {other!r}" if other else "exists in NetBox without the netfab tag"
                    self.result.conflicts.append(Conflict(kind.name, key, why))
                else:
                    self.result.unchanged[kind.name] += 1  # vocabulary someone else made: used as is
                continue
            delta = {
                name: value
                for name, value in fields.items()
                if name != "tags" and name not in kind.key_fields and not _same(record.get(name), value)
            }
            if delta:
                # custom_fields: send only netfab's keys (NetBox merges them into the object's own).
                updates.append((want, record, delta))
            else:
                self.result.unchanged[kind.name] += 1
        self._unplanned(kind, existing, wants)
        if kind.name == "cable":
            creates = self._free_ports_only(existing, creates)
        self._create(kind, creates)
        self._update(kind, updates)

    def _free_ports_only(
        self, existing: dict[Key, Record], creates: list[tuple[Want, dict[str, Any]]]
    ) -> list[tuple[Want, dict[str, Any]]]:
        """A planned cable whose port NetBox already shows cabled elsewhere is as-built truth, not netfab's to
        overwrite: it is left out (and `sot pull` reports the difference)."""
        taken: set[str] = set()
        for record in existing.values():
            a, b = cable_ends(record)
            taken.update(a + b)
        out = []
        for want, fields in creates:
            busy = [str(end) for end in want.key if str(end) in taken]
            if busy:
                why = f"not written: NetBox already has {', '.join(busy)} cabled elsewhere (see `netfab sot pull`)"
                self.result.conflicts.append(Conflict("cable", want.key, why, rule="SOT-AS-BUILT"))
                continue
            out.append((want, fields))
        return out

    def _unplanned(self, kind: Kind, existing: dict[Key, Record], wants: dict[Key, Want]) -> None:
        if kind.shared:
            return
        for key, record in existing.items():
            # Another fabric's objects read through a shared pool or prefix are that fabric's, not unplanned here.
            fabric = (record.get("custom_fields") or {}).get("netfab_fabric")
            if key not in wants and kind.owned(record) and fabric in (None, "", self.desired.fabric):
                self.result.unplanned.append((kind.name, key))

    def _create(self, kind: Kind, creates: list[tuple[Want, dict[str, Any]]]) -> None:
        if not creates:
            return
        bodies = [{**self.ids.resolve(want.initial), **fields} for want, fields in creates]
        for (want, _), body in zip(creates, bodies, strict=True):
            self.result.changes.append(Change(kind.name, want.key, "create", tuple(sorted(body)), after=body))
        if self.dry_run:
            for want, _ in creates:
                self.ids.ids[kind.name][want.key] = PLACEHOLDER
            return
        made = self.nb.create(kind.endpoint, bodies)
        for (want, _), new_id in zip(creates, made, strict=True):
            self.ids.ids[kind.name][want.key] = new_id
            if kind.name == "device":
                self.devices[want.key] = {"id": new_id, "primary_ip4": None}

    def _update(self, kind: Kind, updates: list[tuple[Want, Record, dict[str, Any]]]) -> None:
        if not updates:
            return
        for want, record, delta in updates:
            before = {name: _norm(record.get(name)) for name in delta}
            self.result.changes.append(
                Change(kind.name, want.key, "update", tuple(sorted(delta)), before=before, after=delta)
            )
        if not self.dry_run:
            self.nb.update(kind.endpoint, [{"id": record["id"], **delta} for _, record, delta in updates])

    def _primary_ips(self) -> None:
        patches: list[tuple[Want, Record | None, dict[str, Any]]] = []
        for key, want in self.desired.of("primary_ip").items():
            if key in self.ids.blocked["device"]:
                self.result.skipped["primary_ip"] += 1
                continue
            try:
                fields = self.ids.resolve(want.fields)
            except Unresolved:
                self.result.skipped["primary_ip"] += 1
                continue
            record = self.devices.get(key)
            if record is not None and _same(record.get("primary_ip4"), fields["primary_ip4"]):
                self.result.unchanged["primary_ip"] += 1
                continue
            patches.append((want, record, fields))
        for want, record, fields in patches:
            before = {"primary_ip4": _norm(record.get("primary_ip4")) if record else None}
            self.result.changes.append(Change("primary_ip", want.key, "update", ("primary_ip4",), before, fields))
        if self.dry_run or not patches:
            return
        self.nb.update(
            "dcim/devices",
            [{"id": self.ids.ids["device"][want.key], **fields} for want, _, fields in patches],
        )


def push(nb: Api, desired: Desired, dry_run: bool = False) -> PushResult:
    return Pusher(nb, desired, dry_run).run()
