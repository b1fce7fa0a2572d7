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
        # Generic numbering: networks in order, each taking the next block of eth<N>/mlx5_<N>.
        self.generic_offset = 0
        for name in root.network_names():
            if name == network:
                break
            self.generic_offset += ports_needed(root, name)
        self._by_profile: dict[str, list[Port]] = {}

    def profile_of(self, server: str) -> str:
        override = self.root.servers.overrides.get(server)
        if override is not None and override.profile is not None:
            return override.profile
        return self.root.servers.profile

    def ports(self, server: str) -> list[Port]:
        name = self.profile_of(server)
        base = self._by_profile.get(name)
        if base is None:
            base = self._by_profile[name] = self._profile_ports(name)
        override = self.root.servers.overrides.get(server)
        if override is None or not override.nics:
            return base
        patched = []
        for port in base:
            patch = override.nics.get(port.netdev)
            if patch is None:
                patched.append(port)
                continue
            patched.append(
                Port(
                    patch.netdev or port.netdev,
                    patch.rdma_device or port.rdma_device,
                    patch.pci or port.pci,
                    port.slot,
                    port.plane,
                )
            )
        return patched

    def _profile_ports(self, name: str) -> list[Port]:
        if name == GENERIC:
            first = self.generic_offset
            return [Port(f"eth{first + i}", f"mlx5_{first + i}", None, first + i, None) for i in range(self.needed)]
        profile = resolve_profile(self.root.servers, name)
        if profile is None:
            raise ProfileShort(f"unknown server profile {name!r}")
        chosen: list[ServerNic] = profile.for_network(self.kind)
        if len(chosen) < self.needed:
            raise ProfileShort(
                f"server profile {name!r} has {len(chosen)} port(s) for a {self.kind} network, "
                f"network {self.network} wires {self.needed} per server"
            )
        return [Port(n.netdev, n.rdma_device, n.pci, profile.nics.index(n), n.plane) for n in chosen[: self.needed]]
