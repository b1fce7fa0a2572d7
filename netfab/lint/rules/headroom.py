"""PFC headroom against cable length, port speed and MTU of every link kind (netfab.lossless.headroom, §7.1)."""

from __future__ import annotations

from collections.abc import Iterator

from netfab.core.findings import Finding, Severity
from netfab.lint.context import LintContext
from netfab.lint.fabric import Role, link_kinds
from netfab.lint.rule import Rule
from netfab.lint.rules._words import size, speed
from netfab.lossless.headroom import HeadroomBreakdown, headroom

BUFFERS = ("qos", "buffers")


def _cable(m: float) -> str:
    return f"{m:g} m"


class HeadroomTooSmall(Rule):
    """The explicit per-priority headroom is smaller than a link of the fabric needs.

    Headroom absorbs what still arrives after a port sends XOFF: the frame in progress, the PFC frame, the
    cable's round trip, the peer's response time (pause quanta per speed) and the peer's frame already on the
    wire (VENDOR_REFERENCE §7.1; 400G over 100 m with MTU 9216 needs ~126,400 B). Too little headroom drops
    frames of a "lossless" class exactly when the fabric is congested. Every link kind is checked: GPU NIC links
    (servers.cable_m, nic_speed), leaf-spine (leaf.uplink_cable_m, uplink_speed) and spine-superspine.

    ```yaml
    # bad: 400G leaf-spine links over 100 m
    topology: {leaf: {uplink_speed: 400G, uplink_cable_m: 100}}
    qos: {buffers: {headroom: 64KB}}
    # fixed
    qos: {buffers: {headroom: auto}}   # or at least 127KB
    ```
    """

    id = "HDR001"
    severity = Severity.ERROR
    title = "PFC headroom too small for cable, speed and MTU"
    hint = "set qos.buffers.headroom to auto, or at least the required size"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        configured = ctx.intent.qos.buffers.headroom
        if isinstance(configured, str) or not ctx.intent.qos.pfc_priorities:
            return  # "auto": render sizes it from the same formula
        for kind in link_kinds(ctx.intent):
            need = max((self._need(ctx, kind.speed_gbps, kind.cable_m, role) for role in kind.switch_ends),
                       key=lambda h: h.required_bytes)  # fmt: skip
            if configured >= need.required_bytes:
                continue
            msg = (
                f"headroom {size(configured)} per lossless priority is smaller than the "
                f"{size(need.required_bytes)} a {speed(kind.speed_gbps)} {kind.name} link with "
                f"{_cable(kind.cable_m)} of cable and MTU {need.mtu} needs ({self._terms(need)})"
            )
            hint = f"set qos.buffers.headroom to auto or at least {size(need.required_bytes)}"
            yield self.finding(ctx, (*BUFFERS, "headroom"), msg, hint=hint, related=[kind.cable_path])

    @staticmethod
    def _need(ctx: LintContext, gbps: int, cable_m: float, role: Role) -> HeadroomBreakdown:
        buffers = ctx.intent.qos.buffers
        platform = ctx.capabilities[role].buffer
        return headroom(
            gbps,
            cable_m,
            ctx.intent.underlay.mtu,
            small_packet_percent=buffers.small_packet_percent,
            cell_bytes=buffers.cell_bytes or platform.cell_bytes,
            mac_phy_delay_bytes=platform.mac_phy_delay_bytes,
        )

    @staticmethod
    def _terms(h: HeadroomBreakdown) -> str:
        parts = [
            f"cable {round(h.cable):,} B",
            f"peer response {h.peer_response:,} B",
            f"2 x MTU {2 * h.mtu:,} B",
            f"PFC frame {h.pfc_frame} B",
        ]
        if h.mac_phy:
            parts.append(f"MAC/PHY {h.mac_phy:,} B")
        if h.occupancy != 1:
            parts.append(f"x{h.occupancy:.2f} cell occupancy")
        return ", ".join(parts)


class CellSizeUnknown(Rule):
    """Small packets are declared for headroom sizing, but no buffer cell size is known.

    Cell occupancy (a 64 B packet still takes a whole cell) needs the ASIC's cell size; the reference has none
    per platform (VENDOR_REFERENCE §8), so without `buffers.cell_bytes` the headroom is sized as if every byte
    were payload.

    ```yaml
    # bad
    buffers: {small_packet_percent: 50}
    # fixed
    buffers: {small_packet_percent: 50, cell_bytes: 254}
    ```
    """

    id = "HDR002"
    severity = Severity.WARNING
    title = "Small-packet share without a cell size"
    hint = "set qos.buffers.cell_bytes to the ASIC's buffer cell size"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        buffers = ctx.intent.qos.buffers
        if buffers.small_packet_percent <= 0 or buffers.cell_bytes:
            return
        unknown = [g for g in ctx.platform_groups if g.caps.buffer.cell_bytes is None]
        for group in unknown:
            msg = (
                f"small_packet_percent is {buffers.small_packet_percent:g} but the cell size of the {group.label} "
                "is not known: headroom ignores cell occupancy"
            )
            yield self.finding(ctx, (*BUFFERS, "small_packet_percent"), msg)


RULES: tuple[type[Rule], ...] = (HeadroomTooSmall, CellSizeUnknown)
