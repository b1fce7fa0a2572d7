"""ECMP load balancing: RoCE entropy in the hash, and ECMP groups that fit maximum-paths."""

from __future__ import annotations

from collections.abc import Iterator

from netfab.core.findings import Finding, Severity
from netfab.intent.types import HashField
from netfab.lint.context import LintContext
from netfab.lint.rule import Rule

LB = ("load_balancing",)


class NoRoceEntropy(Rule):
    """The ECMP hash has no RoCE entropy: neither the UDP source port nor the BTH destination QP.

    RoCEv2 always uses UDP destination port 4791, so between two GPUs every queue pair hashes the same unless the
    hash includes the source port (which NICs vary per QP) or the destination QP. All QPs of a GPU pair then
    share one path, and `qps_per_gpu_pair` buys nothing.

    ```yaml
    # bad
    load_balancing: {hash_fields: [src_ip, dst_ip, ip_protocol, dst_port]}
    # fixed
    load_balancing: {hash_fields: [src_ip, dst_ip, ip_protocol, src_port, dst_port]}
    ```
    """

    id = "LB001"
    severity = Severity.ERROR
    title = "ECMP hash without RoCE entropy"
    hint = "add src_port (or rocev2_dest_qp where the platform has it) to load_balancing.hash_fields"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        fields = set(ctx.intent.load_balancing.hash_fields)
        if not fields & {HashField.SRC_PORT, HashField.ROCE_DEST_QP}:
            msg = (
                "ECMP hash fields have neither src_port nor rocev2_dest_qp: every RoCE flow between two GPUs takes "
                "the same path"
            )
            yield self.finding(ctx, (*LB, "hash_fields"), msg)


class EcmpWiderThanMaxPaths(Rule):
    """A switch has more uplinks than `underlay.max_paths` lets BGP use.

    The ECMP group is one next hop per uplink; routes beyond maximum-paths are not installed, so those uplinks
    carry no traffic and the real oversubscription is worse than designed.

    ```yaml
    # bad: 32 uplinks, 16 paths
    topology: {leaf: {uplinks: 32}}
    underlay: {max_paths: 16}
    # fixed
    underlay: {max_paths: 64}
    ```
    """

    id = "LB002"
    severity = Severity.ERROR
    title = "More uplinks than ECMP maximum paths"
    hint = "raise underlay.max_paths to at least the number of uplinks"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        max_paths = ctx.intent.underlay.max_paths
        for tier in ctx.tiers:
            if tier.spec.uplinks > max_paths:
                msg = (
                    f"the {tier.role} tier has {tier.spec.uplinks} uplinks but underlay.max_paths is {max_paths}: "
                    f"{tier.spec.uplinks - max_paths} uplinks would carry no traffic"
                )
                yield self.finding(ctx, ("underlay", "max_paths"), msg, related=[(*tier.path, "uplinks")])


RULES: tuple[type[Rule], ...] = (NoRoceEntropy, EcmpWiderThanMaxPaths)
