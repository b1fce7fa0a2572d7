"""Topology: rail-optimized leaf/spine built from scalable units, or 3-tier pods of racks.

Switch tiers are named by their role in the fabric, not by vendor marketing: leaf (rail or rack switch),
spine (2-tier spine, or the cluster/pod tier in 3-tier), superspine (aggregation tier above pods).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from netfab.intent.base import IntentModel
from netfab.intent.hardware import HardwareOverride, SwitchModelName
from netfab.intent.types import Count, Oversubscription, Platform, SpeedGbps, gbps


class SwitchTier(IntentModel):
    """One switching tier: which platform runs it, its port budget and its uplinks."""

    platform: Platform = "arista_eos"
    os_version: str | None = None
    """NOS release; capability data can depend on it (e.g. EOS >= 4.33.1F for QP hashing)."""
    model: SwitchModelName | None = None
    """The switch model (netfab/platforms/models/): ASIC, buffer, ports, SONiC hwsku. Hardware-dependent
    syntax and budgets are read from it (netfab.intent.hardware.tier_switch_model)."""
    hardware: HardwareOverride | None = None
    """Explicit figures for unlisted hardware, or corrections to `model` (taken as declared)."""
    count: Count | None = None
    """spine: per pod in clos3, fabric-wide in rail_optimized; superspine: fabric-wide. Leaves are derived."""
    ports: Count = 64
    """Front-panel ports (after breakout) available on one switch: the port budget."""
    uplinks: int = Field(default=0, ge=0)
    """Uplinks per switch towards the tier above (0 on the top tier)."""
    uplink_speed: SpeedGbps = gbps("400G")
    uplink_cable_m: float = Field(default=30.0, gt=0, le=10_000)
    """Cable length of the uplinks in metres: it sizes PFC headroom on both ends."""
    oversubscription: Oversubscription = 1.0
    """Declared downlink:uplink capacity ratio, e.g. '1:1' or '7:1'. Lint checks it against the counts."""


class ServerSpec(IntentModel):
    """GPU servers: one scale-out NIC per GPU."""

    gpus_per_server: Count = 8
    nic_speed: SpeedGbps = gbps("400G")
    cable_m: float = Field(default=3.0, gt=0, le=10_000)


class Topology(IntentModel):
    style: Literal["rail_optimized", "clos3"] = "rail_optimized"
    servers: ServerSpec = ServerSpec()
    planes: Count = 1
    """Independent spine groups. In clos3, spine i of a pod is in plane i mod planes and only uplinks to
    superspines of that plane."""

    # rail_optimized: NIC i of every server in an SU lands on leaf i of that SU.
    scalable_units: Count | None = None
    servers_per_su: Count | None = None
    rails: Count | None = None
    """Rails per SU; a rail-optimized design has one rail per GPU (lint checks this)."""

    # clos3: pods of racks, one leaf (rack switch) per rack.
    pods: Count | None = None
    racks_per_pod: Count | None = None
    servers_per_rack: Count | None = None

    leaf: SwitchTier = SwitchTier(uplinks=4)
    spine: SwitchTier = SwitchTier(count=2)
    superspine: SwitchTier | None = None

    @model_validator(mode="after")
    def _style_fields(self) -> Topology:
        # Style-specific fields are checked here (not left to lint) because the design stage cannot
        # even count devices without them.
        if self.style == "rail_optimized":
            missing = [f for f in ("scalable_units", "servers_per_su") if getattr(self, f) is None]
            extra = [f for f in ("pods", "racks_per_pod", "servers_per_rack") if getattr(self, f) is not None]
            if self.superspine is not None:
                extra.append("superspine")
        else:
            missing = [f for f in ("pods", "racks_per_pod", "servers_per_rack") if getattr(self, f) is None]
            if self.superspine is None:
                missing.append("superspine")
            extra = [f for f in ("scalable_units", "servers_per_su", "rails") if getattr(self, f) is not None]
        if missing:
            raise ValueError(f"style {self.style} needs {', '.join(missing)}")
        if extra:
            raise ValueError(f"style {self.style} does not use {', '.join(extra)}")
        if self.spine.count is None:
            raise ValueError("spine.count is required")
        return self

    @property
    def rail_count(self) -> int:
        """Rails: explicit for rail_optimized (defaults to one per GPU); clos3 racks are not rail-wired."""
        if self.style == "rail_optimized":
            return self.rails if self.rails is not None else self.servers.gpus_per_server
        return 1

    @property
    def leaf_count(self) -> int:
        if self.style == "rail_optimized":
            return (self.scalable_units or 0) * self.rail_count
        return (self.pods or 0) * (self.racks_per_pod or 0)

    @property
    def leaf_downlinks(self) -> int:
        """Server-facing ports per leaf."""
        if self.style == "rail_optimized":
            return self.servers_per_su or 0
        return (self.servers_per_rack or 0) * self.servers.gpus_per_server

    @property
    def server_count(self) -> int:
        if self.style == "rail_optimized":
            return (self.scalable_units or 0) * (self.servers_per_su or 0)
        return (self.pods or 0) * (self.racks_per_pod or 0) * (self.servers_per_rack or 0)

    @property
    def spine_count(self) -> int:
        per = self.spine.count or 0
        return per * (self.pods or 1) if self.style == "clos3" else per
