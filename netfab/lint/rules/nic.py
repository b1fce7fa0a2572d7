"""GPU NIC settings against the switch classes: trust, PFC vector, CNP marking, RoCE DSCP, DCQCN vs ECN."""

from __future__ import annotations

from collections.abc import Iterator

from netfab.core.findings import Finding, Severity
from netfab.lint.context import LintContext
from netfab.lint.rule import Rule
from netfab.lint.rules._words import class_path, dscps, klass, priorities

NP = ("nic", "dcqcn", "np")


def _index_of(ctx: LintContext, kind: str) -> int | None:
    return next((i for i, tc in enumerate(ctx.intent.qos.classes) if tc.kind == kind), None)


class TrustMismatch(Rule):
    """The NICs trust a different field (DSCP or PCP) than the switches.

    The NIC maps traffic to priorities by the field it trusts; if the switches classify by the other one, PFC
    frames from the switch pause a priority the NIC never put RoCE on.

    ```yaml
    # bad
    qos: {trust: dscp}
    nic: {trust: pcp}
    # fixed
    nic: {trust: dscp}
    ```
    """

    id = "NIC001"
    severity = Severity.ERROR
    title = "NIC trust mode differs from the switches"
    hint = "set nic.trust to the same value as qos.trust (dscp for routed RoCEv2)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        nic, qos = ctx.intent.nic.trust, ctx.intent.qos.trust
        if nic != qos:
            msg = f"NICs trust {nic} but the switches trust {qos}: NIC and switch put RoCE on different priorities"
            path = ctx.first_written(("nic", "trust"), ("qos", "trust"))
            yield self.finding(ctx, path, msg, related=[("nic", "trust"), ("qos", "trust")])


class PfcVectorMismatch(Rule):
    """The NIC PFC vector differs from the fabric's PFC priorities.

    A NIC that does not honour pause on the lossless priority overruns the switch headroom; one that pauses an
    extra priority stalls lossy traffic on a switch's say-so.

    ```yaml
    # bad: fabric PFC on 3, NIC on 4
    nic: {pfc_priorities: [4]}
    # fixed (or omit: it follows the fabric)
    nic: {pfc_priorities: [3]}
    ```
    """

    id = "NIC002"
    severity = Severity.ERROR
    title = "NIC PFC priorities differ from the switches"
    hint = "omit nic.pfc_priorities (it then follows the fabric) or make it equal to the fabric's PFC priorities"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        nic = ctx.intent.nic.pfc_priorities
        fabric = ctx.intent.qos.pfc_priorities
        if nic is not None and sorted(set(nic)) != fabric:
            nic_s = priorities(nic) if nic else "no priority"
            fab_s = priorities(fabric) if fabric else "no priority"
            msg = f"NICs run PFC on {nic_s}, the switches on {fab_s}"
            yield self.finding(ctx, ("nic", "pfc_priorities"), msg, related=[("qos", "pfc")])


class CnpMarkingMismatch(Rule):
    """The DSCP or priority the NICs put on CNPs is not the switches' CNP class.

    CNPs the switches do not classify as CNP ride in the default (or worse, a lossless) queue and reach the
    sender late, so DCQCN reacts to congestion long after it built up.

    ```yaml
    # bad: the CNP class is DSCP 48 / priority 6
    nic: {dcqcn: {np: {cnp_dscp: 46, cnp_priority: 7}}}
    # fixed
    nic: {dcqcn: {np: {cnp_dscp: 48, cnp_priority: 6}}}
    ```
    """

    id = "NIC003"
    severity = Severity.ERROR
    title = "NIC CNP DSCP/priority differ from the CNP class"
    hint = "make nic.dcqcn.np.cnp_dscp/cnp_priority match the class of kind cnp"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        dcqcn = ctx.intent.nic.dcqcn
        if not dcqcn.enabled:
            return  # no notification point: the NICs send no CNPs
        np = dcqcn.np
        index = _index_of(ctx, "cnp")
        if index is None:
            lands = next((tc for tc in ctx.intent.qos.classes if np.cnp_dscp in tc.dscp), None)
            where = f"{klass(lands)}" if lands else "the default class"
            msg = f"no class of kind cnp: the NICs' CNPs (DSCP {np.cnp_dscp}) land in {where}"
            yield self.finding(ctx, ("qos", "classes"), msg, hint="add a strict-priority class of kind cnp")
            return
        cnp = ctx.intent.qos.classes[index]
        if np.cnp_dscp not in cnp.dscp:
            msg = f"NICs mark CNPs with DSCP {np.cnp_dscp}, but class '{cnp.name}' carries {dscps(cnp.dscp)}"
            path = ctx.first_written((*NP, "cnp_dscp"), class_path(index, "dscp"))
            yield self.finding(ctx, path, msg, related=[(*NP, "cnp_dscp"), class_path(index, "dscp")])
        if np.cnp_priority != cnp.priority:
            msg = f"NICs send CNPs on priority {np.cnp_priority}, but {klass(cnp)} is on priority {cnp.priority}"
            path = ctx.first_written((*NP, "cnp_priority"), class_path(index, "priority"))
            yield self.finding(ctx, path, msg, related=[(*NP, "cnp_priority"), class_path(index, "priority")])


class RoceDscpMismatch(Rule):
    """The DSCP the NICs stamp on RoCE traffic is not one of the RoCE class's DSCPs.

    The switches would classify RoCE into another (typically lossy) class: no PFC, no ECN, drops under load.

    ```yaml
    # bad: roce class is DSCP 26
    nic: {roce_dscp: 24}
    # fixed (or omit: it defaults to the RoCE class's first DSCP)
    nic: {roce_dscp: 26}
    ```
    """

    id = "NIC004"
    severity = Severity.ERROR
    title = "NIC RoCE DSCP not in the RoCE class"
    hint = "omit nic.roce_dscp or set it to a DSCP of the class of kind roce"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        index = _index_of(ctx, "roce")
        if index is None:
            return
        roce = ctx.intent.qos.classes[index]
        dscp = ctx.intent.nic.roce_dscp
        if not roce.dscp and ctx.intent.qos.trust == "dscp":
            msg = f"{klass(roce)} has no DSCP: the NICs have nothing to stamp on RoCE traffic"
            yield self.finding(ctx, class_path(index, "dscp"), msg, hint="list the RoCE DSCP (26 is usual)")
        elif dscp is not None and dscp not in roce.dscp:
            lands = next((tc for tc in ctx.intent.qos.classes if dscp in tc.dscp), None)
            where = klass(lands) if lands else "the default class"
            msg = f"NICs stamp RoCE with DSCP {dscp}, which is not in {klass(roce)}: RoCE lands in {where}"
            yield self.finding(ctx, ("nic", "roce_dscp"), msg, related=[class_path(index, "dscp")])


class DcqcnWithoutEcn(Rule):
    """DCQCN is enabled but the RoCE class has no ECN marking.

    DCQCN slows a sender only when a switch marks its packets; without ECN on the RoCE queue the notification
    points never send a CNP and the fabric runs on PFC alone while the intent says otherwise.

    ```yaml
    # bad
    - {name: roce, kind: roce, dscp: [26], priority: 3, lossless: true, weight: 50}
    # fixed
    - {name: roce, kind: roce, dscp: [26], priority: 3, lossless: true, weight: 50,
       ecn: {kmin: 150KB, kmax: 1500KB}}
    # or, deliberately PFC-only: nic: {dcqcn: {enabled: false}}
    ```
    """

    id = "NIC005"
    severity = Severity.ERROR
    title = "DCQCN enabled without ECN on the RoCE class"
    hint = "add an ecn profile to the RoCE class, or set nic.dcqcn.enabled: false to run PFC-only"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        index = _index_of(ctx, "roce")
        if index is None or not ctx.intent.nic.dcqcn.enabled:
            return
        roce = ctx.intent.qos.classes[index]
        if roce.ecn is None:
            msg = f"DCQCN is enabled but {klass(roce)} has no ECN: no packet is ever marked, so DCQCN never acts"
            yield self.finding(ctx, class_path(index), msg, related=[("nic", "dcqcn")])


class EcnWithoutDcqcn(Rule):
    """ECN is configured on the RoCE class while DCQCN is disabled on the NICs.

    Harmless (marks are ignored by the NICs, or used by a collective library's own congestion control), but
    worth knowing: the thresholds have no effect on RoCE senders.

    ```yaml
    # noted
    nic: {dcqcn: {enabled: false}}
    qos: {classes: [{name: roce, kind: roce, dscp: [26], priority: 3, lossless: true, weight: 100,
                     ecn: {kmin: 150KB, kmax: 1500KB}}]}
    # quiet: drop the ecn profile, or enable DCQCN
    ```
    """

    id = "NIC006"
    severity = Severity.INFO
    title = "ECN configured while DCQCN is disabled"
    hint = "remove the ecn profile, or enable nic.dcqcn if marks should slow senders"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        index = _index_of(ctx, "roce")
        if index is None or ctx.intent.nic.dcqcn.enabled:
            return
        roce = ctx.intent.qos.classes[index]
        if roce.ecn is not None:
            msg = f"{klass(roce)} marks ECN but DCQCN is disabled: no RoCE sender reacts to the marks"
            yield self.finding(ctx, class_path(index, "ecn"), msg, related=[("nic", "dcqcn", "enabled")])


RULES: tuple[type[Rule], ...] = (
    TrustMismatch,
    PfcVectorMismatch,
    CnpMarkingMismatch,
    RoceDscpMismatch,
    DcqcnWithoutEcn,
    EcnWithoutDcqcn,
)
