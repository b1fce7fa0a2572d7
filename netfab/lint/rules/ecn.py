"""ECN marking thresholds (Kmin/Kmax/Pmax) against each other, frame size, bandwidth-delay product and buffer.

Bounds and their reasoning live in netfab.lossless.ecn (VENDOR_REFERENCE §7.2).
"""

from __future__ import annotations

from collections.abc import Iterator

from netfab.core.findings import Finding, Severity
from netfab.intent.hardware import tier_buffer
from netfab.lint.context import LintContext
from netfab.lint.fabric import link_kinds, longest_path_cables
from netfab.lint.rule import Rule
from netfab.lint.rules._words import approx, class_path, klass, size, speed
from netfab.lossless.ecn import KMAX_MAX_BDP, KMAX_MIN_BDP, kmax_bounds, kmin_floor, path_rtt_us


class KminAboveKmax(Rule):
    """ECN Kmin is above Kmax (error), or equal to it (warning: step marking).

    Marking probability rises from 0 at Kmin to Pmax at Kmax; with Kmin > Kmax the ramp is undefined and
    platforms reject or reorder the pair. Kmin = Kmax is step marking (every packet above K is marked), which
    some storage references use but which makes DCQCN's reaction all-or-nothing.

    ```yaml
    # bad
    ecn: {kmin: 1500KB, kmax: 150KB}
    # fixed
    ecn: {kmin: 150KB, kmax: 1500KB}
    ```
    """

    id = "ECN001"
    severity = Severity.ERROR
    title = "ECN Kmin not below Kmax"
    hint = "make kmin smaller than kmax (e.g. 150KB / 1500KB, the Cumulus RoCE default)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for i, tc in enumerate(ctx.intent.qos.classes):
            ecn = tc.ecn
            if ecn is None or ecn.kmin < ecn.kmax:
                continue
            path = class_path(i, "ecn", "kmin")
            if ecn.kmin == ecn.kmax:
                msg = f"{klass(tc)} marks ECN at one step ({size(ecn.kmin)}): Kmin equals Kmax"
                yield self.finding(ctx, path, msg, severity=Severity.WARNING)
            else:
                msg = f"{klass(tc)} has ECN Kmin {size(ecn.kmin)} above Kmax {size(ecn.kmax)}"
                yield self.finding(ctx, path, msg, related=[class_path(i, "ecn", "kmax")])


class KmaxAboveQueueBuffer(Rule):
    """ECN Kmax is larger than the buffer one egress queue can use on a tier's platform.

    A threshold the queue can never reach never marks: the switch drops (lossy) or pauses (lossless) first. The
    per-queue figure is the platform's shared buffer times the share the dynamic threshold lets one queue take
    (capability data `buffer`).

    ```yaml
    # bad on a 64 MB ASIC (one queue can take ~32 MB)
    ecn: {kmin: 1MB, kmax: 48MB}
    # fixed
    ecn: {kmin: 150KB, kmax: 1500KB}
    ```
    """

    id = "ECN002"
    severity = Severity.ERROR
    title = "ECN Kmax above the buffer a queue can use"
    hint = "lower kmax well below the queue's buffer so marking starts before drops or pauses"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.ecn is None:
                continue
            for group in ctx.platform_groups:
                limit = group.caps.buffer.queue_bytes
                if limit is not None and tc.ecn.kmax > limit:
                    msg = (
                        f"{klass(tc)} has ECN Kmax {size(tc.ecn.kmax)}, more than the ~{approx(limit)} one queue "
                        f"can hold on the {group.label}: it would never mark"
                    )
                    hint = f"{self.hint} (queue size: planning figure for {group.caps.buffer.asic})"
                    yield self.finding(ctx, class_path(i, "ecn", "kmax"), msg, hint=hint)


class KminBelowFrames(Rule):
    """ECN Kmin is below two frames of the link MTU.

    With one jumbo frame on the wire and one queued the queue is already at Kmin, so a sender that is merely at
    line rate gets marked and DCQCN throttles it (VENDOR_REFERENCE §7.2: keep Kmin above a few MTUs).

    ```yaml
    # bad with underlay.mtu 9216
    ecn: {kmin: 10KB, kmax: 1500KB}
    # fixed
    ecn: {kmin: 150KB, kmax: 1500KB}
    ```
    """

    id = "ECN003"
    severity = Severity.WARNING
    title = "ECN Kmin below two MTU-sized frames"
    hint = "raise kmin to at least two frames of underlay.mtu"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        mtu = ctx.intent.underlay.mtu
        floor = kmin_floor(mtu)
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.ecn is not None and tc.ecn.kmin < floor:
                msg = (
                    f"{klass(tc)} has ECN Kmin {size(tc.ecn.kmin)}, less than two {mtu} B frames "
                    f"({size(floor)}): it marks at line rate without congestion"
                )
                yield self.finding(ctx, class_path(i, "ecn", "kmin"), msg, related=[("underlay", "mtu")])


class KmaxOutOfBdp(Rule):
    """ECN Kmax is out of proportion to the bandwidth-delay product at a port speed of the fabric.

    The BDP is computed for each egress port speed (NIC links, leaf uplinks, spine uplinks) over the fabric's
    longest path (all cables there and back, 1 us per switch crossed each way, 2 us NIC turnaround). Below 1x
    BDP a single flow is marked before it reaches line rate; above 50x BDP marking starts so late that tens of
    round trips of data queue up and PFC fires first (netfab.lossless.ecn, VENDOR_REFERENCE §7.2).

    ```yaml
    # bad at 800G (BDP over a 3-tier path ~1.9 MB)
    ecn: {kmin: 150KB, kmax: 500KB}
    # fixed
    ecn: {kmin: 400KB, kmax: 4MB}
    ```
    """

    id = "ECN004"
    severity = Severity.WARNING
    title = "ECN Kmax out of proportion to the bandwidth-delay product"
    hint = "scale kmax with port speed: between 1x and 50x the BDP quoted in the message"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        rtt = path_rtt_us(longest_path_cables(ctx.intent))
        speeds = sorted({k.speed_gbps for k in link_kinds(ctx.intent)})
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.ecn is None:
                continue
            kmax = tc.ecn.kmax
            for gbps in speeds:
                b = kmax_bounds(gbps, rtt)
                cap = _smallest_buffer(ctx, gbps)
                high = min(b.high, cap[0]) if cap else b.high
                if kmax < b.low:
                    why = f"below {KMAX_MIN_BDP:g}x the BDP ({approx(b.bdp)} at {speed(gbps)}, {rtt:.1f} us RTT)"
                    why += ": a single flow is marked before it reaches line rate"
                elif cap and kmax > cap[0]:
                    why = f"more than the {approx(cap[0])} shared buffer of the {cap[1]} that sends at {speed(gbps)}"
                    why += ": the queue can never grow that long, so it is never marked"
                elif kmax > b.high:
                    why = f"{kmax / b.bdp:.0f}x the BDP ({approx(b.bdp)} at {speed(gbps)}, {rtt:.1f} us RTT)"
                    why += f", more than {KMAX_MAX_BDP:g}x: queues build for many round trips before marking"
                else:
                    continue
                msg = f"{klass(tc)} has ECN Kmax {size(kmax)}, {why}"
                if high < b.low:
                    hint = f"at {speed(gbps)} the BDP ({approx(b.bdp)}) is more than the {cap[1] if cap else ''} buffer"
                    hint += ": shorten the path or mark on a deeper-buffer tier"
                else:
                    bound = f" (the {cap[1]} buffer)" if cap and high == cap[0] else ""
                    hint = f"at {speed(gbps)} keep kmax between {approx(b.low)} and {approx(high)}{bound}"
                yield self.finding(ctx, class_path(i, "ecn", "kmax"), msg, hint=hint)


def _smallest_buffer(ctx: LintContext, gbps: int) -> tuple[int, str] | None:
    """The smallest known shared buffer among the switch tiers that send at this speed, with its ASIC.

    Only a model's or a declared figure bounds the hint: a platform's planning figure is a guess, and an
    unpublished buffer says nothing (tier_buffer's basis)."""
    roles = {role for k in link_kinds(ctx.intent) if k.speed_gbps == gbps for role in (k.lower, k.upper)}
    known: list[tuple[int, str]] = []
    for tier in ctx.tiers:
        if tier.role not in roles:
            continue
        buffer, basis = tier_buffer(tier.spec)
        if basis in ("model", "declared") and buffer.shared_bytes:
            known.append((buffer.shared_bytes, buffer.asic))
    return min(known) if known else None


class LosslessWithoutEcn(Rule):
    """A lossless class on a DCQCN priority has no ECN marking.

    DCQCN only slows senders when switches mark; a lossless class without ECN relies on PFC alone, which
    spreads congestion (head-of-line blocking, pause storms). The RoCE class itself is checked by NIC005.

    ```yaml
    # bad
    - {name: storage, dscp: [24], priority: 4, lossless: true, weight: 20}
    # fixed
    - {name: storage, dscp: [24], priority: 4, lossless: true, weight: 20, ecn: {kmin: 150KB, kmax: 1500KB}}
    ```
    """

    id = "ECN005"
    severity = Severity.WARNING
    title = "Lossless class without ECN"
    hint = "add an ecn profile (kmin/kmax) to the class"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        dcqcn = ctx.intent.nic.dcqcn
        if not dcqcn.enabled:
            return  # no NIC reacts to marks: ECN is optional then (NIC006)
        acting = set(dcqcn.priorities) if dcqcn.priorities is not None else set(ctx.intent.qos.pfc_priorities)
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.lossless and tc.kind != "roce" and tc.ecn is None and tc.priority in acting:
                msg = f"lossless {klass(tc)} has no ECN: DCQCN on priority {tc.priority} never slows its senders"
                yield self.finding(ctx, class_path(i), msg)


class EcnAveraging(Rule):
    """A RoCE class averages its queue for ECN (weight > 0).

    RoCE wants marking on the instantaneous queue (weight 0): an averaged queue reacts to incast bursts after
    they have already filled the buffer (VENDOR_REFERENCE §7.2, every RoCE reference uses weight 0).

    ```yaml
    # bad
    ecn: {kmin: 150KB, kmax: 1500KB, weight: 9}
    # fixed
    ecn: {kmin: 150KB, kmax: 1500KB, weight: 0}
    ```
    """

    id = "ECN006"
    severity = Severity.WARNING
    title = "ECN on the RoCE class averages the queue"
    hint = "set ecn.weight: 0 (instantaneous queue)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.kind == "roce" and tc.ecn is not None and tc.ecn.weight > 0:
                msg = f"{klass(tc)} marks on an averaged queue (ECN weight {tc.ecn.weight}): bursts are marked late"
                yield self.finding(ctx, class_path(i, "ecn", "weight"), msg)


RULES: tuple[type[Rule], ...] = (
    KminAboveKmax,
    KmaxAboveQueueBuffer,
    KminBelowFrames,
    KmaxOutOfBdp,
    LosslessWithoutEcn,
    EcnAveraging,
)
