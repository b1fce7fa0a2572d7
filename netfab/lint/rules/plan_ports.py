"""Port budget per device, on the expanded plan: the ports each switch's cabling actually uses."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from netfab.core.findings import Finding, Severity
from netfab.lint.context import LintContext
from netfab.lint.fabric import port_use
from netfab.lint.rule import Rule
from netfab.lint.rules._plan import plan_of, some


@dataclass
class _Over:
    budget: int
    names: list[str] = field(default_factory=list)
    worst: tuple[int, int, str] = (0, 0, "")
    """(ports used, highest port number, device) of the device furthest over budget."""


class DevicePortsOverBudget(Rule):
    """A switch of the plan is cabled to more ports, or to a higher port number, than its tier's `ports`.

    TOPO002 checks the budget from the counts; this rule checks what the design actually cabled. The design
    gives each leaf a block of ceil(uplinks / spines) ports on every spine, so uplinks that do not divide evenly
    (TOPO003) also run past the spine's faceplate although the counts fit. A cable on a port the switch does not
    have cannot be built. Tiers TOPO002 already reports are not repeated.

    ```yaml
    # bad: 4 leaves x 3 uplinks over 2 spines: 6 by the counts, but each leaf takes a block of 2 per spine
    topology: {leaf: {uplinks: 3}, spine: {count: 2, ports: 6}}
    # fixed
    topology: {leaf: {uplinks: 4}, spine: {count: 2, ports: 8}}
    ```
    """

    id = "PLAN001"
    severity = Severity.ERROR
    title = "Device cabled beyond its port budget"
    hint = "raise topology.<tier>.ports (ports after breakout), or cable fewer downlinks or uplinks to the tier"
    needs_plan = True

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        t = ctx.intent.topology
        # A tier the counts already put over budget is TOPO002's finding; report only what the cabling adds.
        by_counts = {u.role for u in port_use(ctx.intent) if u.downlinks + u.uplinks > u.ports}
        over: dict[str, _Over] = {}
        for dev in plan_of(ctx).devices.values():
            if not dev.interfaces or dev.role in by_counts:
                continue
            budget = getattr(t, dev.role).ports
            used = len(dev.interfaces)
            highest = max(i.port for i in dev.interfaces)
            if used <= budget and highest <= budget:
                continue
            entry = over.setdefault(dev.role, _Over(budget))
            entry.names.append(dev.name)
            entry.worst = max(entry.worst, (used, highest, dev.name))
        for role, entry in over.items():
            used, highest, name = entry.worst
            if len(entry.names) == 1:
                msg = f"{name} uses {used} ports, up to port {highest}, but topology.{role}.ports is {entry.budget}"
            else:
                msg = (
                    f"{some(entry.names, role)} are cabled beyond topology.{role}.ports ({entry.budget}); "
                    f"the furthest is {name}: {used} ports, up to port {highest}"
                )
            yield self.finding(ctx, ("topology", role, "ports"), msg)


RULES: tuple[type[Rule], ...] = (DevicePortsOverBudget,)
