"""`sot pull`: read the as-built fabric from NetBox and compare it with the plan.

What NetBox records about the real fabric (a device's serial, its model as installed, the management address
it got, every cable as a technician recorded it) is read once per kind, site-wide, and turned into
- `Difference`s against the plan: a missing or unplanned device, a device of another model, a missing cable,
  a cable the plan does not have, a cable whose one end lands elsewhere (miswired), two cables whose ends are
  exchanged (a rail swap reads as exactly one difference, not four);
- the inventory overrides for the switches: management address and what NetBox knows about the hardware.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from netfab.design.plan import FabricPlan
from netfab.sot.client import Api, Record
from netfab.sot.desired import Desired, Key, cable_key
from netfab.sot.kinds import cable_ends, site_cables


@dataclass(frozen=True, slots=True)
class Difference:
    rule: str
    subject: str
    message: str
    expected: object = None
    actual: object = None


@dataclass
class AsBuilt:
    site_found: bool
    devices: dict[str, Record] = field(default_factory=dict)
    cables: list[Record] = field(default_factory=list)


@dataclass
class PullResult:
    differences: list[Difference]
    overrides: dict[str, dict[str, Any]]
    counts: dict[str, int]


_DEVICE_FIELDS = ("id", "name", "device_type", "serial", "asset_tag", "primary_ip4", "status", "tags")
_CABLE_FIELDS = ("id", "a_terminations", "b_terminations", "status", "tags", "length")


def read_as_built(nb: Api, site_slug: str) -> AsBuilt:
    sites = nb.get("dcim/sites", {"slug": site_slug}, fields=("id", "slug"))
    if not sites:
        return AsBuilt(site_found=False)
    site_id = sites[0]["id"]
    devices = {str(d["name"]): d for d in nb.get("dcim/devices", {"site_id": site_id}, fields=_DEVICE_FIELDS)}
    cables = site_cables(nb, site_id, _CABLE_FIELDS)
    return AsBuilt(site_found=True, devices=devices, cables=cables)


def _end(text: str) -> tuple[str, str]:
    device, _, port = text.partition(":")
    return device, port


def compare(plan: FabricPlan, desired: Desired, built: AsBuilt) -> PullResult:
    diffs: list[Difference] = []
    overrides: dict[str, dict[str, Any]] = {}
    if not built.site_found:
        diffs.append(
            Difference(
                "SOT-NO-SITE",
                plan.name,
                f"NetBox has no site {desired.site!r}: the fabric was never pushed (run `netfab sot push`)",
            )
        )
        return PullResult(diffs, overrides, {"devices": 0, "cables": 0})
    wanted_types = {key[0]: want for key, want in desired.of("device").items()}
    type_models = {key[0]: want.fields["model"] for key, want in desired.of("device_type").items()}
    for name, want in wanted_types.items():
        record = built.devices.get(str(name))
        if record is None:
            diffs.append(
                Difference("SOT-DEVICE-MISSING", str(name), f"{name} is planned but NetBox has no such device")
            )
            continue
        planned = getattr(want.fields["device_type"], "key", ("",))[0]
        recorded = record.get("device_type") or {}
        if recorded.get("slug") != planned:
            diffs.append(
                Difference(
                    "SOT-MODEL",
                    str(name),
                    f"{name} is recorded as {_model(recorded)}; the plan has {type_models.get(planned, planned)}",
                    expected=type_models.get(planned, planned),
                    actual=_model(recorded),
                )
            )
    for name, dev in plan.devices.items():
        record = built.devices.get(name)
        if record is None:
            continue
        asbuilt: dict[str, Any] = {"netbox_id": record.get("id"), "model": _model(record.get("device_type") or {})}
        if record.get("serial"):
            asbuilt["serial"] = record["serial"]
        if record.get("asset_tag"):
            asbuilt["asset_tag"] = record["asset_tag"]
        status = record.get("status")
        if isinstance(status, dict):
            asbuilt["status"] = status.get("value")
        host: dict[str, Any] = {"data": {"asbuilt": asbuilt}}
        primary = record.get("primary_ip4") or {}
        address = str(primary.get("address") or "").split("/")[0]
        if address:
            host["hostname"] = address
            if address != dev.mgmt_ip:
                diffs.append(
                    Difference(
                        "SOT-MGMT",
                        name,
                        f"{name}'s management address in NetBox is {address}; the plan has {dev.mgmt_ip} "
                        "(the inventory override uses NetBox's)",
                        expected=dev.mgmt_ip,
                        actual=address,
                    )
                )
        overrides[name] = host
    diffs += _cables(desired, built.cables)
    return PullResult(diffs, overrides, {"devices": len(built.devices), "cables": len(built.cables)})


def _model(device_type: Record) -> str:
    maker = (device_type.get("manufacturer") or {}).get("name") or ""
    model = device_type.get("model") or device_type.get("display") or "?"
    return f"{maker} {model}".strip()


def _cables(desired: Desired, cables: Iterable[Record]) -> list[Difference]:
    planned: set[Key] = set(desired.of("cable"))
    planned_peer: dict[str, str] = {}
    for end_a, end_b in planned:
        planned_peer[str(end_a)] = str(end_b)
        planned_peer[str(end_b)] = str(end_a)
    planned_devices = {str(k[0]) for k in desired.of("device")}
    recorded: dict[Key, tuple[str, str]] = {}
    for record in cables:
        a, b = cable_ends(record)
        if len(a) != 1 or len(b) != 1:
            continue  # a breakout or patch-panel cable: not something the plan describes end to end
        if _end(a[0])[0] not in planned_devices and _end(b[0])[0] not in planned_devices:
            continue  # another fabric's or the building's cable in the same site
        recorded[cable_key(*_end(a[0]), *_end(b[0]))] = (a[0], b[0])
    missing = planned - set(recorded)
    extra = {k: v for k, v in recorded.items() if k not in planned}
    diffs: list[Difference] = []
    consumed: set[Key] = set()
    done_extra: set[Key] = set()
    for key, (u, v) in sorted(extra.items()):
        if key in done_extra:
            continue
        pu, pv = planned_peer.get(u), planned_peer.get(v)
        if pu is not None and pv is not None:
            twin = cable_key(*_end(pu), *_end(pv))
            if twin in extra and twin not in done_extra and twin != key:
                p1, p2 = cable_key(*_end(u), *_end(pu)), cable_key(*_end(v), *_end(pv))
                if p1 in missing and p2 in missing:
                    done_extra |= {key, twin}
                    consumed |= {p1, p2}
                    diffs.append(_swap(u, v, pu, pv))
                    continue
        done_extra.add(key)
        if pu is None and pv is None:
            diffs.append(
                Difference(
                    "SOT-CABLE-EXTRA",
                    _end(u)[0],
                    f"NetBox has a cable {_show(u)} <-> {_show(v)} that the plan does not have",
                    actual=[u, v],
                )
            )
            continue
        planned_for = [f"{_show(x)} <-> {_show(px)}" for x, px in ((u, pu), (v, pv)) if px is not None]
        for x, px in ((u, pu), (v, pv)):
            if px is not None:
                consumed.add(cable_key(*_end(x), *_end(px)))
        diffs.append(
            Difference(
                "SOT-CABLE-MISWIRED",
                _end(u)[0],
                f"{_show(u)} is cabled to {_show(v)} in NetBox; the plan has {' and '.join(planned_for)}",
                expected=planned_for,
                actual=[u, v],
            )
        )
    for key in sorted(missing - consumed):
        first, second = str(key[0]), str(key[1])
        diffs.append(
            Difference(
                "SOT-CABLE-MISSING",
                _end(first)[0],
                f"the plan's cable {_show(first)} <-> {_show(second)} is not recorded in NetBox",
                expected=[first, second],
            )
        )
    return diffs


def _show(end: str) -> str:
    device, port = _end(end)
    return f"{device} {port}"


def _swap(u: str, v: str, pu: str, pv: str) -> Difference:
    """NetBox has u<->v and pu<->pv where the plan has u<->pu and v<->pv: two cables' ends exchanged. Said from
    the device holding both exchanged ports when there is one (a server's two NICs: a rail swap)."""
    for (a, a_lands, a_plan), (b, b_lands, b_plan) in (((v, u, pv), (pu, pv, u)), ((u, v, pu), (pv, pu, v))):
        if _end(a)[0] == _end(b)[0]:
            device = _end(a)[0]
            if _end(b)[1] < _end(a)[1]:  # name the two ports in order: "eth0 and eth1"
                (a, a_lands, a_plan), (b, b_lands, b_plan) = (b, b_lands, b_plan), (a, a_lands, a_plan)
            text = (
                f"{device} {_end(a)[1]} and {_end(b)[1]} are swapped: {_end(a)[1]} lands on {_show(a_lands)} "
                f"(plan: {_show(a_plan)}), {_end(b)[1]} on {_show(b_lands)} (plan: {_show(b_plan)})"
            )
            break
    else:
        device = _end(u)[0]
        text = (
            f"two cables' ends are exchanged: {_show(u)} lands on {_show(v)} (plan: {_show(pu)}) and "
            f"{_show(pv)} on {_show(pu)} (plan: {_show(v)})"
        )
    return Difference("SOT-CABLE-SWAP", device, text, expected=[[u, pu], [v, pv]], actual=[[u, v], [pu, pv]])
