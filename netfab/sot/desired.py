"""The fabric plan as the NetBox objects netfab owns: what `sot push` writes and `sot pull` compares against.

Pure data, no client: every object is a `Want` with its kind, its natural key (what NetBox makes unique: a
device's name in its site, an interface's name on its device, a cable's two ends) and the fields netfab keeps
equal to the plan. References to other objects are `Ref`s by natural key; the push resolves them to ids as it
goes, kind by kind, in `ORDER`. Fields in `initial` are set once at creation and then belong to the people
who run the fabric (a device's or cable's status goes from planned to active/connected in NetBox, not here).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from ipaddress import IPv4Network
from typing import Final

from netfab.design.plan import DevicePlan, FabricPlan, LinkPlan, ServerPlan
from netfab.intent import Intent
from netfab.intent.servers import Servers
from netfab.sot.hardware import Hardware, interface_type, server_hardware, switch_hardware

Key = tuple[str | int, ...]

ORDER: Final = (
    "tag",
    "custom_field",
    "rir",
    "asn",
    "manufacturer",
    "device_type",
    "device_role",
    "platform",
    "site",
    "rack",
    "device",
    "interface",
    "prefix",
    "ip_address",
    "cable",
    "primary_ip",
)
"""Kinds in dependency order: a kind only refers to kinds before it (primary_ip: the device's field that
needs its management address to exist first)."""

TAG: Final = "netfab"
CF_GROUP: Final = "netfab"
MGMT_INTERFACE: Final = "mgmt0"
SERVER_ROLE: Final = "gpu-server"


@dataclass(frozen=True, slots=True)
class Ref:
    """Another object, by kind and natural key: resolved to its NetBox id when written."""

    kind: str
    key: Key


Value = str | int | float | bool | None | Ref | list["Value"] | dict[str, "Value"]


@dataclass(slots=True)
class Want:
    kind: str
    key: Key
    fields: dict[str, Value]
    """Owned: written at creation and put back when they drift (on objects netfab owns)."""
    initial: dict[str, Value] = field(default_factory=dict)
    """Written at creation only."""

    @property
    def label(self) -> str:
        return "/".join(str(k) for k in self.key)


@dataclass(slots=True)
class Desired:
    fabric: str
    site: str
    wants: dict[str, dict[Key, Want]] = field(default_factory=lambda: {kind: {} for kind in ORDER})

    def add(self, want: Want) -> Want:
        self.wants[want.kind].setdefault(want.key, want)
        return self.wants[want.kind][want.key]

    def of(self, kind: str) -> dict[Key, Want]:
        return self.wants[kind]

    def count(self) -> int:
        return sum(len(v) for v in self.wants.values())


# Fabric coordinates as custom fields: what a rail, a plane or an SU is has no NetBox field of its own.
DEVICE_FIELDS: Final = ("su", "pod", "rack", "rail", "plane")
_CUSTOM_FIELDS: Final[tuple[tuple[str, str, tuple[str, ...], str], ...]] = (
    (
        "netfab_fabric",
        "text",
        ("dcim.cable", "dcim.device", "dcim.interface", "ipam.ipaddress", "ipam.prefix"),
        "The netfab fabric (intent fabric.name); on interfaces, addresses and cables it marks them netfab's",
    ),
    ("netfab_network", "text", ("dcim.device", "dcim.interface"), "Which network: backend, frontend, oob"),
    *((f"netfab_{c}", "integer", ("dcim.device",), f"Fabric coordinate: {c}") for c in DEVICE_FIELDS if c != "rail"),
    ("netfab_rail", "integer", ("dcim.device", "dcim.interface"), "The rail a leaf serves or an interface carries"),
    ("netfab_asn", "object", ("dcim.device",), "The device's BGP ASN"),
)
CUSTOM_FIELD_NAMES: Final = tuple(c[0] for c in _CUSTOM_FIELDS)


def slugify(text: str) -> str:
    out = "".join(ch if ch.isalnum() else "-" for ch in text.lower())
    while "--" in out:
        out = out.replace("--", "-")
    return out.strip("-")[:100] or "x"


def _tags() -> list[Value]:
    return [Ref("tag", (TAG,))]


def desired_state(intent: Intent, plan: FabricPlan) -> Desired:
    """Everything netfab writes into NetBox for this plan."""
    site_slug = slugify(plan.name)
    out = Desired(fabric=plan.name, site=site_slug)
    out.add(
        Want(
            "tag",
            (TAG,),
            {"name": TAG, "slug": TAG, "description": "Written by netfab sot push: netfab keeps it equal to the plan"},
            {"color": "1e88e5"},
        )
    )
    for name, kind, types, description in _CUSTOM_FIELDS:
        fields: dict[str, Value] = {
            "name": name,
            "type": kind,
            "object_types": [*sorted(types)],
            "group_name": CF_GROUP,
            "description": description,
        }
        if kind == "object":
            fields["related_object_type"] = "ipam.asn"
        out.add(Want("custom_field", (name,), fields))
    out.add(Want("rir", ("netfab-private",), {"name": "netfab private", "slug": "netfab-private", "is_private": True}))
    asns = sorted({d.asn for d in plan.devices.values()})
    for asn in asns:
        out.add(Want("asn", (asn,), {"asn": asn, "rir": Ref("rir", ("netfab-private",)), "tags": _tags()}))
    out.add(
        Want(
            "site",
            (site_slug,),
            {
                "name": plan.name,
                "slug": site_slug,
                "asns": [Ref("asn", (a,)) for a in asns],
                "tags": _tags(),
            },
            {"status": "planned", "description": intent.fabric.description or ""},
        )
    )
    mgmt_len = intent.management.subnet.prefixlen
    for dev in plan.devices.values():
        _switch(out, dev, site_slug, mgmt_len)
    links_by_server_port = {(link.b_device, link.b_port): link for link in plan.links if link.tier == "host"}
    for server in plan.servers:
        _server(out, server, intent.servers, site_slug, links_by_server_port)
    for link in plan.links:
        _cable(out, link)
    for prefix, description in _prefixes(intent, plan):
        out.add(
            Want(
                "prefix",
                (str(prefix),),
                {
                    "prefix": str(prefix),
                    "description": description,
                    "scope_type": "dcim.site",
                    "scope_id": Ref("site", (site_slug,)),
                    "custom_fields": {"netfab_fabric": plan.name},
                    "tags": _tags(),
                },
                {"status": "active"},
            )
        )
    return out


def _hardware(out: Desired, hw: Hardware) -> Ref:
    maker = slugify(hw.manufacturer)
    out.add(Want("manufacturer", (maker,), {"name": hw.manufacturer, "slug": maker}))
    slug = hw.slug or slugify(hw.model)
    fields: dict[str, Value] = {
        "manufacturer": Ref("manufacturer", (maker,)),
        "model": hw.model,
        "slug": slug,
        "tags": _tags(),
    }
    if hw.u_height is not None:
        fields["u_height"] = hw.u_height
    if hw.part_number:
        fields["part_number"] = hw.part_number
    out.add(Want("device_type", (slug,), fields, {"comments": hw.comments}))
    return Ref("device_type", (slug,))


def _role(out: Desired, name: str, color: str) -> Ref:
    slug = slugify(name)
    out.add(Want("device_role", (slug,), {"name": name, "slug": slug}, {"color": color}))
    return Ref("device_role", (slug,))


_ROLE_COLOURS: Final = {"superspine": "9c27b0", "spine": "3f51b5", "leaf": "009688", SERVER_ROLE: "795548"}


def _rack(out: Desired, site: str, pod: int | None, rack: int | None) -> Ref | None:
    if rack is None:
        return None
    name = f"pod{pod}-rack{rack}" if pod is not None else f"rack{rack}"
    out.add(Want("rack", (site, name), {"name": name, "site": Ref("site", (site,)), "tags": _tags()}))
    return Ref("rack", (site, name))


def _custom(dev: DevicePlan | ServerPlan, fabric: str, asn: int | None) -> dict[str, Value]:
    values: dict[str, Value] = {"netfab_fabric": fabric, "netfab_network": getattr(dev, "network", None) or "backend"}
    for coord in DEVICE_FIELDS:
        values[f"netfab_{coord}"] = getattr(dev, coord, None)
    values["netfab_asn"] = Ref("asn", (asn,)) if asn is not None else None
    return values


def _switch(out: Desired, dev: DevicePlan, site: str, mgmt_len: int) -> None:
    from netfab.platforms import platform_spec

    spec = platform_spec(dev.platform)
    hw = switch_hardware(dev)
    out.add(Want("platform", (slugify(dev.platform),), {"name": spec.title, "slug": slugify(dev.platform)}))
    fields: dict[str, Value] = {
        "name": dev.name,
        "site": Ref("site", (site,)),
        "role": _role(out, dev.role, _ROLE_COLOURS.get(dev.role, "9e9e9e")),
        "device_type": _hardware(out, hw),
        "platform": Ref("platform", (slugify(dev.platform),)),
        "custom_fields": _custom(dev, dev.fabric, dev.asn),
        "tags": _tags(),
    }
    rack = _rack(out, site, dev.pod, dev.rack)
    if rack is not None:
        fields["rack"] = rack
    out.add(Want("device", (dev.name,), fields, {"status": "planned"}))
    device = Ref("device", (dev.name,))
    for iface in dev.interfaces:
        _interface(
            out,
            device,
            dev.name,
            iface.name,
            {
                "type": interface_type(iface.speed_gbps, hw.cage),
                "speed": iface.speed_gbps * 1_000_000,
                "mtu": iface.mtu,
                "description": iface.description,
                "custom_fields": {"netfab_rail": iface.rail},
            },
        )
        if iface.address:
            _ip(out, iface.address, dev.name, iface.name, f"{dev.name} {iface.name}")
    loopback = spec.naming.loopback
    _interface(out, device, dev.name, loopback, {"type": "virtual", "description": "router id, BGP"})
    _ip(out, f"{dev.loopback}/32", dev.name, loopback, f"{dev.name} loopback", role="loopback")
    _interface(out, device, dev.name, MGMT_INTERFACE, {"type": "1000base-t", "mgmt_only": True})
    mgmt = f"{dev.mgmt_ip}/{mgmt_len}"
    _ip(out, mgmt, dev.name, MGMT_INTERFACE, f"{dev.name} management")
    out.add(Want("primary_ip", (dev.name,), {"primary_ip4": Ref("ip_address", (mgmt,))}))


def _server(
    out: Desired, server: ServerPlan, servers: Servers, site: str, links: dict[tuple[str, str], LinkPlan]
) -> None:
    fields: dict[str, Value] = {
        "name": server.name,
        "site": Ref("site", (site,)),
        "role": _role(out, SERVER_ROLE, _ROLE_COLOURS[SERVER_ROLE]),
        "device_type": _hardware(out, server_hardware(server, servers)),
        "custom_fields": _custom(server, out.fabric, None),
        "tags": _tags(),
    }
    rack = _rack(out, site, server.pod, server.rack)
    if rack is not None:
        fields["rack"] = rack
    out.add(Want("device", (server.name,), fields, {"status": "planned"}))
    device = Ref("device", (server.name,))
    for nic in server.nics:
        link = links.get((server.name, nic.netdev))
        speed = link.speed_gbps if link is not None else None
        iface: dict[str, Value] = {
            "type": interface_type(speed) if speed else "other",
            "description": f"rail {nic.rail}: {nic.leaf} {nic.leaf_port} ({nic.rdma_device})",
            "custom_fields": {"netfab_rail": nic.rail},
        }
        if speed:
            iface["speed"] = speed * 1_000_000
        _interface(out, device, server.name, nic.netdev, iface)
        _ip(out, nic.address, server.name, nic.netdev, f"{server.name} {nic.netdev}")


def _owned_by(fabric: str, fields: dict[str, Value]) -> dict[str, Value]:
    """Interfaces, addresses and cables (the thousands) are marked netfab's by the `netfab_fabric` custom field
    instead of the tag: NetBox stores a custom field in the object's own row, while each tag is a row of its
    own that taggit writes with more queries and a second change-log pass per object (about a third of a
    bulk create's server time, profiled on NetBox 4.7). kinds.py reads either mark as netfab's."""
    custom = fields.get("custom_fields")
    return {**fields, "custom_fields": {**(custom if isinstance(custom, dict) else {}), "netfab_fabric": fabric}}


def _interface(out: Desired, device: Ref, device_name: str, name: str, fields: dict[str, Value]) -> None:
    out.add(Want("interface", (device_name, name), _owned_by(out.fabric, {"device": device, "name": name, **fields})))


def _ip(out: Desired, cidr: str, device: str, interface: str, description: str, role: str | None = None) -> None:
    fields: dict[str, Value] = {
        "address": cidr,
        "assigned_object_type": "dcim.interface",
        "assigned_object_id": Ref("interface", (device, interface)),
        "description": description,
    }
    fields = _owned_by(out.fabric, fields)
    if role:
        fields["role"] = role
    out.add(Want("ip_address", (cidr,), fields, {"status": "active"}))


def cable_key(a_device: str, a_port: str, b_device: str, b_port: str) -> Key:
    """A cable is its two ends, in either order."""
    return tuple(sorted((f"{a_device}:{a_port}", f"{b_device}:{b_port}")))


def _cable(out: Desired, link: LinkPlan) -> None:
    key = cable_key(link.a_device, link.a_port, link.b_device, link.b_port)
    fields: dict[str, Value] = {
        "a_terminations": [
            {"object_type": "dcim.interface", "object_id": Ref("interface", (link.a_device, link.a_port))}
        ],
        "b_terminations": [
            {"object_type": "dcim.interface", "object_id": Ref("interface", (link.b_device, link.b_port))}
        ],
        "length": float(link.cable_m),
        "length_unit": "m",
        "description": f"{link.tier}" + (f" rail {link.rail}" if link.rail is not None else ""),
    }
    out.add(Want("cable", key, _owned_by(out.fabric, fields), {"status": "planned"}))


def _prefixes(intent: Intent, plan: FabricPlan) -> Iterator[tuple[IPv4Network, str]]:
    u = intent.underlay
    roles = {d.role for d in plan.devices.values()}
    for role in ("superspine", "spine", "leaf"):
        if role in roles:
            yield getattr(u.loopbacks, role), f"{plan.name}: {role} loopbacks"
    if u.addressing == "p2p31":
        tiers = {link.tier for link in plan.links}
        if "leaf_spine" in tiers:
            yield u.p2p.leaf_spine, f"{plan.name}: leaf-spine /31 links"
        if "spine_superspine" in tiers:
            yield u.p2p.spine_superspine, f"{plan.name}: spine-superspine /31 links"
    if plan.servers:
        yield u.hosts, f"{plan.name}: GPU NIC /31 links"
    yield intent.management.subnet, f"{plan.name}: management"
