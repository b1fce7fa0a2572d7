"""A RoCE reviewer's checklist, part 3: the hygiene checks an experienced reviewer runs on every design.

CNP isolation, trust on a routed fabric, watchdog timers and action, RoCE MTU, and DCQCN reaction-point
parameters that are individually in range but together disable or invert the algorithm. The DCQCN semantics
are NVIDIA's (DOCA "DCQCN CC Parameters": rpg_min_dec_fac 100 prevents rate reductions, rpg_min_rate is the
floor of a QP's rate); the watchdog floor is SONiC's and Junos' default poll of 100 ms.
"""

from __future__ import annotations

from collections.abc import Iterator

from netfab.core.findings import Finding, Severity
from netfab.lint.context import LintContext
from netfab.lint.rule import Rule
from netfab.lint.rules._words import class_path, duration, klass

RP = ("nic", "dcqcn", "rp")
WATCHDOG = ("qos", "pfc", "watchdog")
WATCHDOG_DETECT_FLOOR_US = 100_000
"""Below one 100 ms poll (SONiC's and Junos' default; Junos detects after 2 polls = 200 ms) a watchdog trips on
ordinary incast pauses and drops the lossless class it is meant to protect."""
ROCE_MTU_FULL = 4096


class CnpSharesPriority(Rule):
    """The CNP class shares its priority with another class.

    CNPs need a queue of their own: in a shared strict queue they wait behind the other class's bursts, and a
    shared DWRR queue delays them by scheduling rounds, so DCQCN reacts late (every vendor's RoCE reference
    gives CNPs their own strict queue, VENDOR_REFERENCE §7.2). And one priority is one queue: the switch config
    would name the CNP queue twice (REV001).

    ```yaml
    # bad: network control shares priority 6 with the CNPs
    - {name: cnp, kind: cnp, dscp: [48], priority: 6, scheduling: strict}
    - {name: netctl, dscp: [56], priority: 6, scheduling: strict}
    # fixed
    - {name: netctl, dscp: [56], priority: 7, scheduling: strict}
    ```
    """

    id = "REV030"
    severity = Severity.ERROR
    title = "CNP class shares its priority"
    hint = "give the CNP class a priority of its own (6 or 7 by convention)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        classes = ctx.intent.qos.classes
        for i, cnp in enumerate(classes):
            if cnp.kind != "cnp":
                continue
            for j, tc in enumerate(classes):
                if j != i and tc.priority == cnp.priority:
                    msg = f"{klass(cnp)} shares priority {cnp.priority} with class '{tc.name}': CNPs queue behind it"
                    yield self.finding(ctx, class_path(j, "priority"), msg, related=[class_path(i, "priority")])


class TrustPcpOnRoutedFabric(Rule):
    """The switches classify by PCP (802.1p) on a routed fabric.

    netfab fabrics are routed end to end (eBGP on every link); a routed port carries no 802.1Q tag, so the PCP
    bits are gone after the first hop and every packet lands in the default class. RoCEv2 is classified by DSCP
    (VMware, NVIDIA and every switch vendor's RoCEv2 guidance).

    ```yaml
    # bad
    qos: {trust: pcp}
    nic: {trust: pcp}
    # fixed
    qos: {trust: dscp}
    nic: {trust: dscp}
    ```
    """

    id = "REV031"
    severity = Severity.ERROR
    title = "PCP trust on a routed fabric"
    hint = "set qos.trust and nic.trust to dscp"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        if ctx.intent.qos.trust == "pcp":
            msg = "switches trust PCP, but every fabric link is routed (untagged): RoCE loses its class after one hop"
            yield self.finding(ctx, ("qos", "trust"), msg, related=[("nic", "trust")])


class WatchdogAlertOnly(Rule):
    """The PFC watchdog only raises an alert.

    An alerting watchdog sees the pause storm and lets it continue: the stuck queue keeps pausing its
    upstream ports until someone acts. drop (or forward, which ignores the pauses) is what breaks a storm.

    ```yaml
    # bad
    qos: {pfc: {watchdog: {detect: 200ms, restore: 400ms, action: alert}}}
    # fixed
    qos: {pfc: {watchdog: {detect: 200ms, restore: 400ms, action: drop}}}
    ```
    """

    id = "REV032"
    severity = Severity.WARNING
    title = "PFC watchdog only alerts"
    hint = "set qos.pfc.watchdog.action to drop"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        wd = ctx.intent.qos.pfc.watchdog
        if wd is not None and wd.enabled and wd.action == "alert" and ctx.intent.qos.pfc_priorities:
            msg = "the PFC watchdog only alerts: a pause storm it detects keeps stalling the lossless class"
            yield self.finding(ctx, (*WATCHDOG, "action"), msg)


class WatchdogTooEager(Rule):
    """The PFC watchdog declares a queue stuck after less than 100 ms.

    A lossless queue under heavy incast is legitimately paused for milliseconds at a time (every pause frame
    refreshes the timer); a watchdog that detects sooner than one 100 ms poll (SONiC's and Junos' default;
    Junos detects after 2 polls) treats congestion as a storm and drops the lossless traffic.

    ```yaml
    # bad
    qos: {pfc: {watchdog: {detect: 10ms, restore: 100ms, polling: 5ms}}}
    # fixed
    qos: {pfc: {watchdog: {detect: 200ms, restore: 400ms, polling: 100ms}}}
    ```
    """

    id = "REV033"
    severity = Severity.WARNING
    title = "PFC watchdog detects too early"
    hint = "detect after at least 100 ms (200 ms with 100 ms polling is the common choice)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        wd = ctx.intent.qos.pfc.watchdog
        if wd is not None and wd.enabled and wd.detect < WATCHDOG_DETECT_FLOOR_US and ctx.intent.qos.pfc_priorities:
            msg = (
                f"the PFC watchdog detects after {duration(wd.detect)}: ordinary incast pauses last that long, so "
                "it would drop lossless traffic under normal congestion"
            )
            yield self.finding(ctx, (*WATCHDOG, "detect"), msg)


class RoceMtuBelowFull(Rule):
    """The RoCE path MTU is below 4096 on a fabric whose links carry jumbo frames.

    RoCE's MTU is chosen from 256-4096; every packet costs the same headers and the same per-packet NIC and
    switch work, so 1024 moves a quarter of the data per packet for nothing when the links (and NVIDIA's
    RoCE guidance) allow 4096.

    ```yaml
    # bad
    underlay: {mtu: 9216}
    nic: {roce_mtu: 1024}
    # fixed
    nic: {roce_mtu: 4096}
    ```
    """

    id = "REV034"
    severity = Severity.WARNING
    title = "RoCE MTU below 4096 on jumbo links"
    hint = "set nic.roce_mtu to 4096"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        roce_mtu = ctx.intent.nic.roce_mtu
        if roce_mtu < ROCE_MTU_FULL and ctx.intent.underlay.mtu >= 9000:
            msg = (
                f"RoCE MTU {roce_mtu} on {ctx.intent.underlay.mtu} B links: {ROCE_MTU_FULL} would carry "
                f"{ROCE_MTU_FULL // roce_mtu}x more data per packet for the same per-packet cost"
            )
            yield self.finding(ctx, ("nic", "roce_mtu"), msg, related=[("underlay", "mtu")])


class DcqcnNeverReduces(Rule):
    """The DCQCN reaction point can never lower a sender's rate.

    rpg_min_dec_fac bounds how far one CNP may cut the rate (NVIDIA: 100 prevents rate reductions at all);
    with min_dec_fac 100 DCQCN is on in name only. rpg_min_rate at or above the NIC's line rate has the same
    effect: the floor is the ceiling.

    ```yaml
    # bad
    nic: {dcqcn: {rp: {min_dec_fac: 100}}}
    # fixed (ConnectX default)
    nic: {dcqcn: {rp: {min_dec_fac: 50}}}
    ```
    """

    id = "REV035"
    severity = Severity.ERROR
    title = "DCQCN can never reduce the rate"
    hint = "keep rp.min_dec_fac below 100 (default 50) and rp.min_rate well below line rate (default 1Mbps)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        dcqcn = ctx.intent.nic.dcqcn
        if not dcqcn.enabled:
            return
        rp = dcqcn.rp
        if rp.min_dec_fac >= 100:
            msg = "DCQCN rp.min_dec_fac is 100: a CNP may not cut the rate at all, so DCQCN never slows a sender"
            yield self.finding(ctx, (*RP, "min_dec_fac"), msg)
        line_mbps = ctx.intent.topology.servers.nic_speed * 1000
        if rp.min_rate >= line_mbps:
            msg = (
                f"DCQCN rp.min_rate is {rp.min_rate:,} Mb/s, at or above the {line_mbps:,} Mb/s NIC line rate: "
                "the rate floor leaves no room to slow down"
            )
            yield self.finding(ctx, (*RP, "min_rate"), msg, related=[("topology", "servers", "nic_speed")])


class DcqcnIncreaseInverted(Rule):
    """DCQCN's additive-increase step is larger than its hyper-increase step.

    After a rate cut the reaction point recovers in stages: fast recovery, additive increase by ai_rate, then
    hyper increase by hai_rate once recovery has lasted. hai_rate smaller than ai_rate inverts the stages (the
    ConnectX defaults are 5 and 50 Mb/s), usually a unit slip.

    ```yaml
    # bad
    nic: {dcqcn: {rp: {ai_rate: 50Mbps, hai_rate: 5Mbps}}}
    # fixed
    nic: {dcqcn: {rp: {ai_rate: 5Mbps, hai_rate: 50Mbps}}}
    ```
    """

    id = "REV036"
    severity = Severity.ERROR
    title = "DCQCN hyper increase below additive increase"
    hint = "make rp.hai_rate larger than rp.ai_rate (defaults 50Mbps and 5Mbps)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        dcqcn = ctx.intent.nic.dcqcn
        if dcqcn.enabled and dcqcn.rp.hai_rate < dcqcn.rp.ai_rate:
            rp = dcqcn.rp
            msg = (
                f"DCQCN rp.hai_rate {rp.hai_rate:,} Mb/s is below rp.ai_rate {rp.ai_rate:,} Mb/s: "
                "recovery slows down the longer it lasts"
            )
            yield self.finding(ctx, (*RP, "hai_rate"), msg, related=[(*RP, "ai_rate")])


class DcqcnRateBoundsCrossed(Rule):
    """DCQCN's rate floor (min_rate) is at or above its rate ceiling (max_rate).

    max_rate 0 means line rate; any other max_rate is the ceiling a QP recovers to. A floor at or above it
    leaves the reaction point no range to act in.

    ```yaml
    # bad
    nic: {dcqcn: {rp: {min_rate: 10000Mbps, max_rate: 5000Mbps}}}
    # fixed
    nic: {dcqcn: {rp: {min_rate: 1Mbps, max_rate: 0Mbps}}}
    ```
    """

    id = "REV037"
    severity = Severity.ERROR
    title = "DCQCN min_rate not below max_rate"
    hint = "set rp.min_rate below rp.max_rate, or rp.max_rate to 0 (line rate)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        dcqcn = ctx.intent.nic.dcqcn
        rp = dcqcn.rp
        if dcqcn.enabled and rp.max_rate and rp.min_rate >= rp.max_rate:
            msg = f"DCQCN rp.min_rate {rp.min_rate:,} Mb/s is not below rp.max_rate {rp.max_rate:,} Mb/s"
            yield self.finding(ctx, (*RP, "min_rate"), msg, related=[(*RP, "max_rate")])


RULES: tuple[type[Rule], ...] = (
    CnpSharesPriority,
    TrustPcpOnRoutedFabric,
    WatchdogAlertOnly,
    WatchdogTooEager,
    RoceMtuBelowFull,
    DcqcnNeverReduces,
    DcqcnIncreaseInverted,
    DcqcnRateBoundsCrossed,
)
