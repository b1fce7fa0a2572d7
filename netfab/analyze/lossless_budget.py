"""Lossless budget: PFC headroom each port needs against what the intent and the platform give, and where
ECN thresholds sit against the bandwidth-delay product and the point where PFC fires.

Lint already refuses a headroom or ECN value that is wrong on its own; this module puts the numbers side by
side per tier, so a designer sees the margins: how much of a switch's buffer the headroom reservation eats
(spines with long cables to the next tier are where it bites), and whether ECN marks (Kmax) before the
ingress queue reaches its XOFF point ("mark before PFC fires", VENDOR_REFERENCE §7.2).

The physics (headroom terms, path RTT, BDP) is netfab.lossless's, shared with lint, so both stages quote the
same bytes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cache
from operator import attrgetter
from typing import Any

from netfab.analyze.ports import PortKinds, port_kinds
from netfab.capabilities import BufferData
from netfab.core.findings import Finding, Location, Severity
from netfab.design.plan import FabricPlan
from netfab.intent import Intent
from netfab.intent.hardware import tier_buffer
from netfab.lossless.ecn import bdp_bytes, path_rtt_us
from netfab.lossless.headroom import HeadroomBreakdown, headroom

HEADROOM_BUFFER_WARN = 0.5
"""Warn when headroom reservations take more than this share of a switch's shared buffer: what is left is
the pool that absorbs every burst (planning figure; shared-headroom-pool ASICs reserve less)."""


@dataclass(frozen=True, slots=True)
class PortHeadroom:
    """Headroom one lossless priority needs on the ingress ports of one kind."""

    role: str
    """Switch role owning the ingress port."""
    link: str
    """host, leaf_spine or spine_superspine."""
    speed_gbps: int
    cable_m: float
    ports: int
    """Such ports in the whole fabric."""
    need: HeadroomBreakdown

    def as_dict(self) -> dict[str, Any]:
        n = self.need
        return {
            "role": self.role,
            "link": self.link,
            "speed_gbps": self.speed_gbps,
            "cable_m": self.cable_m,
            "ports": self.ports,
            "required_bytes": n.required_bytes,
            "terms_bytes": {
                "mtu_in_progress": n.mtu,
                "mtu_from_peer": n.mtu,
                "cable_round_trip": round(n.cable),
                "peer_response": n.peer_response,
                "pfc_frame": n.pfc_frame,
                "mac_phy": n.mac_phy,
                "cell_occupancy": round(n.occupancy, 4),
            },
        }


@dataclass(frozen=True, slots=True)
class SwitchHeadroom:
    """The headroom reservation of the busiest switch of a role against its platform's buffer."""

    role: str
    platform: str
    asic: str
    """The switch model's ASIC and title ('Tomahawk 5 (Arista 7060X6-64PE)'), or the platform's planning
    ASIC, labelled so, when the tier names no model."""
    basis: str
    """Where shared_bytes comes from: model, declared, not public, or planning figure (netfab.intent.hardware)."""
    lossless_ports: int
    priorities: int
    reserved_bytes: int
    shared_bytes: int | None

    @property
    def share(self) -> float | None:
        return self.reserved_bytes / self.shared_bytes if self.shared_bytes else None

    def as_dict(self) -> dict[str, Any]:
        share = self.share
        return {
            "platform": self.platform,
            "asic": self.asic,
            "buffer_basis": self.basis,
            "lossless_ports": self.lossless_ports,
            "lossless_priorities": self.priorities,
            "reserved_bytes": self.reserved_bytes,
            "shared_buffer_bytes": self.shared_bytes,
            "share_of_buffer": round(share, 4) if share is not None else None,
        }


@dataclass(frozen=True, slots=True)
class EcnMargin:
    """ECN thresholds of the RoCE queue on the egress ports of one tier."""

    egress: str
    speed_gbps: int
    rtt_us: float
    bdp_bytes: int
    kmin: int
    kmax: int
    xoff_bytes: int | None
    """Where the receiving switch's ingress queue sends XOFF: the dynamic-threshold share of its buffer."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "speed_gbps": self.speed_gbps,
            "path_rtt_us": round(self.rtt_us, 3),
            "bdp_bytes": self.bdp_bytes,
            "kmin_bytes": self.kmin,
            "kmax_bytes": self.kmax,
            "kmin_over_bdp": round(self.kmin / self.bdp_bytes, 3) if self.bdp_bytes else None,
            "kmax_over_bdp": round(self.kmax / self.bdp_bytes, 3) if self.bdp_bytes else None,
            "xoff_point_bytes": self.xoff_bytes,
            "kmax_over_xoff": round(self.kmax / self.xoff_bytes, 4) if self.xoff_bytes else None,
            "marks_before_pfc": self.kmax < self.xoff_bytes if self.xoff_bytes else None,
        }


@dataclass(frozen=True)
class LosslessBudget:
    configured_headroom: str | int
    pfc_priorities: tuple[int, ...]
    dcqcn_enabled: bool
    ports: list[PortHeadroom]
    switches: list[SwitchHeadroom]
    ecn: list[EcnMargin]

    def as_dict(self) -> dict[str, Any]:
        worst = max((p.need.required_bytes for p in self.ports), default=0)
        configured = self.configured_headroom
        return {
            "configured_headroom": configured,
            "largest_required_bytes": worst,
            "headroom_ok": configured == "auto" or (isinstance(configured, int) and configured >= worst),
            "verdict": self.verdict(),
            "pfc_priorities": list(self.pfc_priorities),
            "dcqcn_enabled": self.dcqcn_enabled,
            "ports": [p.as_dict() for p in self.ports],
            "switches": {s.role: s.as_dict() for s in self.switches},
            "ecn": {e.egress: e.as_dict() for e in self.ecn},
        }

    def verdict(self) -> str:
        """One word for the whole budget, so the headline never says ok beside a failing warning: the ports'
        need against the configured headroom, and the reservation against each switch's buffer."""
        worst = max((p.need.required_bytes for p in self.ports), default=0)
        configured = self.configured_headroom
        if isinstance(configured, int) and configured < worst:
            return "too small"
        shares = [s.share for s in self.switches]
        if any(share is not None and share > HEADROOM_BUFFER_WARN for share in shares):
            return "over the buffer"
        if any(share is None for share in shares):
            return "not rated"
        return "ok"

    def findings(self, source_file: str) -> list[Finding]:
        out: list[Finding] = []
        for s in self.switches:
            share = s.share
            if share is not None and share > HEADROOM_BUFFER_WARN:
                out.append(
                    Finding(
                        "ANALYZE002",
                        Severity.WARNING,
                        f"PFC headroom on a {s.role} ({s.lossless_ports} lossless ports x {s.priorities} "
                        f"priorities) reserves {s.reserved_bytes:,} B, {share:.0%} of the {s.shared_bytes:,} B "
                        f"buffer of {s.asic} ({s.basis})",
                        Location(source_file),
                        hint="shorten the longest cables, drop a lossless priority, or use a platform with a shared "
                        "headroom pool; what is left of the buffer is all that absorbs bursts",
                        path="qos.buffers.headroom",
                    )
                )
        return out


def analyze_lossless(intent: Intent, plan: FabricPlan, counted: PortKinds | None = None) -> LosslessBudget:
    """`counted`: port_kinds(plan), when the caller has counted them already."""
    counted = counted if counted is not None else port_kinds(plan)
    qos = intent.qos
    mtu = intent.underlay.mtu
    priorities = tuple(qos.pfc_priorities)
    rated = {role: tier_buffer(_tier(intent, role)) for role in ("leaf", "spine", "superspine") if _tier(intent, role)}
    buffers = {role: buf for role, (buf, _) in rated.items()}

    @cache
    def need(role: str, speed: int, cable: float) -> HeadroomBreakdown:
        buf = buffers[role]
        return headroom(
            speed,
            cable,
            mtu,
            small_packet_percent=qos.buffers.small_packet_percent,
            cell_bytes=qos.buffers.cell_bytes or buf.cell_bytes,
            mac_phy_delay_bytes=buf.mac_phy_delay_bytes,
        )

    kinds: Counter[tuple[str, str, int, float]] = Counter()
    per_switch: dict[str, tuple[int, int]] = {}
    # Per switch: lossless port count and reserved bytes; the busiest switch of a role is the one reported.
    # A switch's ports come counted per kind (netfab.analyze.ports): a switch has a handful of kinds.
    for dev in plan.devices.values():
        reserved = ports = 0
        for (lossless, port_role, speed, cable), count in counted[dev.name].items():
            if not lossless:
                continue
            link = "host" if port_role == "host" else _link_of(dev.role, port_role)
            kinds[(dev.role, link, speed, cable)] += count
            ports += count
            reserved += need(dev.role, speed, cable).required_bytes * len(priorities) * count
        if reserved > per_switch.get(dev.role, (0, 0))[1]:
            per_switch[dev.role] = (ports, reserved)
    ports_out = [
        PortHeadroom(role, link, speed, cable, count, need(role, speed, cable))
        for (role, link, speed, cable), count in sorted(kinds.items())
    ]
    switches = [
        SwitchHeadroom(
            role=role,
            platform=str(_tier(intent, role).platform),
            asic=buffers[role].asic,
            basis=rated[role][1],
            lossless_ports=ports,
            priorities=len(priorities),
            reserved_bytes=reserved,
            shared_bytes=buffers[role].shared_bytes,
        )
        for role, (ports, reserved) in sorted(per_switch.items())
    ]
    return LosslessBudget(
        configured_headroom=qos.buffers.headroom,
        pfc_priorities=priorities,
        dcqcn_enabled=intent.nic.dcqcn.enabled,
        ports=ports_out,
        switches=switches,
        ecn=_ecn_margins(intent, plan, buffers),
    )


def _ecn_margins(intent: Intent, plan: FabricPlan, buffers: dict[str, BufferData]) -> list[EcnMargin]:
    roce = next((c for c in intent.qos.classes if c.kind == "roce" and c.ecn is not None), None)
    if roce is None or roce.ecn is None:
        return []
    # Over the plan's cables (310,000 at 100k GPUs) only C-level passes: the first cable of each tier gives
    # its speed, the distinct (tier, length) pairs the longest cable.
    tiers = list(map(attrgetter("tier"), plan.links))
    first = dict(zip(reversed(tiers), range(len(tiers) - 1, -1, -1), strict=True))
    lengths = set(map(attrgetter("tier", "cable_m"), plan.links))
    rtt = path_rtt_us(_longest_path_cables(lengths))
    # Egress queue of a tier -> (link speed, role of the switch that receives and would send XOFF), tiers in
    # the order the plan first lists them.
    egress: dict[str, tuple[int, str]] = {}
    for tier in sorted(first, key=first.__getitem__):
        speed = plan.links[first[tier]].speed_gbps
        if tier == "host":
            egress.setdefault("leaf_to_host", (speed, "leaf"))
        elif tier == "leaf_spine":
            egress.setdefault("leaf_to_spine", (speed, "spine"))
            egress.setdefault("spine_to_leaf", (speed, "leaf"))
        else:
            egress.setdefault("spine_to_superspine", (speed, "superspine"))
            egress.setdefault("superspine_to_spine", (speed, "spine"))
    out = []
    for name, (speed, receiver) in egress.items():
        # A NIC's receive buffer is not a switch queue: the host-facing egress has no switch XOFF point.
        xoff = None if name == "leaf_to_host" else buffers[receiver].queue_bytes
        out.append(EcnMargin(name, speed, rtt, bdp_bytes(speed, rtt), roce.ecn.kmin, roce.ecn.kmax, xoff))
    return out


def _longest_path_cables(lengths: set[tuple[str, float]]) -> list[float]:
    longest: dict[str, float] = {}
    for tier, cable in lengths:
        longest[tier] = max(longest.get(tier, 0.0), cable)
    up = [longest[t] for t in ("host", "leaf_spine", "spine_superspine") if t in longest]
    return up + up[::-1]


def _link_of(role: str, port_role: str) -> str:
    if role == "leaf" or (role == "spine" and port_role == "fabric_down"):
        return "leaf_spine"
    return "spine_superspine"


def _tier(intent: Intent, role: str) -> Any:
    return getattr(intent.topology, role)
