"""Topology arithmetic: rails, port budgets, even uplink spreading, and the declared oversubscription."""

from __future__ import annotations

from collections.abc import Iterator

from netfab.core.findings import Finding, Severity
from netfab.lint.context import LintContext
from netfab.lint.fabric import port_use
from netfab.lint.rule import Rule
from netfab.lint.rules._words import plural, ratio, speed

TOPO = ("topology",)
OVERSUBSCRIPTION_TOLERANCE = 0.05


def _count(n: float) -> str:
    return f"{n:g}" if n == int(n) else f"{n:.1f}"


class RailsNotGpus(Rule):
    """A rail-optimized SU has a different number of rails than GPUs per server.

    Rail i of an SU is the leaf that NIC i of every server lands on; with fewer rails than NICs some NICs have
    no leaf (the design stacks them on extra ports, breaking the rail property), with more rails some leaves have
    no NICs at all.

    ```yaml
    # bad
    topology: {rails: 4, servers: {gpus_per_server: 8}}
    # fixed (or omit rails: it defaults to one per GPU)
    topology: {rails: 8, servers: {gpus_per_server: 8}}
    ```
    """

    id = "TOPO001"
    severity = Severity.ERROR
    title = "Rail count differs from GPUs per server"
    hint = "set topology.rails to gpus_per_server, or omit it"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        t = ctx.intent.topology
        nics = t.servers.nic_count
        if t.style == "rail_optimized" and t.rails is not None and t.rails != nics:
            what = "NICs" if t.servers.nics is not None else "GPUs (NICs)"
            msg = f"{plural(t.rails, 'rail')} per SU but {nics} {what} per server: NIC i must land on rail i"
            hint = self.hint + "; to put several rails on one leaf, keep rails per NIC and set rails_per_leaf"
            field = "nics" if t.servers.nics is not None else "gpus_per_server"
            yield self.finding(ctx, (*TOPO, "rails"), msg, hint=hint, related=[(*TOPO, "servers", field)])


class PortBudgetExceeded(Rule):
    """A switch needs more ports (downlinks + uplinks) than its tier has.

    Downlinks come from the counts: servers (NICs) per leaf, leaf uplinks per spine, spine uplinks per
    superspine.

    ```yaml
    # bad: 32 servers + 40 uplinks on a 64-port leaf
    topology: {servers_per_su: 32, leaf: {ports: 64, uplinks: 40}}
    # fixed
    topology: {servers_per_su: 32, leaf: {ports: 64, uplinks: 32}}
    ```
    """

    id = "TOPO002"
    severity = Severity.ERROR
    title = "Port budget exceeded"
    hint = "reduce downlinks or uplinks, or use switches with more ports (ports counts after breakout)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for use in port_use(ctx.intent):
            needed = use.downlinks + use.uplinks
            if needed > use.ports:
                msg = (
                    f"each {use.role} needs {_count(use.downlinks)} downlinks + {use.uplinks} uplinks = "
                    f"{_count(needed)} ports, but has {use.ports}"
                )
                yield self.finding(ctx, (*TOPO, use.role, "ports"), msg)


class UplinksNotDivisible(Rule):
    """Uplinks cannot be spread evenly over the switches (and planes) of the tier above.

    ECMP splits traffic per next hop; with uneven spreading some spines get two links from a leaf and others
    one, so they carry unequal load and the tail (the slowest link) sets every collective's step time. In a
    3-tier design (clos3, or rail_optimized pods), spines and superspines must also divide evenly into planes.

    ```yaml
    # bad: 32 uplinks over 12 spines
    topology: {leaf: {uplinks: 32}, spine: {count: 12}}
    # fixed
    topology: {leaf: {uplinks: 32}, spine: {count: 16}}
    ```
    """

    id = "TOPO003"
    severity = Severity.ERROR
    title = "Uplinks not divisible across the tier above"
    hint = "make uplinks a multiple of the number of switches they spread over"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        t = ctx.intent.topology
        if t.has_pods and t.superspine is not None:
            for role, count in (("spine", t.spine.count or 0), ("superspine", t.superspine.count or 0)):
                if count % t.planes:
                    msg = f"{count} {role}s{' per pod' if role == 'spine' else ''} do not divide into {t.planes} planes"
                    hint = "make the count a multiple of topology.planes"
                    yield self.finding(ctx, (*TOPO, role, "count"), msg, hint=hint, related=[(*TOPO, "planes")])
        for use in port_use(ctx.intent):
            if use.uplink_targets == 0:
                if use.uplinks:
                    msg = f"the {use.role} tier has {use.uplinks} uplinks but there is no tier above it"
                    yield self.finding(ctx, (*TOPO, use.role, "uplinks"), msg, severity=Severity.WARNING,
                                       hint="set uplinks: 0 on the top tier")  # fmt: skip
                continue
            above = "spine" if use.role == "leaf" else "superspine"
            scope = (" per pod" if t.has_pods else "") if above == "spine" else " per plane"
            if use.uplinks == 0:
                msg = f"the {use.role} tier has no uplinks towards the {above} tier"
                yield self.finding(ctx, (*TOPO, use.role, "uplinks"), msg)
            elif use.uplinks % use.uplink_targets:
                msg = f"{use.uplinks} {use.role} uplinks cannot spread evenly over {use.uplink_targets} {above}s{scope}"
                yield self.finding(ctx, (*TOPO, use.role, "uplinks"), msg, related=[(*TOPO, above, "count")])


class OversubscriptionMismatch(Rule):
    """The oversubscription the counts and speeds give differs from the declared one by more than 5 %.

    Computed per switch as downlink capacity / uplink capacity, e.g. 192 x 400G down and 28 x 400G up is
    6.86:1, which matches a declared 7:1 (within 5 %).

    ```yaml
    # bad: 32 x 400G down, 16 x 400G up is 2:1
    topology: {servers_per_su: 32, leaf: {uplinks: 16, uplink_speed: 400G, oversubscription: "1:1"}}
    # fixed
    topology: {servers_per_su: 32, leaf: {uplinks: 32, uplink_speed: 400G, oversubscription: "1:1"}}
    ```
    """

    id = "TOPO004"
    severity = Severity.ERROR
    title = "Oversubscription differs from the declared one"
    hint = "fix the counts or speeds, or declare the oversubscription they give"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for use in port_use(ctx.intent):
            if use.uplinks == 0 or use.uplink_targets == 0 or use.down_capacity == 0:
                continue
            tier = getattr(ctx.intent.topology, use.role)
            declared = tier.oversubscription
            actual = use.down_capacity / use.up_capacity
            if abs(actual - declared) / declared <= OVERSUBSCRIPTION_TOLERANCE:
                continue
            msg = (
                f"the {use.role} tier is {ratio(actual)} ({_count(use.downlinks)} x "
                f"{speed(use.down_speed)} down, {use.uplinks} x {speed(use.up_speed)} up), declared {ratio(declared)}"
            )
            hint = None
            if (declared < 1) != (actual < 1) and abs(actual * declared - 1) / max(actual * declared, 1) <= 0.05:
                # '1:7' for a 7:1 tier: the sides are swapped, and the message should say so.
                hint = f"the ratio is downlink:uplink; this tier is '{ratio(actual)}'"
            yield self.finding(ctx, (*TOPO, use.role, "oversubscription"), msg, hint=hint)


RULES: tuple[type[Rule], ...] = (RailsNotGpus, PortBudgetExceeded, UplinksNotDivisible, OversubscriptionMismatch)
