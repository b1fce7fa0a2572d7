"""What a platform can do, as data: the shape of capabilities/<platform>.yaml and its resolved form.

A data file states each feature either as a plain boolean or as ``{since: "<release>"}``; `PlatformData.resolve`
turns that into a `Capabilities` for one NOS release. Lint reads only the resolved form, so a rule never
compares versions itself and adding a platform or a release is editing YAML, not code.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from netfab.capabilities.version import at_least, parse_version
from netfab.intent.types import ByteSize, HashField, Platform

EcnUnit = Literal["bytes", "kbytes", "mbytes", "segments", "percent_fill"]
WatchdogAction = Literal["drop", "forward", "alert"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Since(_Frozen):
    """A feature that appeared in a NOS release (inclusive)."""

    since: str = Field(pattern=r"\d")
    needs_version: bool = False
    """The renderer picks its syntax by release, so an unset or unreadable os_version counts as lacking the
    feature (rather than 'newest release', the default for everything else)."""


Gate = bool | Since
"""true / false, or available from a release on."""


def _open(gate: Gate, os_version: str | None) -> bool:
    if isinstance(gate, bool):
        return gate
    if gate.needs_version and parse_version(os_version) is None:
        return False
    return at_least(os_version, gate.since)


class TimerLimit(_Frozen):
    """What one PFC watchdog timer may be on a platform. Bounds compare whole milliseconds, truncated, as the
    renderers convert (`| ms`); `step_us` is the resolution the CLI takes (a finer value is refused)."""

    min_ms: int | None = Field(default=None, ge=0)
    max_ms: int | None = Field(default=None, ge=0)
    step_us: int = Field(default=1, ge=1)


class WatchdogData(_Frozen):
    supported: Gate
    actions: dict[WatchdogAction, Gate] = {}
    detect: TimerLimit = TimerLimit()
    restore: TimerLimit = TimerLimit()
    polling: TimerLimit = TimerLimit()
    detect_in_polls: bool = False
    """detect is configured as a count of polling intervals, so it must be a whole multiple of polling."""
    max_polls_per_detect: int | None = Field(default=None, ge=1)
    """Upper bound of ceil(detect / polling) where the CLI takes detect as that count (NVUE robustness)."""


class PercentKnob(_Frozen):
    """How a platform takes a percentage (DWRR share, ECN marking probability)."""

    whole: bool = False
    """The CLI takes an integer: a fraction is refused rather than silently rounded."""
    min: int = Field(default=0, ge=0, le=100)
    """The lowest value accepted (after rounding to the nearest integer where the platform rounds)."""

    def refuses(self, value: float) -> bool:
        if self.whole and value != int(value):
            return True
        return round(value) < self.min  # Python round == Jinja's `round` filter, which the templates use


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
    packet_spraying_speeds: tuple[int, ...] | None = None
    hash_seed: bool = True
    hash_field_pairs: tuple[tuple[HashField, HashField], ...] = ()
    hash_fields_required: frozenset[HashField] = frozenset()
    qp_hash_companions: frozenset[HashField] | None = None
    bgp_unnumbered: bool = True
    trust_pcp: bool = True
    explicit_headroom: bool = True
    max_lossless_cable_m: float | None = None
    max_strict_queues: int = 8
    dwrr_weight: PercentKnob = PercentKnob()
    ecn_pmax: PercentKnob = PercentKnob()
    ecn_weight: bool = True
    ecn_fill_level_of_bytes: int | None = None
    unclassified_dscp_needs_class: bool = False
    watchdog: WatchdogData | None = None
    """Timer limits of the PFC watchdog (None where there is none)."""
    reasons: dict[str, str] = {}
    """Why a feature is missing or limited, in the renderer's words: feature -> reason (for messages)."""
    later_releases: dict[str, str] = {}
    """Features this release lacks but a later one has: feature -> first release (for hints)."""

    @property
    def label(self) -> str:
        """How messages name the platform: 'arista_eos 4.32.0F' or 'nvidia_cumulus'."""
        return f"{self.platform.value} {self.os_version}" if self.os_version else self.platform.value

    def upgrade_hint(self, feature: str) -> str:
        since = self.later_releases.get(feature)
        if not since:
            return ""
        if parse_version(self.os_version) is None:
            # Only a needs_version gate closes on an unknown release: say what to write, not "upgrade".
            return f"{self.platform.value} has it from {since} on; set the tier's os_version, or "
        return f"{self.platform.value} has it from {since} on; upgrade, or "

    def why(self, feature: str) -> str:
        """': <reason>' for a message, or '' when the data gives none."""
        reason = self.reasons.get(feature)
        return f": {reason}" if reason else ""


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
    packet_spraying_speeds: list[int] | None = None
    """Port speeds (Gb/s) packet spraying works at, where it is built on adaptive routing; None = any."""
    hash_seed: bool = True
    """An explicit load_balancing.hash_seed can be configured."""
    hash_field_pairs: list[tuple[HashField, HashField]] = []
    """Fields the platform selects only together (both or neither)."""
    hash_fields_required: list[HashField] = []
    """Fields the platform always hashes on: the intent must list them."""
    qp_hash_companions: list[HashField] | None = None
    """With rocev2_dest_qp, the only other fields the QP-hashing mode can use; None = any supported field."""
    bgp_unnumbered: Gate = True
    """eBGP over IPv6 link-local (RFC 5549), underlay.addressing: unnumbered."""
    trust_pcp: bool = True
    """qos.trust: pcp (classify on the 802.1Q priority) on the fabric's routed ports."""
    explicit_headroom: bool = True
    """qos.buffers.headroom as a byte size, not auto."""
    max_lossless_cable_m: float | None = None
    """Longest cable a lossless port can have with the headroom netfab renders; None = no limit."""
    max_strict_queues: int = Field(default=8, ge=0, le=8)
    dwrr_weight: PercentKnob = PercentKnob()
    ecn_pmax: PercentKnob = PercentKnob()
    ecn_weight: bool = True
    """An ECN queue-averaging weight other than 0 can be configured."""
    ecn_fill_level_of: ByteSize | None = None
    """Where ECN thresholds are fill levels (percent_fill): the queue buffer Kmin/Kmax bytes are a percent of,
    rounded up, and they must give Kmin < Kmax <= 100 %."""
    unclassified_dscp_needs_class: bool = False
    """DSCPs no class lists go to the default class's queue (queue 0 without one), which must have a class."""
    reasons: dict[str, str] = {}
    """Why a feature is missing or limited, in the renderer's own words (its refusal message)."""

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
            packet_spraying_speeds=tuple(self.packet_spraying_speeds) if self.packet_spraying_speeds else None,
            hash_seed=self.hash_seed,
            hash_field_pairs=tuple(self.hash_field_pairs),
            hash_fields_required=frozenset(self.hash_fields_required),
            qp_hash_companions=None if self.qp_hash_companions is None else frozenset(self.qp_hash_companions),
            bgp_unnumbered=gate("bgp_unnumbered", self.bgp_unnumbered),
            trust_pcp=self.trust_pcp,
            explicit_headroom=self.explicit_headroom,
            max_lossless_cable_m=self.max_lossless_cable_m,
            max_strict_queues=self.max_strict_queues,
            dwrr_weight=self.dwrr_weight,
            ecn_pmax=self.ecn_pmax,
            ecn_weight=self.ecn_weight,
            ecn_fill_level_of_bytes=self.ecn_fill_level_of,
            unclassified_dscp_needs_class=self.unclassified_dscp_needs_class,
            watchdog=self.pfc_watchdog if watchdog else None,
            reasons=self.reasons,
            later_releases=later,
        )
