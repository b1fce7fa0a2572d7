"""BGP AS numbers: each role's range stays inside the private range it starts in, and roles never collide.

The scheme (RFC 7938 style, netfab.intent.underlay.AsnScheme): superspines share one ASN, spines one per pod
(spine + pod - 1), leaf n gets leaf_base + n - 1.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from netfab.core.findings import Finding, Severity
from netfab.lint.context import LintContext
from netfab.lint.fabric import DataPath
from netfab.lint.rule import Rule

# RFC 6996 private-use ranges.
PRIVATE_RANGES = ((64512, 65534), (4200000000, 4294967294))
ASN = ("underlay", "asn")


@dataclass(frozen=True, slots=True)
class AsnRange:
    role: str
    first: int
    last: int
    unit: str

    @property
    def path(self) -> DataPath:
        return (*ASN, "leaf_base" if self.role == "leaf" else self.role)

    def __str__(self) -> str:
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"


def asn_ranges(ctx: LintContext) -> list[AsnRange]:
    t = ctx.intent.topology
    a = ctx.intent.underlay.asn
    pods = max(t.pod_count, 1)
    if a.spine_per_switch:
        ranges = [AsnRange("spine", a.spine, a.spine + t.spine_count - 1, "spine")]
    else:
        ranges = [AsnRange("spine", a.spine, a.spine + pods - 1, "pod")]
    ranges.append(AsnRange("leaf", a.leaf_base, a.leaf_base + t.leaf_count - 1, "leaf"))
    if t.superspine is not None:
        ranges.insert(0, AsnRange("superspine", a.superspine, a.superspine, "superspine"))
    return ranges


class AsnRangeExhausted(Rule):
    """A role's ASNs run past the end of the private range its base starts in.

    With one ASN per leaf, 2-byte private ASNs (64512-65534) last for ~1,000 leaves from the bottom of the
    range, far fewer from a base like 65100. Past the end lie reserved (65535) and public ASNs.

    ```yaml
    # bad: 1,536 leaves from 65100
    underlay: {asn: {leaf_base: 65100}}
    # fixed: 4-byte private range
    underlay: {asn: {leaf_base: 4200000000}}
    ```
    """

    id = "ASN001"
    severity = Severity.ERROR
    title = "ASN scheme runs out of its private range"
    hint = "start the role in the 4-byte private range (4200000000-4294967294)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for r in asn_ranges(ctx):
            private = next(((lo, hi) for lo, hi in PRIVATE_RANGES if lo <= r.first <= hi), None)
            end = private[1] if private else 4294967294
            if r.last > end:
                where = f"the private range {private[0]}-{private[1]}" if private else "the 4-byte ASN space"
                count = r.last - r.first + 1
                msg = (
                    f"{count:,} {r.role} ASNs (one per {r.unit}) from {r.first} end at {r.last}, "
                    f"past the end of {where} (room for {end - r.first + 1:,})"
                )
                yield self.finding(ctx, r.path, msg)


class AsnCollision(Rule):
    """Two roles' ASN ranges overlap.

    eBGP drops routes whose AS path contains the receiver's own ASN, so a leaf sharing an ASN with a spine
    silently loses routes (and RFC 7938 designs depend on distinct ASNs per tier).

    ```yaml
    # bad: spines in pods 1-8 use 65000-65007, leaves start at 65005
    underlay: {asn: {spine: 65000, leaf_base: 65005}}
    # fixed
    underlay: {asn: {spine: 65000, leaf_base: 65100}}
    ```
    """

    id = "ASN002"
    severity = Severity.ERROR
    title = "ASN ranges of two roles collide"
    hint = "move one role's ASNs clear of the other's range"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        ranges = asn_ranges(ctx)
        for i, a in enumerate(ranges):
            for b in ranges[i + 1 :]:
                if a.first <= b.last and b.first <= a.last:
                    msg = f"{b.role} ASNs {b} overlap {a.role} ASNs {a}"
                    yield self.finding(ctx, b.path, msg, related=[a.path])


RULES: tuple[type[Rule], ...] = (AsnRangeExhausted, AsnCollision)
