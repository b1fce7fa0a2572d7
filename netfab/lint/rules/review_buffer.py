"""A RoCE reviewer's checklist, part 2: the PFC headroom a switch reserves must fit in its buffer.

HDR001 checks one port's headroom against one link; this checks the whole switch: every lossless port
reserves headroom for every lossless priority, and on a switch with long cables (a 10 km lossless hop, a
spine with hundreds of metres to the next tier) the sum can exceed the ASIC's buffer. Such a switch cannot be
configured as designed (SONiC's buffer manager refuses the profile; others shrink the shared pool to nothing
so every burst pauses). Analyze quotes the same sum as a margin (ANALYZE002); lint refuses the impossible.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from netfab.core.findings import Finding, Severity
from netfab.lint.context import LintContext, Tier
from netfab.lint.fabric import DataPath, LinkKind, Role, link_kinds, port_use
from netfab.lint.rule import Rule
from netfab.lint.rules._words import approx, speed
from netfab.lossless.headroom import headroom

SINGLE_ASIC_MAX_PORTS = 128
"""The largest front-panel radix of one switching ASIC in a fixed box (128 x 400G on a 51.2T ASIC). A planning
figure describes one such ASIC; a tier with more ports is a multi-ASIC chassis the figure says nothing about."""


@dataclass(frozen=True, slots=True)
class SwitchBuffer:
    """The buffer a switch of a tier has, and where the figure comes from (quoted in the finding)."""

    shared_bytes: int | None
    source: str
    unknown: str = ""
    """Why the switch cannot be rated (a finding says so instead of rating it against a wrong figure)."""


def switch_buffer(tier: Tier) -> SwitchBuffer:
    """The tier's buffer and its basis, from netfab.intent.hardware.tier_buffer (the one home for it): the named
    switch model's figure, the intent's declared one, or the platform record's planning figure.

    A planning figure describes one fixed-box ASIC, so a tier with more ports than one ASIC has is not rated
    against it; a named model whose buffer is not public is not rated either. Both say so in a note.
    """
    from netfab.capabilities import capabilities_for
    from netfab.intent.hardware import tier_buffer

    buf, basis = tier_buffer(tier.spec)
    source = f"{buf.asic}; basis: {basis}"
    if capabilities_for(tier.spec.platform, tier.spec.os_version).buffer.shared_bytes is None:
        return SwitchBuffer(None, source)  # software forwarding (Linux): no ASIC buffer to rate, nothing to say
    if basis == "not public":
        return SwitchBuffer(None, source, f"the buffer of the {buf.asic} is not public")
    planning = basis.startswith("planning")
    if planning and buf.shared_bytes is not None and tier.spec.ports > SINGLE_ASIC_MAX_PORTS:
        why = (
            f"{tier.spec.ports} ports is more than one ASIC has ({SINGLE_ASIC_MAX_PORTS}), so the one-ASIC "
            f"planning figure ({buf.asic}) does not describe this switch"
        )
        return SwitchBuffer(None, source, why)
    return SwitchBuffer(buf.shared_bytes, source)


@dataclass(frozen=True, slots=True)
class Reservation:
    """The headroom one switch reserves on its ports of one link kind, for one lossless priority."""

    kind: LinkKind
    ports: float
    per_port: int
    """Bytes per port per lossless priority."""


def headroom_reservations(ctx: LintContext, role: Role) -> list[Reservation]:
    """What one switch of `role` reserves, per link kind it terminates (the same physics analyze sums per
    device: netfab.lossless.headroom on each lossless port)."""
    uses = {u.role: u for u in port_use(ctx.intent)}
    use = uses.get(role)
    if use is None:
        return []
    out = []
    for kind in link_kinds(ctx.intent):
        # A switch's downlinks are the link kind whose upper end it is, its uplinks the kind whose lower end it is.
        ports = use.downlinks if kind.upper == role else float(use.uplinks) if kind.lower == role else 0.0
        if ports > 0:
            out.append(_reserve(ctx, role, kind, ports))
    return out


def _reserve(ctx: LintContext, role: Role, kind: LinkKind, ports: float) -> Reservation:
    configured = ctx.intent.qos.buffers.headroom
    if not isinstance(configured, str):
        return Reservation(kind, ports, configured)
    buffers = ctx.intent.qos.buffers
    platform = ctx.capabilities[role].buffer
    need = headroom(
        kind.speed_gbps,
        kind.cable_m,
        ctx.intent.underlay.mtu,
        small_packet_percent=buffers.small_packet_percent,
        cell_bytes=buffers.cell_bytes or platform.cell_bytes,
        mac_phy_delay_bytes=platform.mac_phy_delay_bytes,
    )
    return Reservation(kind, ports, need.required_bytes)


class HeadroomExceedsBuffer(Rule):
    """The PFC headroom one switch reserves is larger than its packet buffer.

    Per switch of a tier: (lossless ports of each link kind) x (headroom one port needs for one priority: cable,
    speed and MTU, or the explicit qos.buffers.headroom) x (lossless priorities). Past 100 % of the buffer the
    switch cannot hold the reservation at all; nothing is left for the shared pool that absorbs bursts. The
    usual cause is one long lossless hop: 10 km between sites at 400G is ~5 MB of headroom per port and
    priority. The buffer is the tier's switch model's (`topology.<tier>.model`, or declared under `hardware:`),
    else the platform record's planning figure for its ASIC family; the message names which. A platform
    without a switch ASIC (Linux) is not checked; a model whose buffer is not public, and a tier with more
    ports than one ASIC has rated only against a one-ASIC planning figure, get a note instead of a rating.

    ```yaml
    # bad: a 10 km lossless leaf-spine hop at 400G
    topology: {leaf: {uplinks: 4, uplink_speed: 400G, uplink_cable_m: 10000}}
    # fixed: keep lossless hops within a building (or make the long hop lossy / use a deep-buffer switch)
    topology: {leaf: {uplinks: 4, uplink_speed: 400G, uplink_cable_m: 100}}
    ```
    """

    id = "REV020"
    severity = Severity.ERROR
    title = "PFC headroom larger than the switch buffer"
    hint = "shorten the longest lossless cables, lower the number of lossless priorities, or use a deeper-buffer switch"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        prios = len(ctx.intent.qos.pfc_priorities)
        if not prios:
            return
        for tier in ctx.tiers:
            buffer = switch_buffer(tier)
            if buffer.unknown:
                msg = f"PFC headroom of a {tier.role} switch is not rated against a buffer: {buffer.unknown}"
                hint = "name the tier's switch model (or declare hardware.buffer) so its buffer is known"
                yield self.finding(ctx, (*tier.path, "ports"), msg, severity=Severity.INFO, hint=hint)
                continue
            parts = headroom_reservations(ctx, tier.role)
            if buffer.shared_bytes is None or not parts:
                continue  # software forwarding: no ASIC buffer to run out of
            total = sum(p.ports * p.per_port for p in parts) * prios
            if total <= buffer.shared_bytes:
                continue
            worst = max(parts, key=lambda p: p.ports * p.per_port)
            detail = " + ".join(
                f"{p.ports:g} x {approx(p.per_port)} ({p.kind.name}, {speed(p.kind.speed_gbps)}, {p.kind.cable_m:g} m)"
                for p in parts
            )
            msg = (
                f"a {tier.role} switch reserves {approx(total)} of PFC headroom ({detail}, x {prios} lossless "
                f"{'priority' if prios == 1 else 'priorities'}), {total / buffer.shared_bytes:.0%} of its "
                f"{approx(buffer.shared_bytes)} buffer ({buffer.source})"
            )
            path: DataPath = worst.kind.cable_path
            if not isinstance(ctx.intent.qos.buffers.headroom, str) and ctx.written("qos", "buffers", "headroom"):
                path = ("qos", "buffers", "headroom")
            yield self.finding(ctx, path, msg, related=[worst.kind.cable_path, (*tier.path, "platform")])


RULES: tuple[type[Rule], ...] = (HeadroomExceedsBuffer,)
