"""Fabric facts lint derives from the intent alone: tiers, link kinds, port use, the longest path.

The design stage computes the full plan later; lint needs only these counts, computed once per run, so an
impossible fabric is rejected before anything is expanded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from netfab.intent import Intent
from netfab.intent.topology import SwitchTier

Role = Literal["leaf", "spine", "superspine"]
DataPath = tuple[str | int, ...]


def switch_tiers(intent: Intent) -> list[tuple[Role, SwitchTier]]:
    t = intent.topology
    tiers: list[tuple[Role, SwitchTier]] = [("leaf", t.leaf), ("spine", t.spine)]
    if t.superspine is not None:
        tiers.append(("superspine", t.superspine))
    return tiers


@dataclass(frozen=True, slots=True)
class LinkKind:
    """One kind of link in the fabric: both ends, its speed and cable, and where the intent sets them."""

    name: str
    lower: Role | Literal["server"]
    upper: Role
    speed_gbps: int
    cable_m: float
    cable_path: DataPath

    @property
    def switch_ends(self) -> tuple[Role, ...]:
        if self.lower == "server":
            return (self.upper,)
        return (self.lower, self.upper)


def longest_cable(intent: Intent, tier: str, default: float) -> float:
    """The tier's length, or the longest override that may apply to it (topology.cables): headroom and
    latency are sized for the worst link of a kind."""
    lengths = [c.cable_m for c in intent.topology.cables if c.tier in (None, tier)]
    return max([default, *lengths])


def link_kinds(intent: Intent) -> list[LinkKind]:
    t = intent.topology
    kinds = [
        LinkKind(
            "host", "server", "leaf", t.servers.nic_speed, longest_cable(intent, "host", t.servers.cable_m),
            ("topology", "servers", "cable_m"),
        ),
        LinkKind(
            "leaf-spine", "leaf", "spine", t.leaf.uplink_speed,
            longest_cable(intent, "leaf_spine", t.leaf.uplink_cable_m), ("topology", "leaf", "uplink_cable_m"),
        ),
    ]  # fmt: skip
    if t.superspine is not None:
        kinds.append(
            LinkKind(
                "spine-superspine", "spine", "superspine", t.spine.uplink_speed,
                longest_cable(intent, "spine_superspine", t.spine.uplink_cable_m),
                ("topology", "spine", "uplink_cable_m"),
            )
        )  # fmt: skip
    return kinds


def longest_path_cables(intent: Intent) -> list[float]:
    """Cable lengths of the longest host-to-host path: up through every tier and back down."""
    up = [k.cable_m for k in link_kinds(intent)]
    return up + up[::-1]


@dataclass(frozen=True, slots=True)
class PortUse:
    """Ports one switch of a tier uses, from the counts in the intent."""

    role: Role
    ports: int
    downlinks: float
    down_speed: int
    uplinks: int
    up_speed: int
    uplink_targets: int
    """Switches of the next tier up that one switch's uplinks are spread over (0 = top tier)."""

    @property
    def down_capacity(self) -> float:
        return self.downlinks * self.down_speed

    @property
    def up_capacity(self) -> float:
        return self.uplinks * self.up_speed


def port_use(intent: Intent) -> list[PortUse]:
    t = intent.topology
    # A leaf spreads its uplinks over the spines of its group: the whole spine tier (2-tier), its plane's
    # spines (multi-plane rail_optimized), its pod's spines (clos3, rail_optimized with sus_per_pod). A
    # pod's spines are sized for the full pod (the design numbers their ports over its capacity).
    planes = t.rail_planes
    spines = (t.spine.count or 0) // planes if planes else 0
    spine_down = t.leaves_per_pod_plane * t.leaf.uplinks / spines if spines else 0.0
    uses = [
        PortUse("leaf", t.leaf.ports, t.leaf_downlinks, t.servers.nic_speed, t.leaf.uplinks, t.leaf.uplink_speed,
                spines),
    ]  # fmt: skip
    if t.superspine is None:
        uses.append(PortUse("spine", t.spine.ports, spine_down, t.leaf.uplink_speed, t.spine.uplinks,
                            t.spine.uplink_speed, 0))  # fmt: skip
        return uses
    supers = t.superspine.count or 0
    per_plane = supers // t.planes if t.planes else supers
    uses.append(PortUse("spine", t.spine.ports, spine_down, t.leaf.uplink_speed, t.spine.uplinks,
                        t.spine.uplink_speed, per_plane))  # fmt: skip
    super_down = t.spine_count * t.spine.uplinks / supers if supers else 0.0
    uses.append(PortUse("superspine", t.superspine.ports, super_down, t.spine.uplink_speed, t.superspine.uplinks,
                        t.superspine.uplink_speed, 0))  # fmt: skip
    return uses
