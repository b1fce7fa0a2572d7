"""The fleet from the plan: every port's place (tier, rail, pod, plane, role, peer) and every device's commands.

Peers come from the plan's cabling, not from LLDP: the intent says which switch port faces which NIC, so both
ends of a link can be joined even when one end's counters are missing.
"""

from __future__ import annotations

from dataclasses import dataclass

from netfab.design.plan import FabricPlan
from netfab.health.collect import Target, commands_for, host_health
from netfab.health.model import PortMeta
from netfab.platforms import platform_spec


@dataclass(frozen=True, slots=True)
class Fleet:
    ports: dict[tuple[str, str], PortMeta]
    targets: list[Target]
    unsupported: list[str]
    """Devices whose platform has no health sources (named in the report, never silently skipped)."""
    gpus: int
    lossless: tuple[int, ...]
    """Lossless priorities (= queues: netfab keeps priority == traffic class == queue)."""
    dcqcn: bool
    notes: tuple[str, ...] = ()
    """What the fleet's platforms cannot measure (platform records' health.unavailable), for the report."""

    @property
    def roles(self) -> dict[str, str]:
        return {m.device: m.role for m in self.ports.values()}


def fleet_of(plan: FabricPlan, include_hosts: bool = True) -> Fleet:
    tiers: dict[tuple[str, str], str] = {}
    for link in plan.links:
        tiers[(link.a_device, link.a_port)] = link.tier
        tiers[(link.b_device, link.b_port)] = link.tier
    ports: dict[tuple[str, str], PortMeta] = {}
    targets: list[Target] = []
    unsupported: list[str] = []
    by_platform: dict[str, int] = {}
    for dev in plan.devices.values():
        for i in dev.interfaces:
            ports[(dev.name, i.name)] = PortMeta(
                dev.name,
                i.name,
                dev.role,
                tiers.get((dev.name, i.name), "host" if i.role == "host" else "leaf_spine"),
                i.role,
                i.peer_device,
                i.peer_port,
                i.speed_gbps * 1e9,
                i.rail if i.rail is not None else dev.rail,
                dev.pod,
                dev.plane,
            )
        health = platform_spec(dev.platform).health
        if health is None:
            unsupported.append(dev.name)
            continue
        by_platform[dev.platform] = by_platform.get(dev.platform, 0) + 1
        targets.append(Target(dev.name, commands_for(health, [(i.name, "") for i in dev.interfaces])))
    gpus = 0
    for server in plan.servers:
        gpus += len(server.nics)
        for nic in server.nics:
            leaf = ports.get((nic.leaf, nic.leaf_port))
            ports[(server.name, nic.netdev)] = PortMeta(
                server.name,
                nic.netdev,
                "host",
                "host",
                "nic",
                nic.leaf,
                nic.leaf_port,
                leaf.speed_bps if leaf else 0.0,
                nic.rail,
                server.pod,
                leaf.plane if leaf else None,
            )
        if include_hosts:
            # A port without RDMA (an OOB BMC) has no RDMA counters to read.
            nics = [(nic.netdev, nic.rdma_device) for nic in server.nics if nic.rdma_device is not None]
            targets.append(Target(server.name, commands_for(host_health(), nics), kind="host"))
    lossless = tuple(q.queue for q in plan.qos.queues if q.lossless)
    return Fleet(ports, targets, unsupported, gpus, lossless, plan.nic.dcqcn_enabled, coverage_notes(by_platform))


def coverage_notes(devices_per_platform: dict[str, int]) -> tuple[str, ...]:
    """One note per (platform, counter it cannot read), so a report over EOS says it had no pause time there."""
    notes = []
    for platform, count in sorted(devices_per_platform.items()):
        health = platform_spec(platform).health
        for counter, why in sorted((health.unavailable if health else {}).items()):
            notes.append(f"{platform} ({count} devices): no {counter} source: {why}")
    return tuple(notes)
