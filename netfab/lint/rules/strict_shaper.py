"""The strict queue's shaper (qos.classes[].max_rate_percent): present, on a strict class, and one each tier's
platform renders (FIDELITY_REVIEW JUN-3, X-1)."""

from __future__ import annotations

from collections.abc import Iterator

from netfab.core.findings import Finding, Severity
from netfab.lint.context import LintContext
from netfab.lint.rule import Rule
from netfab.lint.rules._words import class_path, klass, percent

FIELD = "max_rate_percent"


class StrictQueueUnshaped(Rule):
    """A strict-priority class has no shaper.

    A strict queue is served before every other queue. Without a cap, a host that marks the class's DSCPs (DSCP 48
    / CS6 is also many NOSes' routing-protocol marking) can take the whole port and starve RoCE. Juniper
    recommends a rate on every strict-high queue; AMD's RoCE reference caps CNP at 5 %.

    ```yaml
    # bad
    - {name: cnp, kind: cnp, dscp: [48], priority: 6, scheduling: strict, max_rate_percent: null}
    # fixed (5 is the default)
    - {name: cnp, kind: cnp, dscp: [48], priority: 6, scheduling: strict, max_rate_percent: 5}
    ```
    """

    id = "QOS011"
    severity = Severity.WARNING
    title = "Strict-priority class without a shaper"
    hint = "set max_rate_percent on the class (5 is the default and the vendors' reference value)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.scheduling == "strict" and tc.max_rate_percent is None:
                msg = f"{klass(tc)} is strict priority with no shaper: its traffic can starve every other queue"
                yield self.finding(ctx, class_path(i, FIELD), msg)


class ShaperOnDwrrClass(Rule):
    """A DWRR class states a max_rate_percent.

    netfab renders the shaper on strict queues only (a DWRR queue is already bounded by its share under load), so
    the value would be ignored.

    ```yaml
    # bad
    - {name: storage, dscp: [10], priority: 1, weight: 20, max_rate_percent: 10}
    # fixed
    - {name: storage, dscp: [10], priority: 1, weight: 20}
    ```
    """

    id = "QOS012"
    severity = Severity.WARNING
    title = "Shaper on a DWRR class"
    hint = "remove max_rate_percent, or make the class scheduling: strict"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.scheduling == "dwrr" and FIELD in tc.model_fields_set and tc.max_rate_percent is not None:
                rate = percent(tc.max_rate_percent)
                msg = f"{klass(tc)} is scheduled by dwrr; its max_rate_percent {rate} is ignored"
                yield self.finding(ctx, class_path(i, FIELD), msg)


class StrictShaperNotRendered(Rule):
    """A tier's platform cannot carry the strict queue's shaper.

    NX-OS has per-queue shaping, but its CLI is not confirmed, so netfab renders none (FIDELITY_REVIEW X-1); the
    Linux/FRR renderer writes ETS only. A shaper the intent states is refused; the default one is noted, since the
    queue then runs unshaped as it did before the knob existed.

    ```yaml
    # bad on cisco_nxos: refused
    - {name: cnp, kind: cnp, dscp: [48], priority: 6, scheduling: strict, max_rate_percent: 5}
    # fixed: the default, noted
    - {name: cnp, kind: cnp, dscp: [48], priority: 6, scheduling: strict}
    ```
    """

    id = "CAP026"
    severity = Severity.ERROR
    title = "Strict queue shaper the platform's configuration does not carry"
    hint = (
        "leave max_rate_percent out to accept an unshaped strict queue on that tier (noted), or run the tier on a "
        "platform that renders the shaper"
    )

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.scheduling != "strict" or tc.max_rate_percent is None:
                continue
            stated = FIELD in tc.model_fields_set
            for group in ctx.platform_groups:
                if group.caps.strict_max_rate:
                    continue
                hint = group.caps.upgrade_hint("strict_max_rate")
                why = group.caps.why("strict_max_rate")
                shaper = f"{klass(tc)} max_rate_percent {percent(tc.max_rate_percent)}"
                if stated:
                    msg = f"{shaper} cannot be applied on the {group.label}{why}"
                    yield self.finding(ctx, class_path(i, FIELD), msg, related=[group.path], hint=hint + self.hint)
                else:
                    msg = f"{shaper} (the default) is not rendered on the {group.label}{why}"
                    yield self.finding(ctx, class_path(i), msg, severity=Severity.INFO, hint=hint.removesuffix(", or "))


class StrictShaperNotAccepted(Rule):
    """The strict queue's shaper is a percentage the platform's CLI cannot take.

    EOS `shape rate N percent` and Junos `shaping-rate percent N` take a whole percent 1-100; SONiC and Cumulus
    take an absolute rate, which netfab computes from the port speed.

    ```yaml
    # bad on arista_eos
    - {name: cnp, kind: cnp, dscp: [48], priority: 6, scheduling: strict, max_rate_percent: 2.5}
    # fixed
    - {name: cnp, kind: cnp, dscp: [48], priority: 6, scheduling: strict, max_rate_percent: 3}
    ```
    """

    id = "CAP027"
    severity = Severity.ERROR
    title = "Strict queue shaper percentage not accepted by the platform"
    hint = "use a whole percent of at least 1"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for i, tc in enumerate(ctx.intent.qos.classes):
            if tc.scheduling != "strict" or tc.max_rate_percent is None:
                continue
            for group in ctx.platform_groups:
                caps = group.caps
                if caps.strict_max_rate and caps.strict_max_rate_percent.refuses(tc.max_rate_percent):
                    msg = (
                        f"{klass(tc)} has max_rate_percent {percent(tc.max_rate_percent)}, which the {group.label} "
                        f"cannot take{caps.why('strict_max_rate_percent')}"
                    )
                    yield self.finding(ctx, class_path(i, FIELD), msg, related=[group.path])


RULES: tuple[type[Rule], ...] = (
    StrictQueueUnshaped,
    ShaperOnDwrrClass,
    StrictShaperNotRendered,
    StrictShaperNotAccepted,
)
