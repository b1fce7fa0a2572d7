"""`sot` results as the shared findings model: rule ids, what each means, and the conversion.

Push: each change (made, or that a dry run would make) is an info finding; an object netfab may not change
(not tagged netfab) in the plan's way is an error, since the plan then is not fully in NetBox. Pull: each
difference between the as-built record and the plan is an error, except a management address, which the
inventory override takes from NetBox (a warning).
"""

from __future__ import annotations

from typing import Final

from netfab.core.findings import Finding, Location, RuleInfo, Severity, Status
from netfab.sot.desired import Key
from netfab.sot.pull import Difference
from netfab.sot.push import PushResult

_E, _W, _I = Severity.ERROR, Severity.WARNING, Severity.INFO

RULES: Final = (
    RuleInfo(
        "SOT-CREATE",
        "NetBox object created",
        _I,
        "An object of the plan that NetBox did not have (created, or a dry run would create it).",
    ),
    RuleInfo(
        "SOT-UPDATE",
        "NetBox object updated",
        _I,
        "A netfab-owned object whose planned fields differed (patched, or a dry run would patch them).",
    ),
    RuleInfo(
        "SOT-NOT-OWNED",
        "Object in the plan's way is not netfab's",
        _E,
        "NetBox has an object at a key the plan needs (a device name in the fabric's site, an interface, an "
        "address, a cable's ends) without the netfab tag. netfab never changes what it does not own, so the "
        "object, and what depends on it, stay as they are.",
        hint="rename one of them, or tag the object 'netfab' to hand it over",
    ),
    RuleInfo(
        "SOT-AS-BUILT",
        "Planned cable not written: port cabled otherwise",
        _W,
        "NetBox records another cable on a port of a planned cable. What NetBox records as built is not "
        "overwritten by a push; `netfab sot pull` reports the difference against the plan.",
        hint="fix the cabling (or its record in NetBox), then push again",
    ),
    RuleInfo(
        "SOT-UNPLANNED",
        "netfab object no longer planned",
        _I,
        "A netfab-tagged object the plan no longer has. netfab never deletes; remove it in NetBox if it is gone.",
    ),
    RuleInfo(
        "SOT-NO-SITE",
        "Fabric not in NetBox",
        _E,
        "NetBox has no site for this fabric.",
        hint="run `netfab sot push` first",
    ),
    RuleInfo(
        "SOT-DEVICE-MISSING",
        "Planned device not in NetBox",
        _E,
        "A device of the plan is not recorded in the fabric's site.",
    ),
    RuleInfo(
        "SOT-MODEL",
        "Device of another model",
        _E,
        "NetBox records the device with another device type than the plan's.",
    ),
    RuleInfo(
        "SOT-MGMT",
        "Management address differs",
        _W,
        "NetBox's primary IPv4 address of a switch differs from the plan's management address; the inventory "
        "override uses NetBox's.",
    ),
    RuleInfo(
        "SOT-CABLE-MISSING", "Planned cable not recorded", _E, "A cable of the cabling plan is not recorded in NetBox."
    ),
    RuleInfo(
        "SOT-CABLE-EXTRA",
        "Cable the plan does not have",
        _E,
        "NetBox records a cable between ports the plan leaves unused.",
    ),
    RuleInfo("SOT-CABLE-MISWIRED", "Miswired cable", _E, "A recorded cable lands on another port than the plan's."),
    RuleInfo(
        "SOT-CABLE-SWAP",
        "Two cables swapped",
        _E,
        "Two recorded cables have their ends exchanged (on a server's NICs: a rail swap, which sends a rail's "
        "traffic through another rail's leaf).",
    ),
)
_SEVERITY: Final = {r.id: r.severity for r in RULES}
_HINT: Final = {r.id: r.hint for r in RULES}


def _label(key: Key) -> str:
    return " <-> ".join(str(k) for k in key) if len(key) == 2 and ":" in str(key[0]) else "/".join(map(str, key))


def push_findings(result: PushResult, intent_file: str, dry_run: bool) -> list[Finding]:
    where = Location(intent_file)
    out: list[Finding] = []
    verb = "would " if dry_run else ""
    for change in result.changes:
        rule = "SOT-CREATE" if change.action == "create" else "SOT-UPDATE"
        what = f"{change.kind.replace('_', ' ')} {_label(change.key)}"
        if change.action == "create":
            message = f"{verb}create {what}" if dry_run else f"created {what}"
        else:
            fields = ", ".join(change.fields)
            message = f"{verb}update {what}: {fields}" if dry_run else f"updated {what}: {fields}"
        out.append(
            Finding(
                rule,
                _I,
                message,
                where,
                path=f"{change.kind}/{_label(change.key)}",
                status=Status.FAIL if dry_run else Status.PASS,
                expected=change.after if change.action == "update" else None,
                actual=change.before or None,
            )
        )
    for conflict in result.conflicts:
        owned = conflict.rule == "SOT-NOT-OWNED"
        out.append(
            Finding(
                conflict.rule,
                _SEVERITY[conflict.rule],
                f"{conflict.kind.replace('_', ' ')} {_label(conflict.key)} {conflict.why}"
                + (": left as is" if owned else "")
                + (
                    f"; {sum(result.skipped.values())} dependent objects not written"
                    if owned and result.skipped
                    else ""
                ),
                where,
                hint=_HINT[conflict.rule],
                path=f"{conflict.kind}/{_label(conflict.key)}",
            )
        )
    for kind, key in result.unplanned:
        out.append(
            Finding(
                "SOT-UNPLANNED",
                _I,
                f"{kind.replace('_', ' ')} {_label(key)} is netfab's but no longer planned: kept",
                where,
                path=f"{kind}/{_label(key)}",
                status=Status.PASS,
            )
        )
    return out


def pull_findings(differences: list[Difference], intent_file: str) -> list[Finding]:
    return [
        Finding(
            d.rule,
            _SEVERITY[d.rule],
            d.message,
            Location(intent_file),
            hint=_HINT[d.rule],
            subject=d.subject,
            expected=d.expected,
            actual=d.actual,
        )
        for d in differences
    ]
