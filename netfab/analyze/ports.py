"""Every switch's interfaces counted per kind, once per analysis: capacity and the lossless budget both read
them (a pass over the ~420,000 interfaces of a 100k-GPU fabric each was ~0.1 s CPU)."""

from __future__ import annotations

from collections import Counter
from operator import attrgetter

from netfab.design.plan import FabricPlan

PortKind = tuple[bool, str, int, float]
"""(lossless, port role, speed in Gb/s, cable in metres): what capacity and PFC headroom depend on."""
_PORT_KIND = attrgetter("lossless", "role", "speed_gbps", "cable_m")

PortKinds = dict[str, Counter[PortKind]]
"""Per switch name, in plan order: its interfaces per kind, kinds in the order the switch first lists them."""


def port_kinds(plan: FabricPlan) -> PortKinds:
    # Counted in C (Counter over attrgetter): a Python statement per port costs several times more here.
    return {dev.name: Counter(map(_PORT_KIND, dev.interfaces)) for dev in plan.devices.values()}
