"""A RoCE reviewer's checklist, part 1: everything tied to a priority agrees across switch classes and NICs.

A priority is one egress queue on every platform netfab renders (priority == traffic class == queue), one bit
of the NIC's PFC vector and one bit of its DCQCN enable mask. These rules check that the classes, PFC, ECN and
DCQCN all name the same priorities for the same traffic: the mistakes here pass every per-field check and
produce configs that load, then behave differently from the intent under load.
"""

from __future__ import annotations

from collections.abc import Iterator

from netfab.core.findings import Finding, Severity
from netfab.intent.qos import TrafficClass
from netfab.lint.context import LintContext
from netfab.lint.rule import Rule
from netfab.lint.rules._words import class_path, klass, priorities

DCQCN = ("nic", "dcqcn")


def _roce(ctx: LintContext) -> tuple[int, TrafficClass] | None:
    return next(((i, tc) for i, tc in enumerate(ctx.intent.qos.classes) if tc.kind == "roce"), None)


def _dcqcn_priorities(ctx: LintContext) -> list[int]:
    dcqcn = ctx.intent.nic.dcqcn
    return sorted(set(dcqcn.priorities)) if dcqcn.priorities is not None else ctx.intent.qos.pfc_priorities


class TwoClassesOnePriority(Rule):
    """Two classes share a priority (one egress queue) with the same lossless and scheduling treatment.

    Every platform has one queue per priority, so two classes on one priority cannot keep two ECN profiles,
    two DWRR weights or two names: the NVUE output gets the key `'3':` twice (a YAML document with duplicate
    keys, which NVUE either rejects or reads as the last one), and EOS/SONiC/Junos get two stanzas for one
    queue, of which the later silently wins. Classes that differ in lossless or scheduling are QOS006; a class
    on the CNP's priority is REV030.

    ```yaml
    # bad: roce and storage both on priority 3, with different ECN and weights
    qos:
      classes:
        - {name: roce, kind: roce, dscp: [26], priority: 3, lossless: true, weight: 40,
           ecn: {kmin: 150KB, kmax: 1500KB}}
        - {name: storage, dscp: [24], priority: 3, lossless: true, weight: 20,
           ecn: {kmin: 300KB, kmax: 3000KB}}
    # fixed: one class with both DSCPs, or storage on its own priority
        - {name: storage, dscp: [24], priority: 4, lossless: true, weight: 20,
           ecn: {kmin: 300KB, kmax: 3000KB}}
    ```
    """

    id = "REV001"
    severity = Severity.ERROR
    title = "Two classes on one priority"
    hint = "give the class its own priority, or merge the two classes into one class listing both DSCP sets"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        first: dict[int, int] = {}
        classes = ctx.intent.qos.classes
        for i, tc in enumerate(classes):
            if tc.priority not in first:
                first[tc.priority] = i
                continue
            owner = classes[first[tc.priority]]
            if owner.lossless != tc.lossless or owner.scheduling != tc.scheduling:
                continue  # QOS006 reports the conflicting treatment
            if "cnp" in (owner.kind, tc.kind):
                continue  # REV030 reports a class on the CNP queue
            differences = []
            if owner.weight != tc.weight:
                differences.append(f"weights {owner.weight:g} and {tc.weight:g}" if owner.weight is not None
                                   and tc.weight is not None else "weights")  # fmt: skip
            if owner.ecn != tc.ecn:
                differences.append("ECN profiles")
            why = f" with different {' and '.join(differences)}" if differences else ""
            msg = (
                f"classes '{owner.name}' and '{tc.name}' share priority {tc.priority}{why}: one priority is one "
                "egress queue, so the switch config would name that queue twice"
            )
            yield self.finding(ctx, class_path(i, "priority"), msg, related=[class_path(first[tc.priority])])


class DcqcnMissesRoce(Rule):
    """DCQCN is enabled on the NICs, but not on the RoCE class's priority.

    The ConnectX enables the reaction and notification points per priority (`roce_rp/enable/<p>`,
    `roce_np/enable/<p>`); RoCE traffic on a priority without them is never slowed by CNPs, whatever the
    switches mark. The common slip is `nic.dcqcn.priorities: [4]` while RoCE runs lossless on 3.

    ```yaml
    # bad: RoCE is on priority 3
    nic: {dcqcn: {enabled: true, priorities: [4]}}
    # fixed (or omit priorities: DCQCN then follows the lossless priorities)
    nic: {dcqcn: {enabled: true, priorities: [3]}}
    ```
    """

    id = "REV002"
    severity = Severity.ERROR
    title = "DCQCN not enabled on the RoCE priority"
    hint = "omit nic.dcqcn.priorities (it follows the lossless priorities) or include the RoCE class's priority"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        dcqcn = ctx.intent.nic.dcqcn
        roce = _roce(ctx)
        if not dcqcn.enabled or roce is None:
            return
        index, tc = roce
        acting = _dcqcn_priorities(ctx)
        if tc.priority not in acting:
            where = priorities(acting) if acting else "no priority"
            msg = (
                f"DCQCN acts on {where}, but {klass(tc)} is on priority {tc.priority}: RoCE senders are never "
                "slowed by CNPs"
            )
            path = (*DCQCN, "priorities") if dcqcn.priorities is not None else class_path(index, "priority")
            yield self.finding(ctx, path, msg, related=[class_path(index, "priority")])


class DcqcnOnForeignPriority(Rule):
    """DCQCN acts on a priority that carries neither RoCE nor a lossless class.

    A reaction point on the CNP's or the default class's priority rate-limits whatever the NICs send there
    when a CNP arrives for it, and a notification point there answers ECN marks on TCP with CNPs: neither is
    RoCE congestion control.

    ```yaml
    # bad: priority 6 is the CNP class
    nic: {dcqcn: {priorities: [3, 6]}}
    # fixed
    nic: {dcqcn: {priorities: [3]}}
    ```
    """

    id = "REV003"
    severity = Severity.ERROR
    title = "DCQCN on a priority without RoCE"
    hint = "list only priorities that carry RoCE (the roce class, or lossless RDMA classes) in nic.dcqcn.priorities"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        dcqcn = ctx.intent.nic.dcqcn
        if not dcqcn.enabled or dcqcn.priorities is None:
            return
        classes = ctx.intent.qos.classes
        for j, prio in enumerate(dcqcn.priorities):
            on = [tc for tc in classes if tc.priority == prio]
            if any(tc.kind == "roce" or tc.lossless for tc in on):
                continue
            what = ", ".join(f"'{tc.name}'" for tc in on) if on else "no class"
            msg = f"DCQCN acts on priority {prio}, which carries {what}: no RoCE traffic is sent there"
            yield self.finding(ctx, (*DCQCN, "priorities", j), msg)


class EcnOnCnpClass(Rule):
    """The CNP class has an ECN profile.

    CNPs are the congestion signal, not congestion-controlled traffic: marking them has no reader, and a
    profile there is nearly always an ECN block pasted onto the wrong class (the RoCE class then has none).

    ```yaml
    # bad
    - {name: cnp, kind: cnp, dscp: [48], priority: 6, scheduling: strict, ecn: {kmin: 150KB, kmax: 1500KB}}
    # fixed: the profile belongs on the roce class
    - {name: cnp, kind: cnp, dscp: [48], priority: 6, scheduling: strict}
    ```
    """

    id = "REV004"
    severity = Severity.WARNING
    title = "ECN profile on the CNP class"
    hint = "remove the ecn profile from the CNP class (put it on the RoCE class)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.kind == "cnp" and tc.ecn is not None:
                msg = f"{klass(tc)} marks ECN on CNPs: nothing reacts to a marked CNP"
                yield self.finding(ctx, class_path(i, "ecn"), msg)


class LosslessDefaultClass(Rule):
    """The default class (everything unclassified) is lossless.

    PFC on the default priority pauses every unclassified flow - TCP, storage, management - together with
    RoCE's congestion, and a pause storm on it stops the whole fabric, not one application. TCP recovers from
    drops by itself; it must not be paused.

    ```yaml
    # bad
    - {name: default, kind: default, priority: 0, lossless: true, weight: 50}
    # fixed
    - {name: default, kind: default, priority: 0, weight: 50}
    ```
    """

    id = "REV005"
    severity = Severity.ERROR
    title = "Default class is lossless"
    hint = "make the default class lossy (lossless: false); only RDMA classes should be lossless"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.kind == "default" and tc.lossless:
                msg = f"{klass(tc)} is lossless: PFC would pause every unclassified flow on priority {tc.priority}"
                yield self.finding(ctx, class_path(i, "lossless"), msg)


class LosslessStrict(Rule):
    """A lossless class is scheduled by strict priority.

    A strict queue is served whenever it has a packet, so a lossless class that is also strict starves every
    DWRR queue behind it while its senders are paused rather than dropped - it never yields. Vendors' RoCE
    references put the RoCE class in an ETS/DWRR queue and only the (small, lossy) CNP class in strict.

    ```yaml
    # bad
    - {name: roce, kind: roce, dscp: [26], priority: 3, lossless: true, scheduling: strict}
    # fixed
    - {name: roce, kind: roce, dscp: [26], priority: 3, lossless: true, weight: 50}
    ```
    """

    id = "REV006"
    severity = Severity.WARNING
    title = "Lossless class in strict priority"
    hint = "schedule the lossless class by dwrr with a weight; keep strict for the CNP class"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.lossless and tc.scheduling == "strict":
                msg = f"lossless {klass(tc)} is strict priority: it can starve every DWRR queue and never yields"
                yield self.finding(ctx, class_path(i, "scheduling") if ctx.written(*class_path(i, "scheduling"))
                                   else class_path(i), msg)  # fmt: skip


class TooManyPfcPriorities(Rule):
    """PFC runs on more than two priorities.

    Each lossless priority reserves headroom on every port, and most switch ASICs' default buffer profiles
    carry two lossless priority groups (SONiC's 3 and 4; Spectrum's and Tomahawk's RoCE profiles): a third
    splits the same buffer further and multiplies the ways a pause can spread. Platform maxima are CAP001;
    this is the design warning below them.

    ```yaml
    # bad
    qos: {pfc: {priorities: [2, 3, 4]}}
    # fixed: RoCE (and at most one storage class) lossless
    qos: {pfc: {priorities: [3, 4]}}
    ```
    """

    id = "REV007"
    severity = Severity.WARNING
    title = "PFC on more than two priorities"
    hint = "keep PFC on at most two priorities (RoCE compute, and storage if it is RoCE too)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        prios = ctx.intent.qos.pfc_priorities
        if len(prios) > 2:
            path = ("qos", "pfc", "priorities") if ctx.intent.qos.pfc.priorities is not None else ("qos", "classes")
            listed = ", ".join(map(str, prios))
            msg = f"PFC is on {len(prios)} priorities ({listed}): each reserves headroom on every port"
            yield self.finding(ctx, path, msg)


class ClassWithoutDscp(Rule):
    """A class other than the default has no DSCP while the switches trust DSCP.

    Nothing is ever classified into it: its queue, weight and (if lossless) PFC headroom are reserved for no
    traffic, and the traffic meant for it lands in the default class.

    ```yaml
    # bad
    - {name: storage, priority: 4, lossless: true, weight: 20}
    # fixed
    - {name: storage, dscp: [24], priority: 4, lossless: true, weight: 20}
    ```
    """

    id = "REV008"
    severity = Severity.WARNING
    title = "Class without a DSCP"
    hint = "list the DSCP values the class carries"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        if ctx.intent.qos.trust != "dscp":
            return
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.kind in ("default", "roce") or tc.dscp:
                continue  # the default class takes what is unlisted; a RoCE class without DSCP is NIC004
            msg = f"class '{tc.name}' has no DSCP: no packet is ever classified into priority {tc.priority}"
            yield self.finding(ctx, class_path(i), msg)


class RoceWithoutCongestionControl(Rule):
    """The RoCE class is lossy and DCQCN is disabled: RoCE runs with no congestion control at all.

    Lossy RoCE ("Resilient RoCE") relies on DCQCN to keep queues short; PFC-only RoCE (Meta's design) relies
    on PFC. With neither, every incast overflows a queue and RoCE's go-back-N retransmission turns each drop
    into a burst of resends.

    ```yaml
    # bad
    qos: {classes: [{name: roce, kind: roce, dscp: [26], priority: 3, weight: 50}]}
    nic: {dcqcn: {enabled: false}}
    # fixed: lossless (PFC-only), or enable DCQCN with ECN on the class
    qos: {classes: [{name: roce, kind: roce, dscp: [26], priority: 3, lossless: true, weight: 50}]}
    ```
    """

    id = "REV009"
    severity = Severity.ERROR
    title = "RoCE without PFC or DCQCN"
    hint = "make the RoCE class lossless, or enable nic.dcqcn with an ECN profile on the class"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        roce = _roce(ctx)
        if roce is None or ctx.intent.nic.dcqcn.enabled:
            return
        index, tc = roce
        if tc.priority not in ctx.intent.qos.pfc_priorities:
            msg = f"{klass(tc)} is lossy and DCQCN is disabled: nothing slows RoCE senders before queues overflow"
            path = ctx.first_written(class_path(index, "lossless"), (*DCQCN, "enabled"))
            yield self.finding(ctx, path, msg, related=[class_path(index), (*DCQCN, "enabled")])


class NoRoceClass(Rule):
    """No class is of kind roce.

    The NIC settings (the DSCP stamped on RDMA, its priority, DCQCN, the PFC vector) and the ECN and headroom
    checks all hang off the RoCE class; without one, the NICs send RDMA with whatever DSCP the defaults give
    into whatever class it lands in.

    ```yaml
    # bad
    - {name: rdma, dscp: [26], priority: 3, lossless: true, weight: 50}
    # fixed
    - {name: rdma, kind: roce, dscp: [26], priority: 3, lossless: true, weight: 50}
    ```
    """

    id = "REV010"
    severity = Severity.ERROR
    title = "No RoCE class"
    hint = "set kind: roce on the class that carries RDMA traffic"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        if _roce(ctx) is None:
            lossless = next((i for i, tc in enumerate(ctx.intent.qos.classes) if tc.lossless), None)
            if lossless is None and ctx.network_kind == "oob":
                return  # an OOB network carries no RDMA: no roce class is the design, not a mistake
            path = class_path(lossless, "name") if lossless is not None else ("qos", "classes")
            msg = "no class has kind roce: the NICs have no RoCE DSCP, priority or DCQCN target"
            yield self.finding(ctx, path, msg)


RULES: tuple[type[Rule], ...] = (
    TwoClassesOnePriority,
    DcqcnMissesRoce,
    DcqcnOnForeignPriority,
    EcnOnCnpClass,
    LosslessDefaultClass,
    LosslessStrict,
    TooManyPfcPriorities,
    ClassWithoutDscp,
    RoceWithoutCongestionControl,
    NoRoceClass,
)
