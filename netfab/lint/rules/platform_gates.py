"""Capability gates as one table: "the intent asks for X, a tier's platform lacks it" is one shape of rule.

Each `FeatureGate` says what the intent asks (`asks`: where, in which words, which capability), how a
platform's capabilities answer (`has`), and the finding's words. `GateRule` runs every gate the same way: per
ask and per platform group, a missing feature is a finding at the ask's path, with the capability data's
reason (`caps.why`) and, where a later release has it, the upgrade hint. A supported feature may still have
limits (port speeds, watchdog actions): `beyond` checks them. Rules that weigh numbers (class counts, timer
ranges, percentages) stay classes in the platform_* modules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from netfab.capabilities import Capabilities
from netfab.core.findings import Finding, Severity
from netfab.lint.context import DataPath, LintContext, PlatformGroup
from netfab.lint.rule import Rule
from netfab.lint.rules._words import class_path, join, klass, speed

LB = ("load_balancing",)
WATCHDOG = ("qos", "pfc", "watchdog")


@dataclass(frozen=True)
class Ask:
    """One thing the intent asks of every tier's platform."""

    path: DataPath
    what: str
    """How the message names it ('hash field rocev2_dest_qp')."""
    feature: str
    """The capability's dotted name: the key of its reason and of the release that adds it."""


@dataclass(frozen=True)
class FeatureGate:
    id: str
    name: str
    """The rule's class name."""
    title: str
    hint: str
    doc: str
    """The rule's documentation (`netfab rules`, docs/rules.md), with a YAML example."""
    asks: Callable[[LintContext], Iterable[Ask]]
    has: Callable[[Capabilities, Ask], bool]
    message: str = "{what} is not supported by the {label}{why}"
    missing_hint: str | None = None
    """Hint of the 'missing' finding (after any upgrade hint); None = the rule's hint."""
    beyond: Callable[[Rule, LintContext, Ask, PlatformGroup], Iterator[Finding]] | None = None
    """Limits of a feature the platform has (speeds it works at, actions it takes)."""


class GateRule(Rule):
    gate: ClassVar[FeatureGate]
    severity = Severity.ERROR

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        gate = self.gate
        for ask in gate.asks(ctx):
            for group in ctx.platform_groups:
                caps = group.caps
                if gate.has(caps, ask):
                    if gate.beyond is not None:
                        yield from gate.beyond(self, ctx, ask, group)
                    continue
                msg = gate.message.format(what=ask.what, label=group.label, why=caps.why(ask.feature))
                hint = f"{caps.upgrade_hint(ask.feature)}{gate.missing_hint or self.hint}"
                yield self.finding(ctx, ask.path, msg, hint=hint, related=[group.path])


def _when(condition: bool, *asks: Ask) -> tuple[Ask, ...]:
    return asks if condition else ()


def _fabric_port_speeds(ctx: LintContext) -> dict[str, set[int]]:
    """Speeds of the switch-to-switch ports of each tier: where ECMP and adaptive routing act."""
    t = ctx.intent.topology
    speeds: dict[str, set[int]] = {"leaf": {t.leaf.uplink_speed}, "spine": {t.leaf.uplink_speed}}
    if t.superspine is not None:
        speeds["spine"].add(t.spine.uplink_speed)
        speeds["superspine"] = {t.spine.uplink_speed}
    return speeds


def _speeds(
    works_at: Callable[[Capabilities], tuple[int, ...] | None], feature: str
) -> Callable[..., Iterator[Finding]]:
    """A finding per tier of the group whose fabric ports run at a speed `feature` does not work at."""

    def beyond(rule: Rule, ctx: LintContext, ask: Ask, group: PlatformGroup) -> Iterator[Finding]:
        speeds = works_at(group.caps)
        if speeds is None:
            return
        by_role = _fabric_port_speeds(ctx)
        for role in group.roles:
            bad = sorted(s for s in by_role[role] if s not in speeds)
            if bad:
                works = "/".join(speed(s) for s in speeds)
                msg = (
                    f"{feature} on {group.caps.platform} works at {works} only, but the {role} tier's "
                    f"fabric ports run at {join(speed(s) for s in bad)}"
                )
                yield rule.finding(ctx, ask.path, msg, related=[(*group.path, "uplink_speed")])

    return beyond


def _watchdog_action(rule: Rule, ctx: LintContext, ask: Ask, group: PlatformGroup) -> Iterator[Finding]:
    wd = ctx.intent.qos.pfc.watchdog
    caps = group.caps
    if wd is None or wd.action in caps.watchdog_actions:
        return
    has = join(sorted(caps.watchdog_actions))
    why = caps.why(f"pfc_watchdog.actions.{wd.action}")
    msg = f"PFC watchdog action '{wd.action}' is not available on the {group.label}{why}; it has: {has}"
    yield rule.finding(ctx, (*WATCHDOG, "action"), msg, related=[group.path])


def _hash_fields(ctx: LintContext) -> Iterator[Ask]:
    for j, field in enumerate(ctx.intent.load_balancing.hash_fields):
        yield Ask((*LB, "hash_fields", j), f"hash field {field.value}", f"hash_fields.{field.value}")


def _ecn_weights(ctx: LintContext) -> Iterator[Ask]:
    for i, tc in enumerate(ctx.intent.qos.classes):
        if tc.ecn is not None and tc.ecn.weight != 0:
            yield Ask(class_path(i, "ecn", "weight"), f"{klass(tc)} has ECN weight {tc.ecn.weight}", "ecn_weight")


def _watchdog_asked(ctx: LintContext) -> tuple[Ask, ...]:
    # Not gated on PFC priorities: the renderers refuse an enabled watchdog they cannot express even in a
    # fabric without lossless classes (the plan carries it either way).
    wd = ctx.intent.qos.pfc.watchdog
    return _when(wd is not None and wd.enabled, Ask(WATCHDOG, "PFC watchdog", "pfc_watchdog"))


GATES: tuple[FeatureGate, ...] = (
    FeatureGate(
        id="CAP002",
        name="HashFieldUnsupported",
        title="Hash field not supported by the platform",
        hint="remove the field from load_balancing.hash_fields",
        doc="""An ECMP hash field is not available on a tier's platform (or its NOS release).

        Notably `rocev2_dest_qp`: SONiC (RDMA_BTH_DEST_QP), EOS >= 4.33.1F (sand payload hashing; the tier's
        os_version must say so, the renderer picks the syntax by it), Junos EVO on QFX5240; not Cumulus (adaptive
        routing instead), NX-OS (UDF only, unconfirmed) or Linux/FRR.

        ```yaml
        # bad on arista_eos 4.32.0F
        load_balancing: {hash_fields: [src_ip, dst_ip, src_port, dst_port, rocev2_dest_qp]}
        # fixed: upgrade (os_version: 4.33.1F) or drop the field
        load_balancing: {hash_fields: [src_ip, dst_ip, src_port, dst_port]}
        ```
        """,
        asks=_hash_fields,
        has=lambda caps, ask: ask.feature.removeprefix("hash_fields.") in caps.hashes,
    ),
    FeatureGate(
        id="CAP003",
        name="AdaptiveRoutingUnsupported",
        title="Adaptive routing not supported by the platform",
        hint="set load_balancing.adaptive_routing: false, or run the tier on a platform that has it",
        doc="""Adaptive routing is requested but a tier's platform lacks it, or lacks it at that port speed.

        Rendered for: Cumulus on Spectrum-4 at 200G/400G only (not 800G); SONiC with ARS (from 202511); Junos
        (DLB). EOS (DLB from 4.30.2F) and NX-OS (DLB from 10.5(1)F) have it, but their CLI is unconfirmed, so netfab
        does not render it there; Linux/FRR has hash-only ECMP.

        ```yaml
        # bad: frr
        load_balancing: {adaptive_routing: true}
        # fixed
        load_balancing: {adaptive_routing: false}
        ```
        """,
        asks=lambda ctx: _when(
            ctx.intent.load_balancing.adaptive_routing,
            Ask((*LB, "adaptive_routing"), "adaptive routing", "adaptive_routing"),
        ),
        has=lambda caps, ask: caps.adaptive_routing,
        beyond=_speeds(lambda caps: caps.adaptive_routing_speeds, "adaptive routing"),
    ),
    FeatureGate(
        id="CAP004",
        name="PacketSprayingUnsupported",
        title="Packet spraying not supported by the platform",
        hint="set load_balancing.packet_spraying: false",
        doc="""Packet spraying is requested but a tier's platform has no per-packet load balancing.

        Per-packet modes: Cumulus adaptive routing (per-packet by design, so at 200G/400G only), SONiC ARS
        per_packet_quality, Junos DLB per-packet. NX-OS DLB per-packet (10.5(1)F+) is not rendered (keywords
        unconfirmed); not EOS or Linux/FRR.

        ```yaml
        # bad: arista_eos
        load_balancing: {packet_spraying: true}
        # fixed
        load_balancing: {packet_spraying: false}
        ```
        """,
        asks=lambda ctx: _when(
            ctx.intent.load_balancing.packet_spraying,
            Ask((*LB, "packet_spraying"), "packet spraying", "packet_spraying"),
        ),
        has=lambda caps, ask: caps.packet_spraying,
        beyond=_speeds(lambda caps: caps.packet_spraying_speeds, "packet spraying"),
    ),
    FeatureGate(
        id="CAP005",
        name="WatchdogUnsupported",
        title="PFC watchdog or its action not supported by the platform",
        hint="use an action every tier supports (drop is universal), or set qos.pfc.watchdog: null",
        doc="""The PFC watchdog, or its action, is not available on a tier's platform.

        Actions: SONiC drop/forward/alert; EOS drop, no-drop (forward), notify-only (alert); Junos drop/forward;
        Cumulus (from 5.6) and NX-OS drop only; Linux/FRR has no PFC watchdog. Checked whenever the watchdog is
        enabled, with or without lossless classes: the renderers refuse it either way.

        ```yaml
        # bad on nvidia_cumulus
        qos: {pfc: {watchdog: {detect: 200ms, restore: 400ms, action: forward}}}
        # fixed
        qos: {pfc: {watchdog: {detect: 200ms, restore: 400ms, action: drop}}}
        ```
        """,
        asks=_watchdog_asked,
        has=lambda caps, ask: caps.pfc_watchdog.supported,
        message="{what} requested, but there is none on the {label}{why}",
        missing_hint="set qos.pfc.watchdog: null (lint then warns PFC001 where a watchdog exists)",
        beyond=_watchdog_action,
    ),
    FeatureGate(
        id="CAP008",
        name="UnnumberedUnsupported",
        title="BGP unnumbered not supported by the platform",
        hint="set underlay.addressing: p2p31 (a /31 per link from underlay.p2p)",
        doc="""`underlay.addressing: unnumbered` on a tier whose platform netfab cannot render BGP unnumbered for.

        Unnumbered runs eBGP over each link's IPv6 link-local address with IPv4 routes over IPv6 next hops
        (RFC 5549). NX-OS has it, but its syntax is unconfirmed, so the NX-OS templates render /31 links only.

        ```yaml
        # bad: cisco_nxos
        underlay: {addressing: unnumbered}
        # fixed
        underlay: {addressing: p2p31}
        ```
        """,
        asks=lambda ctx: _when(
            ctx.intent.underlay.addressing == "unnumbered",
            Ask(("underlay", "addressing"), "unnumbered BGP", "bgp_unnumbered"),
        ),
        has=lambda caps, ask: caps.bgp_unnumbered,
    ),
    FeatureGate(
        id="CAP009",
        name="HashSeedUnsupported",
        title="Fixed hash seed not supported by the platform",
        hint="omit load_balancing.hash_seed: each device then gets a stable seed derived from its name",
        doc="""`load_balancing.hash_seed` is set, but a tier's platform has no way to configure a fixed seed.

        EOS has no confirmed hash-seed CLI; SONiC's CONFIG_DB has no seed leaf (orchagent derives one per device
        type). Without an explicit seed netfab gives every device a stable seed of its own, which is what breaks
        ECMP polarisation anyway.

        ```yaml
        # bad: arista_eos or sonic
        load_balancing: {hash_seed: 42}
        # fixed
        load_balancing: {}
        ```
        """,
        asks=lambda ctx: _when(
            ctx.intent.load_balancing.hash_seed is not None,
            Ask(("load_balancing", "hash_seed"), "a fixed hash seed", "hash_seed"),
        ),
        has=lambda caps, ask: caps.hash_seed,
    ),
    FeatureGate(
        id="CAP013",
        name="TrustPcpUnsupported",
        title="Trust PCP not supported by the platform",
        hint="set qos.trust: dscp (and nic.trust: dscp): routed RoCEv2 is classified by DSCP",
        doc="""`qos.trust: pcp` on a tier whose platform cannot classify by 802.1Q priority on routed ports.

        Fabric ports are routed and untagged: there is no VLAN tag and so no PCP to trust. SONiC (DOT1P_TO_TC_MAP)
        and Cumulus (trust l2) can still be told to; EOS, NX-OS, Junos and Linux cannot.

        ```yaml
        # bad on arista_eos
        qos: {trust: pcp}
        # fixed
        qos: {trust: dscp}
        ```
        """,
        asks=lambda ctx: _when(ctx.intent.qos.trust == "pcp", Ask(("qos", "trust"), "trust pcp", "trust_pcp")),
        has=lambda caps, ask: caps.trust_pcp,
    ),
    FeatureGate(
        id="CAP017",
        name="EcnWeightUnsupported",
        title="ECN averaging weight not supported by the platform",
        hint="set the class's ecn.weight to 0 (instantaneous queue)",
        doc="""An ECN averaging weight other than 0 on a platform that marks on the instantaneous queue only.

        Junos drop profiles, SONiC WRED_PROFILE and Spectrum (Cumulus) have no averaging weight; the weight cannot
        be rendered, and 0 is what RoCE wants anyway (ECN006).

        ```yaml
        # bad on sonic
        ecn: {kmin: 150KB, kmax: 1500KB, weight: 4}
        # fixed
        ecn: {kmin: 150KB, kmax: 1500KB, weight: 0}
        ```
        """,
        asks=_ecn_weights,
        has=lambda caps, ask: caps.ecn_weight,
        message="{what}, but there is no averaging weight on the {label}{why}",
    ),
    FeatureGate(
        id="CAP020",
        name="ExplicitHeadroomUnsupported",
        title="Explicit PFC headroom not supported by the platform",
        hint="set qos.buffers.headroom: auto",
        doc="""`qos.buffers.headroom` is a byte size, but a tier's platform sizes PFC headroom itself.

        SONiC and Cumulus derive headroom from cable length, speed and MTU; Junos has no per-port knob (a shared
        buffer partition); EOS and NX-OS need CLI netfab does not render; Linux dcb sizes it from the cable delay.
        Every platform in scope takes `auto`, which sizes it from the same formula HDR001 checks.

        ```yaml
        # bad
        qos: {buffers: {headroom: 200KB}}
        # fixed
        qos: {buffers: {headroom: auto}}
        ```
        """,
        asks=lambda ctx: _when(
            ctx.intent.qos.buffers.headroom != "auto",
            Ask(("qos", "buffers", "headroom"), "explicit PFC headroom", "explicit_headroom"),
        ),
        has=lambda caps, ask: caps.explicit_headroom,
    ),
    FeatureGate(
        id="CAP023",
        name="LosslessPoolUnsupported",
        title="No lossless buffer pool on the platform release",
        hint="run a release that has one, or make every class lossy (no PFC priorities)",
        doc="""Lossless classes (PFC priorities) on a release that cannot give them a buffer pool of their own.

        PFC only keeps a class lossless when its priority is in a lossless pool: NVUE puts every priority in the
        100 % default-lossy pool unless `qos traffic-pool default-lossless` says otherwise, and that object
        exists from Cumulus Linux 5.3 on (NVUE object model per release, nvueschema).

        ```yaml
        # bad: nvidia_cumulus at os_version 5.2.0 with a lossless roce class
        topology: {leaf: {platform: nvidia_cumulus, os_version: 5.2.0}}
        # fixed
        topology: {leaf: {platform: nvidia_cumulus, os_version: 5.12.0}}
        ```
        """,
        asks=lambda ctx: _when(
            bool(ctx.intent.qos.pfc_priorities),
            Ask(("qos", "classes"), "lossless classes", "lossless_buffer_pool"),
        ),
        has=lambda caps, ask: caps.lossless_buffer_pool,
    ),
)


def _rule(gate: FeatureGate) -> type[Rule]:
    attrs = {"id": gate.id, "title": gate.title, "hint": gate.hint, "gate": gate, "__doc__": gate.doc}
    return type(gate.name, (GateRule,), {"__module__": __name__, "__qualname__": gate.name, **attrs})


RULES: tuple[type[Rule], ...] = tuple(_rule(g) for g in GATES)
