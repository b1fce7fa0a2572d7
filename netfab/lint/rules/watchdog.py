"""The PFC watchdog: present where PFC is, and with timers that can work (detect <= restore, poll <= detect)."""

from __future__ import annotations

from collections.abc import Iterator

from netfab.core.findings import Finding, Severity
from netfab.lint.context import LintContext
from netfab.lint.rule import Rule
from netfab.lint.rules._words import duration, priorities

WATCHDOG = ("qos", "pfc", "watchdog")


class WatchdogMissing(Rule):
    """PFC is on but no PFC watchdog is configured.

    A NIC or switch that keeps sending pause frames (a PFC storm, or a deadlock in a cyclic buffer dependency)
    stops the lossless class on every port upstream of it. The watchdog is what breaks that. Not reported when
    no tier's platform has a watchdog at all (Linux/FRR).

    ```yaml
    # bad
    qos:
      pfc: {watchdog: null}
    # fixed
    qos:
      pfc:
        watchdog: {detect: 200ms, restore: 400ms, action: drop}
    ```
    """

    id = "PFC001"
    severity = Severity.WARNING
    title = "PFC without a watchdog"
    hint = "configure qos.pfc.watchdog (detect 200ms, restore 400ms, action drop is the common choice)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        prios = ctx.intent.qos.pfc_priorities
        watchdog = ctx.intent.qos.pfc.watchdog
        if not prios or (watchdog is not None and watchdog.enabled):
            return
        if not any(tier.caps.pfc_watchdog.supported for tier in ctx.tiers):
            return  # nothing could run one: the warning would not be actionable
        state = "disabled" if watchdog is not None else "not configured"
        msg = f"PFC is on {priorities(prios)} but the PFC watchdog is {state}: a pause storm would stall the fabric"
        path = (*WATCHDOG, "enabled") if watchdog is not None else WATCHDOG
        yield self.finding(ctx, path, msg)


class RestoreShorterThanDetect(Rule):
    """The watchdog restores a queue sooner than it detects a stuck one.

    After the watchdog acts, it restores the queue once no pause frame was seen for `restore`. A restore shorter
    than `detect` lets a queue that is still being paused flap between stuck and restored.

    ```yaml
    # bad
    watchdog: {detect: 400ms, restore: 100ms}
    # fixed
    watchdog: {detect: 200ms, restore: 400ms}
    ```
    """

    id = "PFC002"
    severity = Severity.ERROR
    title = "PFC watchdog restore shorter than detect"
    hint = "make restore at least detect (commonly 2x detect)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        wd = ctx.intent.qos.pfc.watchdog
        if wd is not None and wd.enabled and wd.restore < wd.detect:
            msg = (
                f"PFC watchdog restores after {duration(wd.restore)}, sooner than it detects a stuck queue "
                f"({duration(wd.detect)}): a still-paused queue would flap"
            )
            yield self.finding(ctx, (*WATCHDOG, "restore"), msg, related=[(*WATCHDOG, "detect")])


class PollingLongerThanDetect(Rule):
    """The watchdog polls less often than its detection time.

    A queue is seen as stuck only at a poll, so detection can never be faster than the polling interval; SONiC
    rejects such a config outright (POLL_INTERVAL must be <= every detection time).

    ```yaml
    # bad
    watchdog: {detect: 200ms, restore: 400ms, polling: 500ms}
    # fixed
    watchdog: {detect: 200ms, restore: 400ms, polling: 100ms}
    ```
    """

    id = "PFC003"
    severity = Severity.ERROR
    title = "PFC watchdog polling longer than detect"
    hint = "poll at most as long as detect (commonly detect / 2)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        wd = ctx.intent.qos.pfc.watchdog
        if wd is not None and wd.enabled and wd.polling > wd.detect:
            msg = (
                f"PFC watchdog polls every {duration(wd.polling)} but should detect within {duration(wd.detect)}: "
                "detection can only happen at a poll"
            )
            yield self.finding(ctx, (*WATCHDOG, "polling"), msg, related=[(*WATCHDOG, "detect")])


RULES: tuple[type[Rule], ...] = (WatchdogMissing, RestoreShorterThanDetect, PollingLongerThanDetect)
