"""Traffic classes, DSCP map, PFC priorities and the scheduler (ETS) as the switches will apply them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from netfab.core.findings import Finding, Severity
from netfab.lint.context import LintContext
from netfab.lint.rule import Rule
from netfab.lint.rules._words import class_path, join, klass, priorities


class DscpInTwoClasses(Rule):
    """A DSCP value is listed in two traffic classes.

    A switch classifies a packet into exactly one class; which of the two wins depends on the platform's map
    order, so RoCE traffic may silently land in a lossy queue.

    ```yaml
    # bad: DSCP 26 in both classes
    qos:
      classes:
        - {name: roce, kind: roce, dscp: [26], priority: 3, lossless: true, weight: 50}
        - {name: bulk, dscp: [24, 26], priority: 1, weight: 50}
    # fixed
    qos:
      classes:
        - {name: roce, kind: roce, dscp: [26], priority: 3, lossless: true, weight: 50}
        - {name: bulk, dscp: [24], priority: 1, weight: 50}
    ```
    """

    id = "QOS001"
    severity = Severity.ERROR
    title = "DSCP value mapped to two classes"
    hint = "keep each DSCP in exactly one class"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        first: dict[int, int] = {}
        for i, tc in enumerate(ctx.intent.qos.classes):
            for j, dscp in enumerate(tc.dscp):
                if dscp not in first:
                    first[dscp] = i
                    continue
                owner = ctx.intent.qos.classes[first[dscp]]
                if first[dscp] == i:
                    msg = f"DSCP {dscp} is listed twice in class '{tc.name}'"
                else:
                    msg = (
                        f"DSCP {dscp} is mapped to class '{owner.name}' (priority {owner.priority}) and to class "
                        f"'{tc.name}' (priority {tc.priority}): a packet lands in one queue only"
                    )
                yield self.finding(ctx, class_path(i, "dscp", j), msg, related=[class_path(first[dscp], "dscp")])


class LosslessWithoutPfc(Rule):
    """A lossless class sits on a priority that `qos.pfc.priorities` leaves without PFC.

    Without PFC the class is lossless in name only: its queue drops under congestion like any other.

    ```yaml
    # bad: roce is lossless on priority 3, PFC only on 4
    qos:
      pfc: {priorities: [4]}
    # fixed (or omit pfc.priorities: it then follows the lossless classes)
    qos:
      pfc: {priorities: [3]}
    ```
    """

    id = "QOS002"
    severity = Severity.ERROR
    title = "Lossless class without PFC on its priority"
    hint = "add the class's priority to qos.pfc.priorities, or omit pfc.priorities to follow the lossless classes"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        explicit = ctx.intent.qos.pfc.priorities
        if explicit is None:
            return
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.lossless and tc.priority not in explicit:
                msg = (
                    f"{klass(tc)} is lossless on priority {tc.priority}, but PFC is only on "
                    f"{priorities(explicit) if explicit else 'no priority'}: the queue will drop under congestion"
                )
                yield self.finding(ctx, class_path(i, "lossless"), msg, related=[("qos", "pfc", "priorities")])


class PfcWithoutLossless(Rule):
    """A priority in `qos.pfc.priorities` carries no lossless class.

    PFC on a priority with lossy traffic pauses that traffic (and everything behind it) for nothing, and
    headroom is reserved for a class that never needs it.

    ```yaml
    # bad: PFC on 3 and 4, but only roce (priority 3) is lossless
    qos:
      pfc: {priorities: [3, 4]}
    # fixed
    qos:
      pfc: {priorities: [3]}
    ```
    """

    id = "QOS003"
    severity = Severity.ERROR
    title = "PFC priority without a lossless class"
    hint = "remove the priority from qos.pfc.priorities, or mark the class on it lossless: true"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        explicit = ctx.intent.qos.pfc.priorities
        if explicit is None:
            return
        classes = ctx.intent.qos.classes
        for j, prio in enumerate(explicit):
            on_prio = [tc for tc in classes if tc.priority == prio]
            if any(tc.lossless for tc in on_prio):
                continue
            if on_prio:
                names = join(f"'{tc.name}'" for tc in on_prio)
                msg = f"priority {prio} has PFC but carries only lossy {'class' if len(on_prio) == 1 else 'classes'} "
                msg += f"{names}: that traffic gets paused instead of dropped"
            else:
                msg = f"priority {prio} has PFC but no class uses it: headroom is reserved for nothing"
            yield self.finding(ctx, ("qos", "pfc", "priorities", j), msg)


class CnpOnPfcPriority(Rule):
    """The CNP class is on a priority with PFC.

    Congestion notification packets must reach the sender while the fabric is congested; on a paused priority
    they wait behind the very congestion they report, and DCQCN reacts too late.

    ```yaml
    # bad: CNPs share priority 3 with RoCE data
    qos:
      classes:
        - {name: roce, kind: roce, dscp: [26], priority: 3, lossless: true, weight: 100}
        - {name: cnp, kind: cnp, dscp: [48], priority: 3, scheduling: strict}
    # fixed: a lossy strict-priority queue of its own
        - {name: cnp, kind: cnp, dscp: [48], priority: 6, scheduling: strict}
    ```
    """

    id = "QOS004"
    severity = Severity.ERROR
    title = "CNP class on a PFC priority"
    hint = "move the CNP class to a lossy priority (6 or 7 by convention) with scheduling: strict"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        pfc = set(ctx.intent.qos.pfc_priorities)
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.kind == "cnp" and tc.priority in pfc:
                msg = (
                    f"{klass(tc)} is on priority {tc.priority}, which has PFC: CNPs would be paused behind the "
                    "congestion they report"
                )
                yield self.finding(ctx, class_path(i, "priority"), msg)


class CnpNotStrict(Rule):
    """The CNP class is scheduled by DWRR instead of strict priority.

    Every vendor's RoCE reference (Cumulus, Cisco, Juniper, Arista; VENDOR_REFERENCE §7.2) puts CNPs in a
    strict-priority queue: under load a DWRR queue delays them by a scheduling round.

    ```yaml
    # bad
    - {name: cnp, kind: cnp, dscp: [48], priority: 6, weight: 10}
    # fixed
    - {name: cnp, kind: cnp, dscp: [48], priority: 6, scheduling: strict}
    ```
    """

    id = "QOS005"
    severity = Severity.WARNING
    title = "CNP class is not strict priority"
    hint = "set scheduling: strict on the CNP class (and drop its weight)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.kind == "cnp" and tc.scheduling != "strict":
                msg = f"{klass(tc)} is scheduled by {tc.scheduling}: CNPs queue behind data under load"
                yield self.finding(ctx, class_path(i), msg)


class PriorityShared(Rule):
    """Two classes share a priority but disagree on lossless or scheduling.

    A priority is one egress queue: it is either paused by PFC or not, strict or DWRR. The renderer would have
    to pick one, silently changing one class's treatment.

    ```yaml
    # bad: bulk (lossy) on the lossless priority 3
    - {name: roce, kind: roce, dscp: [26], priority: 3, lossless: true, weight: 50}
    - {name: bulk, dscp: [10], priority: 3, weight: 50}
    # fixed
    - {name: bulk, dscp: [10], priority: 1, weight: 50}
    ```
    """

    id = "QOS006"
    severity = Severity.ERROR
    title = "Classes on one priority treated differently"
    hint = "give each class with its own treatment its own priority"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        by_prio: dict[int, list[int]] = defaultdict(list)
        for i, tc in enumerate(ctx.intent.qos.classes):
            by_prio[tc.priority].append(i)
        classes = ctx.intent.qos.classes
        for prio, indexes in by_prio.items():
            first = classes[indexes[0]]
            for i in indexes[1:]:
                tc = classes[i]
                differences = []
                if tc.lossless != first.lossless:
                    differences.append("only '" + (first.name if first.lossless else tc.name) + "' is lossless")
                if tc.scheduling != first.scheduling:
                    differences.append(f"'{first.name}' is {first.scheduling} while '{tc.name}' is {tc.scheduling}")
                if differences:
                    msg = (
                        f"classes '{first.name}' and '{tc.name}' share priority {prio} (one queue), but "
                        f"{'; and '.join(differences)}"
                    )
                    yield self.finding(ctx, class_path(i, "priority"), msg, related=[class_path(indexes[0])])


class DwrrWeightsSum(Rule):
    """The DWRR weights do not add up to 100 %.

    Platforms normalise (or reject) the weights differently; the shares you get are then not the shares you
    wrote.

    ```yaml
    # bad: 50 + 30
    - {name: roce, kind: roce, dscp: [26], priority: 3, lossless: true, weight: 50}
    - {name: default, kind: default, priority: 0, weight: 30}
    # fixed
    - {name: default, kind: default, priority: 0, weight: 50}
    ```
    """

    id = "QOS007"
    severity = Severity.WARNING
    title = "DWRR weights do not sum to 100"
    hint = "adjust the weight of the dwrr classes so they sum to 100"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        dwrr = [tc for tc in ctx.intent.qos.classes if tc.scheduling == "dwrr"]
        if not dwrr or any(tc.weight is None for tc in dwrr):
            return  # QOS008 reports the missing weight; a sum over the rest would mislead
        total = sum(tc.weight or 0 for tc in dwrr)
        if abs(total - 100) > 0.01:
            parts = " + ".join(f"{tc.weight:g} ({tc.name})" for tc in dwrr)
            yield self.finding(ctx, ("qos", "classes"), f"DWRR weights sum to {total:g} %, not 100: {parts}")


class DwrrWithoutWeight(Rule):
    """A DWRR class has no weight.

    Its bandwidth share would be whatever the platform's default scheduler gives (Cumulus: 12-13 % per queue),
    not a share the intent chose.

    ```yaml
    # bad
    - {name: default, kind: default, priority: 0}
    # fixed
    - {name: default, kind: default, priority: 0, weight: 50}
    ```
    """

    id = "QOS008"
    severity = Severity.ERROR
    title = "DWRR class without a weight"
    hint = "give the class a weight (percent), or make it scheduling: strict"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.scheduling == "dwrr" and tc.weight is None:
                yield self.finding(ctx, class_path(i), f"{klass(tc)} is scheduled by dwrr but has no weight")


class StrictWithWeight(Rule):
    """A strict-priority class has a weight.

    Strict queues are served before any DWRR queue and take what they need; the weight is ignored, which
    usually means the intent meant something else.

    ```yaml
    # bad
    - {name: cnp, kind: cnp, dscp: [48], priority: 6, scheduling: strict, weight: 10}
    # fixed
    - {name: cnp, kind: cnp, dscp: [48], priority: 6, scheduling: strict}
    ```
    """

    id = "QOS009"
    severity = Severity.WARNING
    title = "Strict-priority class with a weight"
    hint = "remove the weight, or make the class scheduling: dwrr"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.scheduling == "strict" and tc.weight is not None:
                msg = f"{klass(tc)} is strict priority; its weight {tc.weight:g} is ignored"
                yield self.finding(ctx, class_path(i, "weight"), msg)


class DuplicateClass(Rule):
    """Two classes have the same name, or two classes claim the kind roce, cnp or default.

    The NIC settings, ECN checks and renderers use *the* RoCE, CNP and default class; a second one of a kind is
    silently ignored.

    ```yaml
    # bad: two cnp classes
    - {name: cnp, kind: cnp, dscp: [48], priority: 6, scheduling: strict}
    - {name: cnp7, kind: cnp, dscp: [56], priority: 7, scheduling: strict}
    # fixed
    - {name: cnp7, kind: other, dscp: [56], priority: 7, scheduling: strict}
    ```
    """

    id = "QOS010"
    severity = Severity.ERROR
    title = "Duplicate class name or kind"
    hint = "rename the class, or set kind: other on all but one class of that kind"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        names: dict[str, int] = {}
        kinds: dict[str, int] = {}
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.name in names:
                yield self.finding(ctx, class_path(i, "name"), f"class name '{tc.name}' is used twice",
                                   related=[class_path(names[tc.name])])  # fmt: skip
            names.setdefault(tc.name, i)
            if tc.kind == "other":
                continue
            if tc.kind in kinds:
                first = ctx.intent.qos.classes[kinds[tc.kind]]
                msg = f"class '{tc.name}' is a second {tc.kind} class after '{first.name}'; only '{first.name}' is used"
                yield self.finding(ctx, class_path(i, "kind"), msg, related=[class_path(kinds[tc.kind])])
            kinds.setdefault(tc.kind, i)


RULES: tuple[type[Rule], ...] = (
    DscpInTwoClasses,
    LosslessWithoutPfc,
    PfcWithoutLossless,
    CnpOnPfcPriority,
    CnpNotStrict,
    PriorityShared,
    DwrrWeightsSum,
    DwrrWithoutWeight,
    StrictWithWeight,
    DuplicateClass,
)
