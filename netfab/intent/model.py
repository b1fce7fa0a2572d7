"""The root Intent: everything a fabric is, in one vendor-neutral document."""

from __future__ import annotations

import string
from ipaddress import IPv4Network
from typing import Literal

from pydantic import Field, field_validator

from netfab.intent.base import IntentModel
from netfab.intent.loadbalance import LoadBalancing
from netfab.intent.nic import Nic
from netfab.intent.qos import Qos
from netfab.intent.topology import Topology
from netfab.intent.types import Count, Name
from netfab.intent.underlay import Underlay

NAMING_FIELDS = {
    "leaf": {"fabric", "index", "su", "rail", "pod", "rack"},
    "spine": {"fabric", "index", "pod", "plane"},
    "superspine": {"fabric", "index", "plane"},
    "server": {"fabric", "index", "su", "pod", "rack", "server"},
}


class Naming(IntentModel):
    """Device name templates (Python format syntax, e.g. 'su{su:02d}-leaf{rail}'). Numbers are 1-based.
    Names are keyed on stable coordinates (SU, rail, pod, rack), so growing the fabric never renames."""

    leaf: str | None = None
    spine: str | None = None
    superspine: str | None = None
    server: str | None = None

    @field_validator("leaf", "spine", "superspine", "server")
    @classmethod
    def _known_placeholders(cls, value: str | None, info: object) -> str | None:
        if value is None:
            return value
        role = getattr(info, "field_name", "")
        allowed = NAMING_FIELDS[role]
        try:
            used = {name for _, name, _, _ in string.Formatter().parse(value) if name is not None}
        except ValueError as exc:
            raise ValueError(f"not a valid name template: {exc}") from None
        unknown = used - allowed
        if unknown:
            raise ValueError(
                f"unknown placeholder(s) {', '.join(sorted('{' + u + '}' for u in unknown))}; "
                f"a {role} name can use {', '.join(sorted('{' + a + '}' for a in allowed))}"
            )
        if "index" not in used and not used & {"su", "rail", "pod", "rack", "server", "plane"}:
            raise ValueError("the template must contain a placeholder, or every device gets the same name")
        return value


class Management(IntentModel):
    """Out-of-band management addressing written into the Nornir inventory."""

    subnet: IPv4Network = IPv4Network("192.168.0.0/16")
    domain: str | None = None


class Lab(IntentModel):
    """The scaled-down fabric `netfab lab` builds (real FRR in network namespaces)."""

    scalable_units: Count | None = None
    servers_per_su: Count | None = None
    pods: Count | None = None
    racks_per_pod: Count | None = None
    spines: Count | None = None
    leaf_uplinks: Count | None = None
    mgmt_subnet: IPv4Network = IPv4Network("172.31.255.0/24")
    ecn_marking: Literal["auto", "red", "nftables", "off"] = "auto"


class Fabric(IntentModel):
    name: Name
    description: str = ""


class Intent(IntentModel):
    """A fabric intent. Minimal documents are short: everything has a common-practice default."""

    fabric: Fabric
    topology: Topology = Topology(scalable_units=1, servers_per_su=4)
    underlay: Underlay = Underlay()
    qos: Qos = Qos()
    nic: Nic = Nic()
    load_balancing: LoadBalancing = LoadBalancing()
    naming: Naming = Naming()
    management: Management = Management()
    lab: Lab = Lab()
    schema_version: Literal[1] = Field(default=1, alias="version")
