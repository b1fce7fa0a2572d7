"""Topology: rail-optimized leaf/spine built from scalable units, or pods of racks (top-of-rack leaves).

Switch tiers are named by their role in the fabric, not by vendor marketing: leaf (rail or rack switch),
spine (2-tier spine, or the cluster/pod tier in 3-tier), superspine (aggregation tier above pods).

The shapes people build, and how each is written:
- rail-optimized, one leaf per rail: `style: rail_optimized` (the default);
- several rails per leaf (a small cluster: 2 leaves carrying 4 rails each): `rails_per_leaf: 4`;
- multi-plane back end (each NIC port on its own plane, planes never meet): `planes: 2` in rail_optimized;
- 3-tier rail-optimized: `sus_per_pod: N` groups the SUs into pods, each with its own spines
  (`spine.count` is then per pod) and a superspine tier joining the pods; one pod needs no superspine;
- top-of-rack, not rail-wired: `style: clos3` with one pod and no superspine is a 2-tier ToR leaf/spine;
  with several pods the superspine tier joins them (3-tier).
"""

from __future__ import annotations

from fnmatch import fnmatchcase
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
    """spine: per pod in clos3 and in rail_optimized with sus_per_pod, fabric-wide otherwise; superspine:
    fabric-wide. Leaves are derived."""
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
    """GPU servers as this network sees them: how many NIC ports each has on it, at what speed."""

    gpus_per_server: Count = 8
    nics: Count | None = None
    """NIC ports of one server on this network. Omitted = one per GPU (the back end's rule). A storage or
    front-end network usually has 1 or 2."""
    nic_speed: SpeedGbps = gbps("400G")
    cable_m: float = Field(default=3.0, gt=0, le=10_000)

    @property
    def nic_count(self) -> int:
        return self.nics if self.nics is not None else self.gpus_per_server


LinkTierName = Literal["host", "leaf_spine", "spine_superspine"]


class CableOverride(IntentModel):
    """A different cable length for some links: a group of racks farther from the spine row, one long run.
    The first override that matches a link wins; links no override matches keep their tier's length."""

    match: str = Field(min_length=1)
    """Shell glob on the device names at either end, e.g. 'su2-*' or 'pod1-leaf17'."""
    tier: LinkTierName | None = None
    """Only links of this tier; omitted = any tier."""
    cable_m: float = Field(gt=0, le=10_000)

    def applies(self, tier: str, a: str, b: str) -> bool:
        return (self.tier is None or self.tier == tier) and (fnmatchcase(a, self.match) or fnmatchcase(b, self.match))


class Topology(IntentModel):
    style: Literal["rail_optimized", "clos3"] = "rail_optimized"
    """rail_optimized: scalable units, NIC i of every server on rail i. clos3: pods of racks with a
    top-of-rack leaf each; one pod without a superspine is a 2-tier ToR design."""
    servers: ServerSpec = ServerSpec()
    planes: Count = 1
    """Independent planes that never meet. rail_optimized: every NIC has one port per plane, each plane has
    its own leaves and spines (spine i is in plane i mod planes). clos3: spine i of a pod is in plane i mod
    planes and only uplinks to superspines of that plane."""
    cables: list[CableOverride] = []
    """Per-link or per-group cable lengths (they size PFC headroom), overriding the tier's length."""

    # rail_optimized: NIC i of every server in an SU lands on rail i of that SU.
    scalable_units: Count | None = None
    servers_per_su: Count | None = None
    rails: Count | None = None
    """Rails per SU; a rail-optimized design has one rail per NIC (lint checks this)."""
    rails_per_leaf: Count = 1
    """Rails one leaf carries (rail_optimized): 4 puts rails 1-4 on the SU's first leaf, 5-8 on the second."""
    sus_per_pod: Count | None = None
    """rail_optimized 3-tier: SUs per pod. Each pod has its own spine.count spines (the pod's rails meet there)
    and the superspine tier joins the pods; growth fills the last pod, then opens the next. Omitted = one pod
    of every SU under fabric-wide spines (2-tier)."""

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
            if self.superspine is not None and self.sus_per_pod is None:
                raise ValueError(
                    "a rail_optimized superspine joins pods of SUs: set topology.sus_per_pod (each pod gets "
                    "its own spine.count spines), or drop the superspine for a 2-tier design"
                )
        else:
            missing = [f for f in ("pods", "racks_per_pod", "servers_per_rack") if getattr(self, f) is None]
            extra = [
                f for f in ("scalable_units", "servers_per_su", "rails", "sus_per_pod") if getattr(self, f) is not None
            ]
            if self.rails_per_leaf != 1:
                extra.append("rails_per_leaf")
        # One sentence each, never the model dump: pydantic would append the whole input to the message.
        if missing:
            raise ValueError(f"style {self.style} needs {', '.join(missing)}")
        if extra:
            raise ValueError(f"style {self.style} does not use {', '.join(extra)}")
        if self.superspine is None and self.pod_count > 1:
            fix = "pods: 1" if self.style == "clos3" else f"sus_per_pod: {self.scalable_units} (or omit it)"
            raise ValueError(
                f"{self.pod_count} pods need a superspine tier to join them; without one, use {fix} "
                "(a 2-tier design) or add topology.superspine"
            )
        if self.spine.count is None:
            raise ValueError("spine.count is required")
        if self.style == "rail_optimized" and self.rail_count % self.rails_per_leaf:
            raise ValueError(
                f"{self.rail_count} rails do not divide into leaves of rails_per_leaf: {self.rails_per_leaf}"
            )
        return self

    def cable_m(self, tier: str, a: str, b: str, default: float) -> float:
        """The length of one link: the first matching override, else the tier's."""
        for override in self.cables:
            if override.applies(tier, a, b):
                return override.cable_m
        return default

    @property
    def has_pods(self) -> bool:
        """Spines are per pod (clos3, or rail_optimized with sus_per_pod), not fabric-wide."""
        return self.style == "clos3" or self.sus_per_pod is not None

    @property
    def pod_count(self) -> int:
        if self.style == "clos3":
            return self.pods or 0
        if self.sus_per_pod is None:
            return 1
        return -(-(self.scalable_units or 0) // self.sus_per_pod)

    def pod_of_su(self, su: int) -> int:
        """The pod (1-based) SU `su` is in; 1 without sus_per_pod."""
        return (su - 1) // self.sus_per_pod + 1 if self.sus_per_pod else 1

    def su_in_pod(self, su: int) -> int:
        """The SU's 0-based position in its pod (its position in the fabric without sus_per_pod)."""
        return (su - 1) % self.sus_per_pod if self.sus_per_pod else su - 1

    @property
    def leaves_per_pod_plane(self) -> int:
        """Leaves one spine group serves: a full pod's leaves of one plane (its capacity, so a pod that grows
        keeps its spines' port numbers), every leaf of the plane without pods, a pod's racks in clos3."""
        if self.style == "clos3":
            return self.racks_per_pod or 0
        if self.sus_per_pod is None:
            return (self.scalable_units or 0) * self.leaves_per_su
        return self.sus_per_pod * self.leaves_per_su

    @property
    def rail_planes(self) -> int:
        """Planes the leaves are split into (rail_optimized); clos3 planes group spines only."""
        return self.planes if self.style == "rail_optimized" else 1

    @property
    def leaves_per_su(self) -> int:
        """Leaves of one SU in one plane."""
        return self.rail_count // self.rails_per_leaf

    @property
    def rail_count(self) -> int:
        """Rails: explicit for rail_optimized (defaults to one per NIC); clos3 racks are not rail-wired."""
        if self.style == "rail_optimized":
            return self.rails if self.rails is not None else self.servers.nic_count
        return 1

    @property
    def leaf_count(self) -> int:
        if self.style == "rail_optimized":
            return (self.scalable_units or 0) * self.leaves_per_su * self.rail_planes
        return (self.pods or 0) * (self.racks_per_pod or 0)

    @property
    def leaf_downlinks(self) -> int:
        """Server-facing ports per leaf."""
        if self.style == "rail_optimized":
            return (self.servers_per_su or 0) * self.rails_per_leaf
        return (self.servers_per_rack or 0) * self.servers.nic_count

    @property
    def server_count(self) -> int:
        if self.style == "rail_optimized":
            return (self.scalable_units or 0) * (self.servers_per_su or 0)
        return (self.pods or 0) * (self.racks_per_pod or 0) * (self.servers_per_rack or 0)

    @property
    def spine_count(self) -> int:
        per = self.spine.count or 0
        return per * self.pod_count if self.has_pods else per
