"""QoS settings each tier's platform can express: trust, strict queues, percentages, ECN knobs, classifiers.

The numbers the intent allows (any percent 0-100, any ECN weight 0-15) are wider than some CLIs take; these
rules hold the intent to what the platform's renderer writes (the capabilities in its platform record).
"""

from __future__ import annotations

from collections.abc import Iterator
from math import ceil

from netfab.core.findings import Finding, Severity
from netfab.intent.hardware import tier_buffer
from netfab.intent.qos import TrafficClass
from netfab.lint.context import LintContext
from netfab.lint.rule import Rule
from netfab.lint.rules._words import class_path, dscps, join, klass, percent, size


class TooManyStrictQueues(Rule):
    """More strict-priority classes than a tier's platform renders.

    NX-OS serves strict queues with `priority level N`; netfab renders level 1 only (higher levels are
    unconfirmed), so it takes one strict class.

    ```yaml
    # bad on cisco_nxos: cnp and control both strict
    - {name: cnp, kind: cnp, dscp: [48], priority: 6, scheduling: strict}
    - {name: control, dscp: [56], priority: 7, scheduling: strict}
    # fixed
    - {name: control, dscp: [56], priority: 7, weight: 5}
    ```
    """

    id = "CAP014"
    severity = Severity.ERROR
    title = "More strict-priority classes than the platform supports"
    hint = "keep the CNP class strict and schedule the others by dwrr with a weight"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        strict = [i for i, tc in enumerate(ctx.intent.qos.classes) if tc.scheduling == "strict"]
        for group in ctx.platform_groups:
            limit = group.caps.max_strict_queues
            if len(strict) <= limit:
                continue
            names = join(f"'{ctx.intent.qos.classes[i].name}'" for i in strict)
            msg = (
                f"{len(strict)} strict-priority classes ({names}), but the {group.label} takes at most {limit}"
                f"{group.caps.why('max_strict_queues')}"
            )
            yield self.finding(ctx, class_path(strict[limit], "scheduling"), msg, related=[group.path])


class DwrrWeightNotAccepted(Rule):
    """A DWRR weight is a percentage the platform's scheduler cannot take.

    EOS, NX-OS and Junos take whole percents (a fraction is refused, not rounded); SONiC and Cumulus round to a
    whole percent and need at least 1.

    ```yaml
    # bad on arista_eos
    - {name: roce, kind: roce, dscp: [26], priority: 3, lossless: true, weight: 33.3}
    # fixed
    - {name: roce, kind: roce, dscp: [26], priority: 3, lossless: true, weight: 33}
    ```
    """

    id = "CAP015"
    severity = Severity.ERROR
    title = "DWRR weight not accepted by the platform"
    hint = "use a whole percent of at least 1 (the weights should still sum to 100)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.scheduling != "dwrr" or tc.weight is None:
                continue  # a dwrr class without a weight is QOS008's finding
            for group in ctx.platform_groups:
                if group.caps.dwrr_weight.refuses(tc.weight):
                    msg = (
                        f"{klass(tc)} has DWRR weight {percent(tc.weight)}, which the {group.label} cannot take"
                        f"{group.caps.why('dwrr_weight')}"
                    )
                    yield self.finding(ctx, class_path(i, "weight"), msg, related=[group.path])


class EcnPmaxNotAccepted(Rule):
    """An ECN Pmax (marking probability at Kmax) is a percentage the platform cannot take.

    EOS and NX-OS take a whole percent 1-100, Junos a whole percent, Cumulus rounds and needs 1-100.

    ```yaml
    # bad on cisco_nxos
    ecn: {kmin: 150KB, kmax: 1500KB, pmax: 12.5}
    # fixed
    ecn: {kmin: 150KB, kmax: 1500KB, pmax: 13}
    ```
    """

    id = "CAP016"
    severity = Severity.ERROR
    title = "ECN Pmax not accepted by the platform"
    hint = "use a whole percent from 1 to 100"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.ecn is None:
                continue
            for group in ctx.platform_groups:
                if group.caps.ecn_pmax.refuses(tc.ecn.pmax):
                    msg = (
                        f"{klass(tc)} has ECN Pmax {percent(tc.ecn.pmax)}, which the {group.label} cannot take"
                        f"{group.caps.why('ecn_pmax')}"
                    )
                    yield self.finding(ctx, class_path(i, "ecn", "pmax"), msg, related=[group.path])


class EcnFillLevelOutOfRange(Rule):
    """ECN thresholds do not make valid fill levels on a platform that takes them in percent of a queue buffer.

    Junos drop profiles take Kmin/Kmax as fill levels of the egress queue's buffer; netfab converts bytes with
    the tier's switch model's shared buffer times the platform's queue share (the planning figure when no
    model is named), rounding up. Kmax at or beyond that buffer ("Do not configure the last fill level as 100
    percent", Juniper drop-profile docs), or Kmin and Kmax in the same percent, cannot be written.

    ```yaml
    # bad on juniper_junos with no model named (a 32 MB queue: 64 MB planning buffer x 50 %): 40 MB is 125 %
    ecn: {kmin: 150KB, kmax: 40MB}
    # fixed
    ecn: {kmin: 150KB, kmax: 1500KB}
    ```
    """

    id = "CAP018"
    severity = Severity.ERROR
    title = "ECN thresholds outside the platform's fill levels"
    hint = "keep Kmax below the queue buffer (under 100 %) and Kmin at least one percent of it below Kmax"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for i, tc in enumerate(ctx.intent.qos.classes):
            ecn = tc.ecn
            if ecn is None or ecn.kmin >= ecn.kmax:
                continue  # Kmin not below Kmax: ECN001's finding
            for tier in ctx.tiers:
                buf = tier.caps.buffer.queue_bytes
                if not tier.caps.ecn_fill_levels or buf is None:
                    continue  # no buffer figure: CAP025's finding
                kmin_pct, kmax_pct = ceil(ecn.kmin * 100 / buf), ceil(ecn.kmax * 100 / buf)
                if kmax_pct < 100 and kmin_pct < kmax_pct:
                    continue
                msg = (
                    f"{klass(tc)} ECN Kmin/Kmax {size(ecn.kmin)}/{size(ecn.kmax)} are fill levels "
                    f"{kmin_pct}/{kmax_pct} % of the {size(buf)} queue buffer of the {tier.label} "
                    f"({tier.caps.buffer.asic}), which needs Kmin < Kmax < 100 %{tier.caps.why('ecn_fill_level')}"
                )
                path = class_path(i, "ecn", "kmax" if kmax_pct >= 100 else "kmin")
                yield self.finding(ctx, path, msg, related=[tier.path])


class EcnFillLevelsNeedTheBuffer(Rule):
    """ECN fill levels cannot be computed: the tier's switch model does not publish its packet buffer.

    Junos takes ECN thresholds as percentages of the queue's buffer, so the intent's bytes can only be converted
    with the switch's buffer size. netfab never assumes one (FIDELITY_REVIEW JUN-2): a catalogue model whose
    buffer is not public needs the figure declared. With no model named, the platform's planning figure is used
    and noted (info), as headroom and analyze do.

    ```yaml
    # bad: the PTX10008's (Express 5) buffer is not public
    topology: {spine: {platform: juniper_junos, model: juniper-ptx10008}}
    # fixed: the datasheet's figure, declared
    topology: {spine: {platform: juniper_junos, model: juniper-ptx10008, hardware: {buffer: 8GB}}}
    ```
    """

    id = "CAP025"
    severity = Severity.ERROR
    title = "ECN fill levels need the switch's packet buffer"
    hint = "declare the shared packet buffer from the vendor's datasheet under topology.<tier>.hardware.buffer"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        ecn_classes = [i for i, tc in enumerate(ctx.intent.qos.classes) if tc.ecn is not None]
        if not ecn_classes:
            return
        where = class_path(ecn_classes[0], "ecn")
        for tier in ctx.tiers:
            if not tier.caps.ecn_fill_levels:
                continue
            _, basis = tier_buffer(tier.spec)
            if basis == "not public":
                msg = (
                    f"the {tier.label} takes ECN thresholds as fill levels of the queue buffer, but the packet "
                    f"buffer of its model ({tier.caps.buffer.asic}) is not public, so Kmin/Kmax cannot be "
                    f"converted: declare topology.{tier.role}.hardware.buffer"
                )
                yield self.finding(ctx, (*tier.path, "model"), msg, related=[where])
            elif basis == "planning figure, no model named":
                queue = tier.caps.buffer.queue_bytes
                msg = (
                    f"the {tier.label} names no switch model: its ECN fill levels are computed from the "
                    f"platform's planning figure ({tier.caps.buffer.asic}, a {size(queue or 0)} queue buffer), "
                    "not your switch's buffer"
                )
                hint = f"name topology.{tier.role}.model (or declare hardware.buffer) for fill levels of your box"
                yield self.finding(ctx, where, msg, severity=Severity.INFO, hint=hint)


def _dscp_queues(classes: list[TrafficClass]) -> dict[int, int]:
    """DSCP -> queue as the design maps it: unlisted DSCPs go to the default class's priority, else 0."""
    default = next((tc.priority for tc in classes if tc.kind == "default"), 0)
    queues = dict.fromkeys(range(64), default)
    for tc in classes:
        for d in tc.dscp:
            queues[d] = tc.priority
    return queues


class DscpWithoutClass(Rule):
    """Some DSCPs land on a priority without a class, or on one shared by two classes, where each DSCP must map
    to exactly one class.

    DSCPs no class lists go to the default class (priority 0 without one). Junos classifies into forwarding
    classes and needs every code point in exactly one.

    ```yaml
    # bad on juniper_junos: no default class, and no class on priority 0
    qos:
      classes:
        - {name: roce, kind: roce, dscp: [26], priority: 3, lossless: true, weight: 100}
        - {name: cnp, kind: cnp, dscp: [48], priority: 6, scheduling: strict}
    # fixed: add
        - {name: default, kind: default, priority: 0, weight: 50}
    ```
    """

    id = "CAP019"
    severity = Severity.ERROR
    title = "DSCP without exactly one class"
    hint = "add a class of kind default (it takes every unlisted DSCP), and give each class its own priority"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        groups = [g for g in ctx.platform_groups if g.caps.unclassified_dscp_needs_class]
        if not groups:
            return
        classes = ctx.intent.qos.classes
        queues = _dscp_queues(classes)
        with_class = {tc.priority for tc in classes}
        orphans = sorted(d for d, q in queues.items() if q not in with_class)
        used = set(queues.values())
        # A shared priority matters only when DSCPs land on it: the classifier would list them under both classes.
        shared = sorted({tc.priority for tc in classes
                         if tc.priority in used and sum(c.priority == tc.priority for c in classes) > 1})  # fmt: skip
        for group in groups:
            why = group.caps.why("unclassified_dscp_needs_class")
            if orphans:
                msg = f"{dscps(orphans)} map to priority {queues[orphans[0]]}, which has no class ({group.label}{why})"
                yield self.finding(ctx, ("qos", "classes"), msg, related=[group.path])
            for prio in shared:
                names = join(f"'{tc.name}'" for tc in classes if tc.priority == prio)
                msg = f"classes {names} share priority {prio}, so their DSCPs fall in both ({group.label}{why})"
                hint = "give each class its own priority"
                yield self.finding(ctx, ("qos", "classes"), msg, hint=hint, related=[group.path])


RULES: tuple[type[Rule], ...] = (
    TooManyStrictQueues,
    DwrrWeightNotAccepted,
    EcnPmaxNotAccepted,
    EcnFillLevelOutOfRange,
    EcnFillLevelsNeedTheBuffer,
    DscpWithoutClass,
)
