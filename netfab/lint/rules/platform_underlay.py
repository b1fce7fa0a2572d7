"""What the underlay asks of each tier's platform: BGP unnumbered (RFC 5549) where the renderer has it."""

from __future__ import annotations

from collections.abc import Iterator

from netfab.core.findings import Finding, Severity
from netfab.lint.context import LintContext
from netfab.lint.rule import Rule


class UnnumberedUnsupported(Rule):
    """`underlay.addressing: unnumbered` on a tier whose platform netfab cannot render BGP unnumbered for.

    Unnumbered runs eBGP over each link's IPv6 link-local address with IPv4 routes over IPv6 next hops
    (RFC 5549). NX-OS has it, but its syntax is unconfirmed, so the NX-OS templates render /31 links only.

    ```yaml
    # bad: cisco_nxos
    underlay: {addressing: unnumbered}
    # fixed
    underlay: {addressing: p2p31}
    ```
    """

    id = "CAP008"
    severity = Severity.ERROR
    title = "BGP unnumbered not supported by the platform"
    hint = "set underlay.addressing: p2p31 (a /31 per link from underlay.p2p)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        if ctx.intent.underlay.addressing != "unnumbered":
            return
        for group in ctx.platform_groups:
            caps = group.caps
            if not caps.bgp_unnumbered:
                msg = f"unnumbered BGP is not supported by the {group.label}{caps.why('bgp_unnumbered')}"
                hint = f"{caps.upgrade_hint('bgp_unnumbered')}{self.hint}"
                yield self.finding(ctx, ("underlay", "addressing"), msg, hint=hint, related=[group.path])


RULES: tuple[type[Rule], ...] = (UnnumberedUnsupported,)
