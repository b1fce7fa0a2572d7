"""What the intent asks of each tier's platform, against that platform's capability data (netfab/capabilities)."""

from __future__ import annotations

from collections.abc import Iterator

from netfab.capabilities import parse_version
from netfab.core.findings import Finding, Severity
from netfab.lint.context import DataPath, LintContext, PlatformGroup
from netfab.lint.rule import Rule
from netfab.lint.rules._words import join, priorities, speed

LB = ("load_balancing",)
WATCHDOG = ("qos", "pfc", "watchdog")


class TooManyLosslessClasses(Rule):
    """The fabric has more lossless (PFC) priorities than a tier's platform supports.

    Each lossless priority needs its own headroom and PFC state on every port; platforms cap how many they can
    back (capability data `max_lossless_classes`).

    ```yaml
    # bad on nvidia_cumulus (2 PFC priorities)
    qos: {pfc: {priorities: [2, 3, 4]}}
    # fixed
    qos: {pfc: {priorities: [3]}}
    ```
    """

    id = "CAP001"
    severity = Severity.ERROR
    title = "More lossless priorities than the platform supports"
    hint = "merge lossless classes onto fewer priorities, or use a platform that supports more"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        prios = ctx.intent.qos.pfc_priorities
        explicit = ctx.intent.qos.pfc.priorities is not None
        path = ("qos", "pfc", "priorities") if explicit else ("qos", "classes")
        for group in ctx.platform_groups:
            limit = group.caps.max_lossless_classes
            if len(prios) > limit:
                msg = (
                    f"{len(prios)} lossless {priorities(prios)}, but at most {limit} are supported on the {group.label}"
                )
                yield self.finding(ctx, path, msg, related=[group.path])


class HashFieldUnsupported(Rule):
    """An ECMP hash field is not available on a tier's platform (or its NOS release).

    Notably `rocev2_dest_qp`: SONiC (RDMA_BTH_DEST_QP), EOS >= 4.33.1F (sand payload hashing; the tier's
    os_version must say so, the renderer picks the syntax by it), Junos EVO on QFX5240; not Cumulus (adaptive
    routing instead), NX-OS (UDF only, unconfirmed) or Linux/FRR.

    ```yaml
    # bad on arista_eos 4.32.0F
    load_balancing: {hash_fields: [src_ip, dst_ip, src_port, dst_port, rocev2_dest_qp]}
    # fixed: upgrade (os_version: 4.33.1F) or drop the field
    load_balancing: {hash_fields: [src_ip, dst_ip, src_port, dst_port]}
    ```
    """

    id = "CAP002"
    severity = Severity.ERROR
    title = "Hash field not supported by the platform"
    hint = "remove the field from load_balancing.hash_fields"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for j, field in enumerate(ctx.intent.load_balancing.hash_fields):
            for group in ctx.platform_groups:
                if field in group.caps.hashes:
                    continue
                feature = f"hash_fields.{field.value}"
                upgrade = group.caps.upgrade_hint(feature)
                msg = f"hash field {field.value} is not supported by the {group.label}{group.caps.why(feature)}"
                yield self.finding(ctx, (*LB, "hash_fields", j), msg, hint=f"{upgrade}{self.hint}",
                                   related=[group.path])  # fmt: skip


class AdaptiveRoutingUnsupported(Rule):
    """Adaptive routing is requested but a tier's platform lacks it, or lacks it at that port speed.

    Rendered for: Cumulus on Spectrum-4 at 200G/400G only (not 800G); SONiC with ARS (from 202511); Junos
    (DLB). EOS (DLB from 4.30.2F) and NX-OS (DLB from 10.5(1)F) have it, but their CLI is unconfirmed, so netfab
    does not render it there; Linux/FRR has hash-only ECMP.

    ```yaml
    # bad: frr
    load_balancing: {adaptive_routing: true}
    # fixed
    load_balancing: {adaptive_routing: false}
    ```
    """

    id = "CAP003"
    severity = Severity.ERROR
    title = "Adaptive routing not supported by the platform"
    hint = "set load_balancing.adaptive_routing: false, or run the tier on a platform that has it"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        if not ctx.intent.load_balancing.adaptive_routing:
            return
        path = (*LB, "adaptive_routing")
        speeds_by_role = _fabric_port_speeds(ctx)
        for group in ctx.platform_groups:
            caps = group.caps
            if not caps.adaptive_routing:
                upgrade = caps.upgrade_hint("adaptive_routing")
                msg = f"adaptive routing is not supported by the {group.label}{caps.why('adaptive_routing')}"
                yield self.finding(ctx, path, msg, hint=f"{upgrade}{self.hint}", related=[group.path])
                continue
            yield from _speed_findings(self, ctx, path, group, "adaptive routing", caps.adaptive_routing_speeds,
                                       speeds_by_role)  # fmt: skip


def _speed_findings(
    rule: Rule,
    ctx: LintContext,
    path: DataPath,
    group: PlatformGroup,
    feature: str,
    works_at: tuple[int, ...] | None,
    speeds_by_role: dict[str, set[int]],
) -> Iterator[Finding]:
    """A finding per tier of `group` whose fabric ports run at a speed `feature` does not work at."""
    if works_at is None:
        return
    for role in group.roles:
        bad = sorted(s for s in speeds_by_role[role] if s not in works_at)
        if bad:
            works = "/".join(speed(s) for s in works_at)
            msg = (
                f"{feature} on {group.caps.platform} works at {works} only, but the {role} tier's "
                f"fabric ports run at {join(speed(s) for s in bad)}"
            )
            yield rule.finding(ctx, path, msg, related=[(*group.path, "uplink_speed")])


def _fabric_port_speeds(ctx: LintContext) -> dict[str, set[int]]:
    """Speeds of the switch-to-switch ports of each tier: where ECMP and adaptive routing act."""
    t = ctx.intent.topology
    speeds: dict[str, set[int]] = {"leaf": {t.leaf.uplink_speed}, "spine": {t.leaf.uplink_speed}}
    if t.superspine is not None:
        speeds["spine"].add(t.spine.uplink_speed)
        speeds["superspine"] = {t.spine.uplink_speed}
    return speeds


class PacketSprayingUnsupported(Rule):
    """Packet spraying is requested but a tier's platform has no per-packet load balancing.

    Per-packet modes: Cumulus adaptive routing (per-packet by design, so at 200G/400G only), SONiC ARS
    per_packet_quality, Junos DLB per-packet. NX-OS DLB per-packet (10.5(1)F+) is not rendered (keywords
    unconfirmed); not EOS or Linux/FRR.

    ```yaml
    # bad: arista_eos
    load_balancing: {packet_spraying: true}
    # fixed
    load_balancing: {packet_spraying: false}
    ```
    """

    id = "CAP004"
    severity = Severity.ERROR
    title = "Packet spraying not supported by the platform"
    hint = "set load_balancing.packet_spraying: false"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        if not ctx.intent.load_balancing.packet_spraying:
            return
        path = (*LB, "packet_spraying")
        speeds_by_role = _fabric_port_speeds(ctx)
        for group in ctx.platform_groups:
            caps = group.caps
            if not caps.packet_spraying:
                upgrade = caps.upgrade_hint("packet_spraying")
                msg = f"packet spraying is not supported by the {group.label}{caps.why('packet_spraying')}"
                yield self.finding(ctx, path, msg, hint=f"{upgrade}{self.hint}", related=[group.path])
                continue
            yield from _speed_findings(self, ctx, path, group, "packet spraying", caps.packet_spraying_speeds,
                                       speeds_by_role)  # fmt: skip


class WatchdogUnsupported(Rule):
    """The PFC watchdog, or its action, is not available on a tier's platform.

    Actions: SONiC drop/forward/alert; EOS drop, no-drop (forward), notify-only (alert); Junos drop/forward;
    Cumulus (from 5.6) and NX-OS drop only; Linux/FRR has no PFC watchdog. Checked whenever the watchdog is
    enabled, with or without lossless classes: the renderers refuse it either way.

    ```yaml
    # bad on nvidia_cumulus
    qos: {pfc: {watchdog: {detect: 200ms, restore: 400ms, action: forward}}}
    # fixed
    qos: {pfc: {watchdog: {detect: 200ms, restore: 400ms, action: drop}}}
    ```
    """

    id = "CAP005"
    severity = Severity.ERROR
    title = "PFC watchdog or its action not supported by the platform"
    hint = "use an action every tier supports (drop is universal), or set qos.pfc.watchdog: null"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        # Not gated on PFC priorities: the renderers refuse an enabled watchdog they cannot express even in a
        # fabric without lossless classes (the plan carries it either way).
        wd = ctx.intent.qos.pfc.watchdog
        if wd is None or not wd.enabled:
            return
        for group in ctx.platform_groups:
            caps = group.caps
            if not caps.pfc_watchdog.supported:
                upgrade = caps.upgrade_hint("pfc_watchdog")
                hint = f"{upgrade}set qos.pfc.watchdog: null (lint then warns PFC001 where a watchdog exists)"
                msg = f"PFC watchdog requested, but there is none on the {group.label}{caps.why('pfc_watchdog')}"
                yield self.finding(ctx, WATCHDOG, msg, hint=hint, related=[group.path])
            elif wd.action not in caps.watchdog_actions:
                has = join(sorted(caps.watchdog_actions))
                why = caps.why(f"pfc_watchdog.actions.{wd.action}")
                msg = f"PFC watchdog action '{wd.action}' is not available on the {group.label}{why}; it has: {has}"
                yield self.finding(ctx, (*WATCHDOG, "action"), msg, related=[group.path])


class MaxPathsAbovePlatform(Rule):
    """`underlay.max_paths` is larger than the ECMP width a tier's platform supports.

    ```yaml
    # bad on arista_eos (64)
    underlay: {max_paths: 128}
    # fixed
    underlay: {max_paths: 64}
    ```
    """

    id = "CAP006"
    severity = Severity.ERROR
    title = "ECMP maximum paths above the platform limit"
    hint = "lower underlay.max_paths to the platform limit"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        max_paths = ctx.intent.underlay.max_paths
        for group in ctx.platform_groups:
            if max_paths > group.caps.max_ecmp_paths:
                limit = group.caps.max_ecmp_paths
                msg = f"underlay.max_paths is {max_paths}, but at most {limit} are supported on the {group.label}"
                yield self.finding(ctx, ("underlay", "max_paths"), msg, related=[group.path])


class UnreadableOsVersion(Rule):
    """A tier's `os_version` contains no release number, so version-gated capabilities cannot be checked.

    Lint then assumes the newest release, which may accept features the installed release lacks.

    ```yaml
    # bad
    topology: {spine: {platform: arista_eos, os_version: latest}}
    # fixed
    topology: {spine: {platform: arista_eos, os_version: 4.33.1F}}
    ```
    """

    id = "CAP007"
    severity = Severity.WARNING
    title = "OS version cannot be compared"
    hint = "write the release as the NOS prints it (4.33.1F, 10.5(1)F, 23.4R2, 5.12.0, 202411)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for tier in ctx.tiers:
            version = tier.spec.os_version
            if version is not None and parse_version(version) is None:
                msg = f"os_version '{version}' of the {tier.role} tier has no release number: newest release assumed"
                yield self.finding(ctx, (*tier.path, "os_version"), msg)


RULES: tuple[type[Rule], ...] = (
    TooManyLosslessClasses,
    HashFieldUnsupported,
    AdaptiveRoutingUnsupported,
    PacketSprayingUnsupported,
    WatchdogUnsupported,
    MaxPathsAbovePlatform,
    UnreadableOsVersion,
)
