"""The audit's data: what was collected, the facts both sides reduce to, and the drift between them.

A *fact* is one thing the fabric plan decides, named in the DevicePlan's terms and keyed by a path such as
``interface[swp1].mtu``, ``bgp.neighbor[swp3].remote_as`` or ``profile[NETFAB-LOSSLESS].ecn[queue=3].kmax_bytes``.
Running and intended configs of every platform reduce to the same kind of flat mapping, so comparing them is
a dictionary comparison and grouping the fleet is grouping by path, value and intended value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

FactValue = str | int | float | bool
Facts = dict[str, FactValue]

PRESENT = "present"
"""Value of a fact that only says "this exists" (an interface, a BGP neighbor, a config line)."""

Status = Literal["in_sync", "drift", "unreadable"]


@dataclass(slots=True)
class Collected:
    """One device's running state as read from it (or from saved copies), keyed like the build's files."""

    device: str
    files: dict[str, str] = field(default_factory=dict)
    """By build suffix: ".cfg", ".set", ".yaml", ".json", ".frr.conf", ".conf"."""
    kernel: Mapping[str, Any] | None = None
    """frr only: the Linux side (FRRDriver.get_kernel_state(), or <device>.state.json offline, checked against
    netfab.deploy.kernel_state.KernelState when audited)."""
    error: str | None = None
    """Why nothing (or not everything) could be read; the device is then reported unreadable."""
    origin: str = ""
    """Where it came from, for the report: a file path or "device"."""


@dataclass(frozen=True, slots=True)
class Drift:
    """One fact that differs. None on a side means the fact is absent there."""

    path: str
    actual: FactValue | None
    intended: FactValue | None
    detail: tuple[str, ...] = ()
    """For a missing or unexpected container (an interface, a neighbor): what it carries on the other side."""


@dataclass(slots=True)
class RawDiff:
    """The platform's own view of the difference, kept beneath the structural findings."""

    kind: Literal["unified", "jsonpatch", "frr-reload", "nvue", "kernel"]
    text: str
    ops: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class DeviceAudit:
    device: str
    platform: str
    status: Status
    drifts: list[Drift] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    raw: list[RawDiff] = field(default_factory=list)
    remediation: dict[str, str] = field(default_factory=dict)
    """File name (inside the device's audit dir) -> text: the commands, patch or config that fix the drift."""
    kernel_drift: bool = False
    """frr: the Linux side drifted, so remediation must re-run the host script."""
    error: str | None = None
    origin: str = ""


@dataclass(frozen=True, slots=True)
class DeviceMeta:
    """Where a device sits in the fabric, for fleet summaries ("37 leaves, rails 2 and 5")."""

    name: str
    role: str
    platform: str
    rail: int | None = None
    pod: int | None = None
    plane: int | None = None
    su: int | None = None


@dataclass(slots=True)
class DriftGroup:
    """The same drift on many devices: one normalised fact path, one running value, one intended value."""

    kind: str
    actual: FactValue | None
    intended: FactValue | None
    members: list[tuple[str, str]] = field(default_factory=list)
    """(device, concrete fact path) pairs, e.g. ("leaf2", "interface[swp1].ecn[queue=3].kmin_bytes")."""

    @property
    def devices(self) -> list[str]:
        return sorted({d for d, _ in self.members})


@dataclass(slots=True)
class AuditReport:
    fabric: str
    source: str
    """What was audited, in words: "lab audx over SSH", "saved configs in ci/running"."""
    devices: list[DeviceAudit]
    meta: dict[str, DeviceMeta]
    groups: list[DriftGroup]
    seconds: float = 0.0
    out_dir: str = ""
    locations: dict[str, str] = field(default_factory=dict)
    """Device -> the file findings point at (the saved running config, or the intended config in the build)."""
    remediation_outcome: dict[str, Any] | None = None

    @property
    def drifted(self) -> list[DeviceAudit]:
        return [d for d in self.devices if d.status == "drift"]

    @property
    def unreadable(self) -> list[DeviceAudit]:
        return [d for d in self.devices if d.status == "unreadable"]
