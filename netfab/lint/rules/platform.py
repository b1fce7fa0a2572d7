"""Quantitative limits of each tier's platform (capability data in its platform record): lossless classes, ECMP
width, a readable os_version. Simple feature gates are one table in platform_gates."""

from __future__ import annotations

from collections.abc import Iterator

from netfab.capabilities import parse_version
from netfab.core.findings import Finding, Severity
from netfab.lint.context import LintContext
from netfab.lint.rule import Rule
from netfab.lint.rules._words import priorities

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
    MaxPathsAbovePlatform,
    UnreadableOsVersion,
)
