"""ECMP hash settings each tier's platform can express: seed, field pairs, required fields, QP-hashing mode.

Which single fields a platform hashes on is CAP002 (netfab.lint.rules.platform); these rules cover how the
fields combine, as the renderers select them.
"""

from __future__ import annotations

from collections.abc import Iterator

from netfab.core.findings import Finding, Severity
from netfab.intent.types import HashField
from netfab.lint.context import LintContext
from netfab.lint.rule import Rule
from netfab.lint.rules._words import join

FIELDS = ("load_balancing", "hash_fields")


class HashFieldHalfPair(Rule):
    """Only one half of a source/destination pair is a hash field, on a platform that selects them as one.

    NX-OS selects `address source-destination` and `port source-destination` as pairs; NVUE drops symmetric
    hashing without a warning when a pair is set unevenly, so the Cumulus renderer refuses it.

    ```yaml
    # bad on cisco_nxos or nvidia_cumulus
    load_balancing: {hash_fields: [src_ip, dst_ip, src_port]}
    # fixed
    load_balancing: {hash_fields: [src_ip, dst_ip, src_port, dst_port]}
    ```
    """

    id = "CAP010"
    severity = Severity.ERROR
    title = "Hash field without its pair"
    hint = "list both fields of the pair in load_balancing.hash_fields, or neither"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        fields = ctx.intent.load_balancing.hash_fields
        for group in ctx.platform_groups:
            for a, b in group.caps.hash_field_pairs:
                if (a in fields) == (b in fields):
                    continue
                present, missing = (a, b) if a in fields else (b, a)
                msg = (
                    f"hash field {present.value} without {missing.value}: the {group.label} selects "
                    f"{a.value} and {b.value} only together{group.caps.why('hash_field_pairs')}"
                )
                hint = f"add {missing.value} to load_balancing.hash_fields, or remove {present.value}"
                yield self.finding(ctx, (*FIELDS, fields.index(present)), msg, hint=hint, related=[group.path])


class HashFieldRequired(Rule):
    """A field the platform always hashes on is missing from `load_balancing.hash_fields`.

    NX-OS `ip load-sharing` always hashes the source and destination address; an intent without them asks for
    a hash the switch cannot run.

    ```yaml
    # bad on cisco_nxos
    load_balancing: {hash_fields: [src_port, dst_port]}
    # fixed
    load_balancing: {hash_fields: [src_ip, dst_ip, src_port, dst_port]}
    ```
    """

    id = "CAP011"
    severity = Severity.ERROR
    title = "Hash field the platform always uses is missing"
    hint = "add the field to load_balancing.hash_fields"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        fields = set(ctx.intent.load_balancing.hash_fields)
        for group in ctx.platform_groups:
            caps = group.caps
            # Half of a pair present: CAP010 already asks for the other half.
            paired = {x for a, b in caps.hash_field_pairs if a in fields or b in fields for x in (a, b)}
            missing = sorted(f.value for f in caps.hash_fields_required - fields - paired)
            if missing:
                msg = (
                    f"hash fields lack {join(missing)}, which the {group.label} always hashes on"
                    f"{caps.why('hash_fields_required')}"
                )
                hint = f"add {join(missing)} to load_balancing.hash_fields"
                yield self.finding(ctx, FIELDS, msg, hint=hint, related=[group.path])


class QpHashCompanion(Rule):
    """A hash field cannot be combined with `rocev2_dest_qp` in the platform's QP-hashing mode.

    EOS hashes the RoCEv2 destination QP through a sand load-balance profile that covers the IP 5-tuple plus
    the QP only: ingress_port or ipv6_flow_label cannot be added there.

    ```yaml
    # bad on arista_eos
    load_balancing: {hash_fields: [src_ip, dst_ip, src_port, dst_port, ingress_port, rocev2_dest_qp]}
    # fixed
    load_balancing: {hash_fields: [src_ip, dst_ip, src_port, dst_port, rocev2_dest_qp]}
    ```
    """

    id = "CAP012"
    severity = Severity.ERROR
    title = "Hash field not combinable with RoCEv2 QP hashing"
    hint = "remove the field, or drop rocev2_dest_qp and hash on src_port"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        fields = ctx.intent.load_balancing.hash_fields
        if HashField.ROCE_DEST_QP not in fields:
            return
        for group in ctx.platform_groups:
            caps = group.caps
            allowed = caps.qp_hash_companions
            if allowed is None or HashField.ROCE_DEST_QP not in caps.hashes:
                continue  # no QP hashing here at all: CAP002's finding
            for j, field in enumerate(fields):
                # Unsupported on its own is CAP002's finding; only fields the platform has otherwise count here.
                if field is HashField.ROCE_DEST_QP or field in allowed or field not in caps.hashes:
                    continue
                msg = (
                    f"hash field {field.value} cannot be combined with rocev2_dest_qp on the "
                    f"{group.label}{caps.why('qp_hash_companions')}"
                )
                yield self.finding(ctx, (*FIELDS, j), msg, related=[group.path])


RULES: tuple[type[Rule], ...] = (HashFieldHalfPair, HashFieldRequired, QpHashCompanion)
