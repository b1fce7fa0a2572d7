"""What plan rules share: typed access to ctx.plan, link ends, and 'N devices, e.g. x' wording.

Plan rules run on every `netfab lint` of a 24k-GPU fabric (~80,000 interfaces), so they read the plan's
slotted dataclasses directly, make one pass where they can, and build per-link indexes only when a fast
fabric-wide check has already found something uneven.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

from netfab.lint.context import LintContext
from netfab.lint.rules._words import plural

if TYPE_CHECKING:
    # Type-only: lint sits before design in the pipeline and never imports it at run time.
    from netfab.design.plan import FabricPlan, InterfacePlan


def plan_of(ctx: LintContext) -> FabricPlan:
    return cast("FabricPlan", ctx.plan)


def fabric_link_ends(plan: FabricPlan) -> Iterator[tuple[str, InterfacePlan, str, InterfacePlan]]:
    """(lower device, its uplink, upper device, the peer downlink) for every switch-to-switch cable."""
    by_name: dict[str, dict[str, InterfacePlan]] = {
        name: {i.name: i for i in dev.interfaces if i.role == "fabric_down"} for name, dev in plan.devices.items()
    }
    for name, dev in plan.devices.items():
        for up in dev.interfaces:
            if up.role != "fabric_up":
                continue
            down = by_name.get(up.peer_device, {}).get(up.peer_port)
            if down is not None:
                yield name, up, up.peer_device, down


def some(names: list[str], word: str) -> str:
    """'leaf1' or '3 leaves (leaf1, leaf2, ...)': a count with the first examples, never a 1,536-name list."""
    if len(names) == 1:
        return names[0]
    shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
    return f"{plural(len(names), word)} ({shown})"
