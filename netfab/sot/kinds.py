"""How each kind of object lives in NetBox: its endpoint, how its natural key reads from an API record, how
the existing ones are found, and whether an object of that kind that netfab does not own may still be used.

`shared` kinds are vocabulary (a manufacturer, a role, a site someone created first): netfab refers to an
existing one and never changes it. Every other kind is netfab's only when it carries the netfab tag; one
that does not is left alone, and what hangs off it (a device's interfaces, an interface's cable) is skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from netfab.sot.client import Api, Record
from netfab.sot.desired import CF_GROUP, TAG, Key, cable_key


@dataclass(frozen=True, slots=True)
class Scope:
    """What the reads of one push or pull are limited to, and which fields to ask for (NetBox serialises
    only those: an interface's full form traces its cable path, most of a large read's cost)."""

    site_slug: str
    site_id: int | None
    keys: list[Key]
    prefixes: list[str]
    fields: tuple[str, ...] = ()


def _name(v: Any) -> str:
    return str(v.get("name") if isinstance(v, dict) else v)


def _slug(record: Record) -> Key:
    return (str(record["slug"]),)


def _terminations(side: list[Record]) -> list[str]:
    ends = []
    for t in side or []:
        obj = t.get("object") or {}
        device = obj.get("device") or {}
        if t.get("object_type") == "dcim.interface" and device:
            ends.append(f"{_name(device)}:{obj.get('name')}")
        else:  # a front port, a circuit: never one of netfab's cables, keyed so it cannot collide
            ends.append(f"{t.get('object_type')}#{t.get('object_id')}")
    return ends


def cable_ends(record: Record) -> tuple[list[str], list[str]]:
    return _terminations(record.get("a_terminations") or []), _terminations(record.get("b_terminations") or [])


def cable_record_key(record: Record) -> Key:
    a, b = cable_ends(record)
    if len(a) == 1 and len(b) == 1:
        ad, _, ap = a[0].partition(":")
        bd, _, bp = b[0].partition(":")
        return cable_key(ad, ap, bd, bp)
    return ("cable#" + str(record["id"]),)


def tagged(record: Record) -> bool:
    return any((t.get("slug") if isinstance(t, dict) else t) == TAG for t in record.get("tags") or [])


def marked(record: Record) -> bool:
    """Interfaces, addresses and cables: netfab's when their netfab_fabric custom field is set (desired.py's
    _owned_by says why not the tag), or when tagged (what pushes before that wrote)."""
    return bool((record.get("custom_fields") or {}).get("netfab_fabric")) or tagged(record)


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    endpoint: str
    key_of: Callable[[Record], Key]
    fetch: Callable[[Api, Scope], list[Record]]
    shared: bool = False
    owned: Callable[[Record], bool] = tagged
    key_fields: tuple[str, ...] = ()
    """Fields that make the key: equal by construction, never compared or patched."""
    fields: tuple[str, ...] = ("id", "tags")
    """What to ask NetBox for (`fields=`) besides the fields netfab writes: what the key and ownership read."""


def _by(path: str, key: str, pos: int = 0) -> Callable[[Api, Scope], list[Record]]:
    def fetch(nb: Api, scope: Scope) -> list[Record]:
        return nb.get_many(path, key, [k[pos] for k in scope.keys], scope.fields) if scope.keys else []

    return fetch


def _in_site(
    path: str, filters: Callable[[Scope], dict[str, Any]] | None = None
) -> Callable[[Api, Scope], list[Record]]:
    def fetch(nb: Api, scope: Scope) -> list[Record]:
        if scope.site_id is None:
            return []  # the site does not exist yet: nothing in it either
        return nb.get(path, {"site_id": scope.site_id, **(filters(scope) if filters else {})}, scope.fields)

    return fetch


_ENDS: Final = ("a_terminations", "b_terminations")


def site_cables(nb: Api, site_id: int, fields: tuple[str, ...]) -> list[Record]:
    """The site's cables in the API's shape, their two ends included, read without asking NetBox for the
    ends: NetBox serialises a cable's `a/b_terminations` with each termination's full nested object, which
    measured 82 ms per cable (512 cables: 41.8 s); the cables without them plus the site's interfaces with
    their `cable`/`cable_end` took 8.8 s. Each end is rebuilt from the interface that names the cable. An
    end that is not an interface of this site (a patch panel, another site's device) is kept as one opaque
    end, so the cable still reads as unplanned rather than vanishing."""
    wanted = tuple(dict.fromkeys(("id", *(f for f in fields if f not in _ENDS))))
    cables = nb.get("dcim/cables", {"site_id": site_id}, wanted)
    ends: dict[int, dict[str, list[Record]]] = {}
    for iface in nb.get("dcim/interfaces", {"site_id": site_id, "cabled": "true"}, _IFACE_ENDS):
        cable = iface.get("cable")
        cable_id = cable.get("id") if isinstance(cable, dict) else cable
        if cable_id is None:
            continue
        side = "a_terminations" if iface.get("cable_end") == "A" else "b_terminations"
        end = {"object_type": "dcim.interface", "object_id": iface["id"], "object": iface}
        ends.setdefault(int(cable_id), {}).setdefault(side, []).append(end)
    out = []
    for cable in cables:
        found = ends.get(int(cable["id"]), {})
        record = dict(cable)
        for side in _ENDS:
            record[side] = found.get(side) or [{"object_type": "elsewhere", "object_id": cable["id"]}]
        out.append(record)
    return out


_IFACE_ENDS: Final = ("id", "name", "device", "cable", "cable_end")


def _cables(nb: Api, scope: Scope) -> list[Record]:
    return site_cables(nb, scope.site_id, scope.fields) if scope.site_id is not None else []


def _ips(nb: Api, scope: Scope) -> list[Record]:
    out: list[Record] = []
    for prefix in scope.prefixes:
        out.extend(nb.get("ipam/ip-addresses", {"parent": prefix, "vrf_id": "null"}, scope.fields))
    return out


def _prefixes(nb: Api, scope: Scope) -> list[Record]:
    wanted = [str(k[0]) for k in scope.keys]
    return [r for r in nb.get_many("ipam/prefixes", "prefix", wanted, (*scope.fields, "vrf")) if r.get("vrf") is None]


KINDS: Final[dict[str, Kind]] = {
    k.name: k
    for k in (
        Kind("tag", "extras/tags", _slug, _by("extras/tags", "slug"), shared=True),
        Kind(
            "custom_field",
            "extras/custom-fields",
            lambda r: (str(r["name"]),),
            _by("extras/custom-fields", "name"),
            shared=True,
            owned=lambda r: r.get("group_name") == CF_GROUP,
            fields=("id", "name", "group_name"),
        ),
        Kind("rir", "ipam/rirs", _slug, _by("ipam/rirs", "slug"), shared=True),
        Kind("asn", "ipam/asns", lambda r: (int(r["asn"]),), _by("ipam/asns", "asn"), shared=True),
        Kind("manufacturer", "dcim/manufacturers", _slug, _by("dcim/manufacturers", "slug"), shared=True),
        Kind("device_type", "dcim/device-types", _slug, _by("dcim/device-types", "slug"), shared=True),
        Kind("device_role", "dcim/device-roles", _slug, _by("dcim/device-roles", "slug"), shared=True),
        Kind("platform", "dcim/platforms", _slug, _by("dcim/platforms", "slug"), shared=True),
        Kind("site", "dcim/sites", _slug, _by("dcim/sites", "slug"), shared=True),
        Kind(
            "rack",
            "dcim/racks",
            lambda r: (str((r.get("site") or {}).get("slug")), str(r["name"])),
            _in_site("dcim/racks"),
            shared=True,
            fields=("id", "tags", "site"),
        ),
        Kind(
            "device",
            "dcim/devices",
            lambda r: (str(r["name"]),),
            _in_site("dcim/devices"),
            fields=("id", "tags", "primary_ip4"),
        ),
        Kind(
            "interface",
            "dcim/interfaces",
            lambda r: (_name(r.get("device")), str(r["name"])),
            _in_site("dcim/interfaces"),
            owned=marked,
            key_fields=("device", "name"),
        ),
        Kind("prefix", "ipam/prefixes", lambda r: (str(r["prefix"]),), _prefixes, key_fields=("prefix",)),
        Kind(
            "ip_address",
            "ipam/ip-addresses",
            lambda r: (str(r["address"]),),
            _ips,
            owned=marked,
            key_fields=("address",),
        ),
        Kind(
            "cable",
            "dcim/cables",
            cable_record_key,
            _cables,
            owned=marked,
            key_fields=("a_terminations", "b_terminations"),
        ),
    )
}
