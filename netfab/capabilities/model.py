"""What a platform can do, as data: the shape of capabilities/<platform>.yaml and its resolved form.

A data file states each feature either as a plain boolean or as ``{since: "<release>"}``; `PlatformData.resolve`
turns that into a `Capabilities` for one NOS release. Lint reads only the resolved form, so a rule never
compares versions itself and adding a platform or a release is editing YAML, not code.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from netfab.capabilities.version import at_least
from netfab.intent.types import ByteSize, HashField, Platform

EcnUnit = Literal["bytes", "kbytes", "mbytes", "segments", "percent_fill"]
WatchdogAction = Literal["drop", "forward", "alert"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Since(_Frozen):
    """A feature that appeared in a NOS release (inclusive)."""

    since: str = Field(pattern=r"\d")


Gate = bool | Since
"""true / false, or available from a release on."""


def _open(gate: Gate, os_version: str | None) -> bool:
    return gate if isinstance(gate, bool) else at_least(os_version, gate.since)


class WatchdogData(_Frozen):
    supported: Gate
    actions: dict[WatchdogAction, Gate] = {}


class BufferData(_Frozen):
    """Planning figures for proportion checks (ECN thresholds against what a queue can hold)."""

    asic: str
    """The ASIC family the figures describe: the shallowest one the platform commonly runs in AI fabrics."""
    shared_bytes: ByteSize | None = None
    """Shared packet buffer of one ASIC; None where there is no switch ASIC (Linux software forwarding)."""
    queue_share_percent: float = Field(default=50, gt=0, le=100)
    """Share of the shared buffer one egress queue can take under the dynamic threshold (alpha 1 -> 50 %)."""
    cell_bytes: int | None = Field(default=None, gt=0)
    """Buffer cell size, for small-packet cell occupancy in headroom; None = not public."""
    mac_phy_delay_bytes: int = Field(default=0, ge=0)
    """ASIC-specific PHY/MAC/pipeline bytes added to headroom (§7.1 'local PHY/MAC'); 0 = not public."""

    @property
    def queue_bytes(self) -> int | None:
        if self.shared_bytes is None:
            return None
        return int(self.shared_bytes * self.queue_share_percent / 100)


class Capabilities(_Frozen):
    """One platform at one NOS release: every fact a lint rule may ask about."""

    platform: Platform
    os_version: str | None
    max_lossless_classes: int
    pfc_watchdog: bool
    watchdog_actions: frozenset[WatchdogAction]
    ecn_units: tuple[EcnUnit, ...]
    hash_fields: frozenset[HashField]
    adaptive_routing: bool
    adaptive_routing_speeds: tuple[int, ...] | None
    packet_spraying: bool
    commit_confirm: bool
    max_ecmp_paths: int
    buffer: BufferData
    later_releases: dict[str, str] = {}
    """Features this release lacks but a later one has: feature -> first release (for hints)."""

    @property
    def label(self) -> str:
        """How messages name the platform: 'arista_eos 4.32.0F' or 'nvidia_cumulus'."""
        return f"{self.platform.value} {self.os_version}" if self.os_version else self.platform.value

    def upgrade_hint(self, feature: str) -> str:
        since = self.later_releases.get(feature)
        return f"{self.platform.value} has it from {since} on; upgrade, or " if since else ""


class PlatformData(_Frozen):
    """The contents of capabilities/<platform>.yaml."""

    platform: Platform
    max_lossless_classes: int = Field(ge=0, le=8)
    pfc_watchdog: WatchdogData
    ecn_units: list[EcnUnit]
    hash_fields: dict[HashField, Gate]
    adaptive_routing: Gate = False
    adaptive_routing_speeds: list[int] | None = None
    """Port speeds (Gb/s) adaptive routing works at; None = any."""
    packet_spraying: Gate = False
    commit_confirm: bool = False
    max_ecmp_paths: int = Field(ge=1)
    buffer: BufferData

    def resolve(self, os_version: str | None) -> Capabilities:
        later: dict[str, str] = {}

        def gate(feature: str, value: Gate) -> bool:
            enabled = _open(value, os_version)
            if not enabled and isinstance(value, Since):
                later[feature] = value.since
            return enabled

        watchdog = gate("pfc_watchdog", self.pfc_watchdog.supported)
        actions = frozenset(
            a for a, g in self.pfc_watchdog.actions.items() if watchdog and gate(f"pfc_watchdog.action.{a}", g)
        )
        fields = frozenset(f for f, g in self.hash_fields.items() if gate(f"hash_fields.{f.value}", g))
        return Capabilities(
            platform=self.platform,
            os_version=os_version,
            max_lossless_classes=self.max_lossless_classes,
            pfc_watchdog=watchdog,
            watchdog_actions=actions,
            ecn_units=tuple(self.ecn_units),
            hash_fields=fields,
            adaptive_routing=gate("adaptive_routing", self.adaptive_routing),
            adaptive_routing_speeds=tuple(self.adaptive_routing_speeds) if self.adaptive_routing_speeds else None,
            packet_spraying=gate("packet_spraying", self.packet_spraying),
            commit_confirm=self.commit_confirm,
            max_ecmp_paths=self.max_ecmp_paths,
            buffer=self.buffer,
            later_releases=later,
        )
