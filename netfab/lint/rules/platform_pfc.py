"""PFC settings each tier's platform can express: explicit headroom, lossless cable length, watchdog timers."""

from __future__ import annotations

from collections.abc import Iterator
from math import ceil

from netfab.capabilities import Capabilities, TimerLimit
from netfab.capabilities.model import WatchdogTimer
from netfab.core.findings import Finding, Severity
from netfab.intent.qos import PfcWatchdog
from netfab.lint.context import LintContext
from netfab.lint.fabric import link_kinds
from netfab.lint.rule import Rule
from netfab.lint.rules._words import duration

WATCHDOG = ("qos", "pfc", "watchdog")


class LosslessCableTooLong(Rule):
    """A link is longer than the lossless cable length a tier's platform renders headroom for.

    NX-OS covers lossless links up to 100 m with its default headroom; longer ones need an ingress
    pause-buffer policy netfab does not size. The design marks every fabric and host port lossless, so every
    link kind a tier terminates is checked.

    ```yaml
    # bad on cisco_nxos
    topology: {leaf: {uplink_cable_m: 300}}
    # fixed
    topology: {leaf: {uplink_cable_m: 100}}
    ```
    """

    id = "CAP021"
    severity = Severity.ERROR
    title = "Lossless link longer than the platform supports"
    hint = "shorten the cable (or place the tier closer), or run the tier on a platform without the limit"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for kind in link_kinds(ctx.intent):
            for group in ctx.platform_groups:
                limit = group.caps.max_lossless_cable_m
                ends = [r for r in kind.switch_ends if r in group.roles]
                if limit is None or not ends or kind.cable_m <= limit:
                    continue
                msg = (
                    f"{kind.name} links are {kind.cable_m:g} m, but the {group.label} renders lossless links of "
                    f"at most {limit:g} m{group.caps.why('max_lossless_cable_m')}"
                )
                yield self.finding(ctx, kind.cable_path, msg, related=[group.path])


def _timer_problem(name: str, value_us: int, limit: TimerLimit) -> str | None:
    ms = value_us // 1000  # the renderers convert with `| ms`: whole milliseconds, truncated
    if limit.min_ms is not None and ms < limit.min_ms:
        return f"{name} {duration(value_us)} is below {limit.min_ms} ms"
    if limit.max_ms is not None and ms > limit.max_ms:
        return f"{name} {duration(value_us)} is above {limit.max_ms} ms"
    if value_us % limit.step_us:
        return f"{name} {duration(value_us)} is not a whole number of {duration(limit.step_us)} steps"
    return None


def _watchdog_problems(wd: PfcWatchdog, caps: Capabilities) -> Iterator[tuple[str, str]]:
    """(timer field, what is wrong) for each watchdog timer the platform's CLI cannot take."""
    limits = caps.watchdog
    if limits is None:
        return
    for name, value in (("detect", wd.detect), ("restore", wd.restore), ("polling", wd.polling)):
        problem = _timer_problem(name, value, getattr(limits, name))
        if problem:
            yield name, problem
    if limits.detect_in_polls and (wd.polling == 0 or wd.detect % wd.polling):
        yield "detect", f"detect {duration(wd.detect)} is not a whole number of polling intervals"
    if limits.max_polls_per_detect is not None and wd.polling:
        polls = ceil(wd.detect / wd.polling)
        if not 1 <= polls <= limits.max_polls_per_detect:
            yield "detect", f"detect {duration(wd.detect)} is {polls} polls, outside 1-{limits.max_polls_per_detect}"


class WatchdogTimersNotAccepted(Rule):
    """A PFC watchdog timer is outside the range or resolution a tier's platform takes.

    SONiC: detection 100-5000 ms, restoration 100-60000 ms, polling 100-1000 ms. Cumulus: polling 100-5000 ms,
    detect written as 1-1000 polls. EOS: timeout and recovery in 10 ms steps, polling in 1 ms steps. Junos:
    whole-ms polling and recovery, detect a whole number of polls.

    ```yaml
    # bad on sonic
    qos: {pfc: {watchdog: {detect: 50ms, restore: 400ms, polling: 50ms}}}
    # fixed
    qos: {pfc: {watchdog: {detect: 200ms, restore: 400ms, polling: 100ms}}}
    ```
    """

    id = "CAP022"
    severity = Severity.ERROR
    title = "PFC watchdog timer not accepted by the platform"
    hint = "pick timers every tier takes (detect 200ms, restore 400ms, polling 100ms work everywhere)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        wd = ctx.intent.qos.pfc.watchdog
        if wd is None or not wd.enabled:
            return
        for group in ctx.platform_groups:
            why = group.caps.why("pfc_watchdog.timers")
            for name, problem in _watchdog_problems(wd, group.caps):
                msg = f"PFC watchdog {problem} on the {group.label}{why}"
                yield self.finding(ctx, (*WATCHDOG, name), msg, related=[group.path])


class WatchdogTimerNotSet(Rule):
    """A PFC watchdog timer of the intent is not in a tier's rendered configuration.

    Where the NOS has no such timer but documents what it does instead (Cumulus has no restore timer: it
    restores a queue after one polling interval without pause frames), lint notes the substitution (info): no
    intent can change it, so a warning would only fail every `--strict` run. Where netfab cannot render the
    timers because their CLI is not confirmed (NX-OS: FIDELITY_REVIEW NX-1), the device would run timers
    netfab does not know: a timer the intent states is refused; leaving the timers out of the intent accepts
    the device's own, and is noted.

    ```yaml
    # bad on cisco_nxos: refused
    qos: {pfc: {watchdog: {detect: 200ms, restore: 400ms, polling: 100ms, action: drop}}}
    # fixed: the NX-OS defaults, noted
    qos: {pfc: {watchdog: {action: drop}}}
    ```
    """

    id = "CAP024"
    severity = Severity.ERROR
    title = "PFC watchdog timer the platform's configuration does not carry"
    hint = (
        "leave the timers out of qos.pfc.watchdog to accept the platform's own (they are noted), or run the "
        "tier on a platform that renders them"
    )

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        wd = ctx.intent.qos.pfc.watchdog
        if wd is None or not wd.enabled or not ctx.intent.qos.pfc_priorities:
            return
        written = wd.model_fields_set
        for group in ctx.platform_groups:
            limits = group.caps.watchdog
            if limits is None:
                continue
            refused: list[WatchdogTimer] = []
            defaulted: list[WatchdogTimer] = []
            for name, unset in sorted(limits.unset.items()):
                if unset.known:
                    msg = f"PFC watchdog {name} {duration(getattr(wd, name))} is not set on the {group.label}: "
                    yield self.finding(ctx, (*WATCHDOG, name), msg + unset.instead, severity=Severity.INFO, hint="")
                else:
                    (refused if name in written else defaulted).append(name)
            # One finding per group, whatever the number of timers: the cause (and the fix) is one.
            if refused:
                why = limits.unset[refused[0]].instead
                timers = ", ".join(f"{n} {duration(getattr(wd, n))}" for n in refused)
                msg = f"PFC watchdog {timers} cannot be applied on the {group.label}: {why}"
                yield self.finding(ctx, (*WATCHDOG, refused[0]), msg, related=[group.path])
            elif defaulted:
                why = limits.unset[defaulted[0]].instead
                msg = f"PFC watchdog {', '.join(defaulted)} left to the {group.label}'s own values: {why}"
                yield self.finding(ctx, WATCHDOG, msg, severity=Severity.INFO, hint="")


RULES: tuple[type[Rule], ...] = (LosslessCableTooLong, WatchdogTimersNotAccepted, WatchdogTimerNotSet)
