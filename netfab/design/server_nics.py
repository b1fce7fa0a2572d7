"""Which NIC port of a server is NIC i of a network: the server profile, the per-server overrides, and a
position (slot) unique across all of the server's networks.

The slot numbers each port's routing table and rule on the host (100 + slot): two networks' host scripts on
one server therefore never touch the same table, rule, netdev or RDMA device.
"""

from __future__ import annotations

from dataclasses import dataclass

from netfab.intent import Intent
from netfab.intent.servers import GENERIC, ServerNic, resolve_profile

BACKEND = "backend"


@dataclass(frozen=True, slots=True)
class Port:
    netdev: str
    rdma_device: str | None
    pci: str | None
    slot: int
    plane: int | None


class ProfileShort(ValueError):
    """The profile has fewer ports for a network than its topology wires."""


class NamesUnpublished(ValueError):
    """A port the network uses has no netdev (or, on an RDMA network, no RDMA device) in the profile and no
    override names it: netfab will not guess a name (the host script would configure the wrong port)."""

    def __init__(self, server: str, profile: str, network: str, labels: list[str], what: str, overridden: bool) -> None:
        who = f"server {server}" if server else f"the {profile} servers"
        super().__init__(
            f"{who}: profile {profile!r} publishes no {what} for port(s) {', '.join(labels)} that network "
            f"{network} uses"
        )
        self.server = server
        self.labels = labels
        # Where the names go: the server's override if it has one, else the profile every other server uses.
        self.path: tuple[str, ...] = ("servers", "overrides", server) if overridden else ("servers", "profile")


@dataclass(frozen=True, slots=True)
class _ProfilePort:
    key: str
    netdev: str | None
    rdma_device: str | None
    pci: str | None
    slot: int
    plane: int | None


def ports_needed(intent: Intent, network: str) -> int:
    """NIC ports one server has on `network`: NICs x planes in a multi-plane rail back end."""
    t = intent.network_view(network).intent.topology
    return t.servers.nic_count * t.rail_planes


class ServerPorts:
    """Resolves the ports of one network for each server, once per profile (servers share their profile's
    list; only overridden servers get their own)."""

    def __init__(self, root: Intent, network: str, kind: str) -> None:
        self.root = root
        self.network = network
        self.kind = kind
        self.needed = ports_needed(root, network)
        # An RDMA network's host script sets each port's RDMA device (trust, PFC, DCQCN, NCCL_IB_HCA): it needs
        # the name as much as the netdev.
        self.rdma = root.network_view(network).intent.qos.class_of_kind("roce") is not None
        # Generic numbering: networks in order, each taking the next block of eth<N>/mlx5_<N>.
        self.generic_offset = 0
        for name in root.network_names():
            if name == network:
                break
            self.generic_offset += ports_needed(root, name)
        self._by_profile: dict[str, list[_ProfilePort]] = {}
        self._resolved: dict[str, list[Port]] = {}

    def profile_of(self, server: str) -> str:
        override = self.root.servers.overrides.get(server)
        if override is not None and override.profile is not None:
            return override.profile
        return self.root.servers.profile

    def ports(self, server: str) -> list[Port]:
        """The ports of `server` on this network ('' = a server on the default profile, not overridden).
        Raises ProfileShort, or NamesUnpublished for a port whose names neither the profile nor an override
        gives."""
        name = self.profile_of(server)
        override = self.root.servers.overrides.get(server) if server else None
        patches = override.nics if override is not None else {}
        if not patches and name in self._resolved:
            return self._resolved[name]
        base = self._by_profile.get(name)
        if base is None:
            base = self._by_profile[name] = self._profile_ports(name)
        ports: list[Port] = []
        missing: dict[str, list[str]] = {}
        for port in base:
            patch = patches.get(port.key)
            netdev = (patch.netdev if patch else None) or port.netdev
            rdma = (patch.rdma_device if patch else None) or port.rdma_device
            pci = (patch.pci if patch else None) or port.pci
            if netdev is None:
                missing.setdefault("netdev", []).append(port.key)
            elif rdma is None and self.rdma:
                missing.setdefault("RDMA device", []).append(port.key)
            else:
                ports.append(Port(netdev, rdma, pci, port.slot, port.plane))
        for what, labels in missing.items():
            raise NamesUnpublished(server, name, self.network, labels, what, override is not None)
        if not patches:
            self._resolved[name] = ports
        return ports

    def _profile_ports(self, name: str) -> list[_ProfilePort]:
        if name == GENERIC:
            first = self.generic_offset
            return [
                _ProfilePort(f"eth{first + i}", f"eth{first + i}", f"mlx5_{first + i}", None, first + i, None)
                for i in range(self.needed)
            ]
        profile = resolve_profile(self.root.servers, name)
        if profile is None:
            raise ProfileShort(f"unknown server profile {name!r}")
        chosen: list[ServerNic] = profile.for_network(self.kind)
        if len(chosen) < self.needed:
            raise ProfileShort(
                f"server profile {name!r} has {len(chosen)} port(s) for a {self.kind} network, "
                f"network {self.network} wires {self.needed} per server"
            )
        return [
            _ProfilePort(n.key, n.netdev, n.rdma_device, n.pci, profile.nics.index(n), n.plane)
            for n in chosen[: self.needed]
        ]
