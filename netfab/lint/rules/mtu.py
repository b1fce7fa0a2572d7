"""MTU: a RoCE packet must fit the links it crosses."""

from __future__ import annotations

from collections.abc import Iterator

from netfab.core.findings import Finding, Severity
from netfab.lint.context import LintContext
from netfab.lint.rule import Rule

# L3 bytes a RoCEv2 packet adds to its payload in the worst case: IPv4 20 + UDP 8 + BTH 12 + RETH 16
# (first packet of an RDMA WRITE) + ImmDt 4 + ICRC 4. The link MTU is an L3 MTU, so Ethernet is not counted.
ROCEV2_HEADER_BYTES = 64


class RoceMtuAboveLinkMtu(Rule):
    """The NIC's RoCE path MTU plus RoCEv2 headers does not fit the link MTU.

    RoCE does not fragment: a 4096 B RoCE payload is a 4160 B IP packet (IPv4, UDP, BTH, RETH, ImmDt, ICRC), and
    links with a smaller MTU drop every full-size packet.

    ```yaml
    # bad
    underlay: {mtu: 4096}
    nic: {roce_mtu: 4096}
    # fixed
    underlay: {mtu: 9216}
    ```
    """

    id = "MTU001"
    severity = Severity.ERROR
    title = "RoCE MTU larger than the link MTU"
    hint = "raise underlay.mtu (9216 is usual) or lower nic.roce_mtu"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        if ctx.intent.qos.class_of_kind("roce") is None:
            return  # a network without RoCE (an OOB network) sends no RoCE packets
        roce_mtu = ctx.intent.nic.roce_mtu
        link_mtu = ctx.intent.underlay.mtu
        packet = roce_mtu + ROCEV2_HEADER_BYTES
        if packet > link_mtu:
            msg = (
                f"RoCE MTU {roce_mtu} makes {packet} B packets with RoCEv2 headers, but underlay.mtu is {link_mtu}: "
                "full-size RoCE packets are dropped"
            )
            path = ctx.first_written(("nic", "roce_mtu"), ("underlay", "mtu"))
            yield self.finding(ctx, path, msg, related=[("nic", "roce_mtu"), ("underlay", "mtu")])


RULES: tuple[type[Rule], ...] = (RoceMtuAboveLinkMtu,)
