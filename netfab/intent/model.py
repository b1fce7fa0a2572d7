"""The root Intent: everything a cluster's networks are, in one vendor-neutral document.

The root's own topology, underlay, QoS and NIC sections are the back end (the compute fabric), so a
single-network intent is what it always was. `networks:` adds the cluster's other networks (front end /
converged, storage, OOB management), each with its own switches, platforms, addressing and QoS, attached to
the same servers. Every later stage works on one network at a time: `network_views()` turns each into a
complete Intent of its own, so design, lint and render need no second code path.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from ipaddress import IPv4Network
from typing import Literal

from pydantic import Field, field_validator, model_validator

from netfab.intent.base import IntentModel
from netfab.intent.loadbalance import LoadBalancing
from netfab.intent.nic import Nic
from netfab.intent.qos import Qos
from netfab.intent.servers import NetworkKind, Servers
from netfab.intent.topology import Topology
from netfab.intent.types import Count, Name
from netfab.intent.underlay import Underlay

NAMING_FIELDS = {
    "leaf": {"fabric", "index", "su", "rail", "leaf", "plane", "pod", "rack"},
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


# NetworkKind: backend = the GPU compute fabric (rails, planes); frontend = in-band / converged (may carry
# storage); storage = a storage fabric (NVMe-oF, GPUDirect Storage: lossless RoCE where it is RDMA); oob =
# out-of-band management (BMCs and switch management ports).

BACKEND: str = "backend"
"""The root intent's network name: its topology, underlay, QoS and NIC sections are the back end."""


class Network(IntentModel):
    """One more network of the cluster: its own switches, platforms, addressing and QoS. It attaches the same
    servers as the back end (server i here is server i there), through the NICs the server profile gives it."""

    kind: NetworkKind
    description: str = ""
    topology: Topology
    underlay: Underlay = Underlay()
    qos: Qos = Qos()
    nic: Nic = Nic()
    load_balancing: LoadBalancing = LoadBalancing()
    naming: Naming = Naming()
    management: Management = Management()


@dataclass(frozen=True, slots=True)
class NetworkView:
    """One network seen as a complete intent: what design, lint and render work on."""

    name: str
    kind: NetworkKind
    intent: Intent
    path: tuple[str, ...]
    """Where the network is written in the YAML: () for the back end, ('networks', name) otherwise."""

    @property
    def fabric_name(self) -> str:
        return self.intent.fabric.name


class Intent(IntentModel):
    """A cluster intent. Minimal documents are short: everything has a common-practice default."""

    fabric: Fabric
    topology: Topology = Topology(scalable_units=1, servers_per_su=4)
    underlay: Underlay = Underlay()
    qos: Qos = Qos()
    nic: Nic = Nic()
    load_balancing: LoadBalancing = LoadBalancing()
    naming: Naming = Naming()
    management: Management = Management()
    lab: Lab = Lab()
    servers: Servers = Servers()
    """The GPU servers as built: a profile naming every NIC (netdev, RDMA device, network, rail), plus
    per-server overrides."""
    networks: dict[Name, Network] = {}
    """The cluster's other networks (the root sections are the back end), e.g. storage, frontend, oob."""
    schema_version: Literal[1] = Field(default=1, alias="version")

    @model_validator(mode="after")
    def _network_names(self) -> Intent:
        if BACKEND in self.networks:
            raise ValueError(
                f"networks.{BACKEND}: the root topology/underlay/qos/nic sections are the back end; "
                "name this network differently (e.g. 'storage', 'frontend', 'oob')"
            )
        backends = [n for n, net in self.networks.items() if net.kind == "backend"]
        if backends:
            raise ValueError(
                f"networks.{backends[0]}: kind backend is the root intent's own network; a second compute "
                "fabric is a plane of the first (topology.planes)"
            )
        return self

    def network_views(self) -> list[NetworkView]:
        """The back end first, then every other network in the order written."""
        return [self.network_view(name) for name in (BACKEND, *self.networks)]

    def network_names(self) -> list[str]:
        return [BACKEND, *self.networks]

    def network_view(self, name: str) -> NetworkView:
        if name == BACKEND:
            return NetworkView(BACKEND, "backend", self, ())
        net = self.networks.get(name)
        if net is None:
            raise KeyError(name)
        # model_copy skips re-validation: every part was validated where it is written. The network's switch
        # names, inventory and build directory get their own fabric name so two networks never share a file.
        derived = self.model_copy(
            update={
                "fabric": Fabric.model_construct(name=f"{self.fabric.name}-{name}", description=net.description),
                "topology": net.topology,
                "underlay": net.underlay,
                "qos": net.qos,
                "nic": net.nic,
                "load_balancing": net.load_balancing,
                "naming": net.naming,
                "management": net.management,
                "networks": {},
            }
        )
        return NetworkView(name, net.kind, derived, ("networks", name))
