"""What a platform can do, as data: the `capabilities:` section of netfab/platforms/<p>/platform.yaml.

Every capability is declared once, in `CapabilityData`. The data file states a gated feature either as a plain
boolean or as ``{since: "<release>"}``; the same model, parametrised by its gate type, is both the file's shape
(`CapabilityData[Gate]`) and the form lint reads for one NOS release (`Capabilities`, whose gates are plain
booleans). `resolve` walks the model generically: every `Since` it meets, at any depth, becomes a boolean for the
release, and a closed one is remembered (by its dotted path) for the upgrade hint. Adding a capability is one
field here plus the YAML; a rule never compares versions itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from netfab.capabilities.version import at_least, parse_version
from netfab.intent.types import ByteSize, HashField

if TYPE_CHECKING:
    from netfab.platforms.hardware import SwitchModel

# A resolved release re-validates the record's values, which are numbers by then: a size is accepted as a
# whole number of bytes as well as the data file's '10875072B'.
Bytes = Annotated[
    int, BeforeValidator(lambda v: v if isinstance(v, int) and not isinstance(v, bool) else _byte_size(v)), Field(ge=0)
]

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

    def open_at(self, os_version: str | None) -> bool:
        if self.needs_version and parse_version(os_version) is None:
            return False
        return at_least(os_version, self.since)


Gate = bool | Since
"""true / false, or available from a release on."""

G = TypeVar("G", bool, Gate)
"""The gate type: `Gate` in the data file, `bool` once resolved for a release."""


def _byte_size(value: Any) -> int:
    from pydantic import TypeAdapter

    return int(TypeAdapter(ByteSize).validate_python(value))


class TimerLimit(_Frozen):
    """What one PFC watchdog timer may be on a platform. Bounds compare whole milliseconds, truncated, as the
    renderers convert (`| ms`); `step_us` is the resolution the CLI takes (a finer value is refused)."""

    min_ms: int | None = Field(default=None, ge=0)
    max_ms: int | None = Field(default=None, ge=0)
    step_us: int = Field(default=1, ge=1)


WatchdogTimer = Literal["detect", "restore", "polling"]


class UnsetTimer(_Frozen):
    """A watchdog timer the platform's CLI cannot set (or netfab cannot render), and what runs instead."""

    instead: str = Field(min_length=10)
    """What the device does in place of the intent's value, quoted in the lint finding."""
    known: bool
    """True: the replacement behaviour is documented (lint notes it, info); False: the device's own value is not
    known to netfab, so an intent that states the timer cannot be honoured and lint refuses it (error)."""


class WatchdogData(_Frozen, Generic[G]):
    supported: G
    actions: dict[WatchdogAction, G] = {}
    detect: TimerLimit = TimerLimit()
    restore: TimerLimit = TimerLimit()
    polling: TimerLimit = TimerLimit()
    detect_in_polls: bool = False
    """detect is configured as a count of polling intervals, so it must be a whole multiple of polling."""
    max_polls_per_detect: int | None = Field(default=None, ge=1)
    """Upper bound of ceil(detect / polling) where the CLI takes detect as that count (NVUE robustness)."""
    unset: dict[WatchdogTimer, UnsetTimer] = {}
    """Timers the rendered configuration does not carry (lint rule CAP024 says so, never silently)."""


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
    shared_bytes: Bytes | None = None
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


class CapabilityData(_Frozen, Generic[G]):
    """Every fact a lint rule (or a template, as `caps`) may ask about a platform."""

    max_lossless_classes: int = Field(ge=0, le=8)
    pfc_watchdog: WatchdogData[G]
    ecn_units: tuple[EcnUnit, ...]
    hash_fields: dict[HashField, G]
    adaptive_routing: G = False
    adaptive_routing_speeds: tuple[int, ...] | None = None
    """Port speeds (Gb/s) adaptive routing works at; None = any."""
    packet_spraying: G = False
    commit_confirm: bool = False
    max_ecmp_paths: int = Field(ge=1)
    max_mtu: int | None = Field(default=None, ge=1280)
    """The largest interface `mtu` the CLI takes; the intent's fabric MTU (an L3 MTU, 9216 by default) is
    rendered as this where it is larger (EOS: 9214 is its maximum and carries the same jumbo frames); None = no
    lower cap than the intent's."""
    mtu_l2_header_bytes: int = Field(default=0, ge=0, le=64)
    """Bytes the interface `mtu` counts beyond the IP MTU: 0 where `mtu` is the L3 MTU (EOS, NX-OS, SONiC, NVUE,
    Linux), 14 on Junos, whose physical `mtu` is the media MTU including the Ethernet header (FIDELITY_REVIEW
    JUN-5). `interface_mtu` adds it, so every platform carries the intent's IP MTU."""
    buffer: BufferData
    packet_spraying_speeds: tuple[int, ...] | None = None
    """Port speeds (Gb/s) packet spraying works at, where it is built on adaptive routing; None = any."""
    hash_seed: G = True
    """An explicit load_balancing.hash_seed can be configured."""
    hash_field_pairs: tuple[tuple[HashField, HashField], ...] = ()
    """Fields the platform selects only together (both or neither)."""
    hash_fields_required: frozenset[HashField] = frozenset()
    """Fields the platform always hashes on: the intent must list them."""
    qp_hash_companions: frozenset[HashField] | None = None
    """With rocev2_dest_qp, the only other fields the QP-hashing mode can use; None = any supported field."""
    lossless_buffer_pool: G = True
    """Lossless priorities can be given a buffer pool of their own; where the renderer needs one for PFC to be
    lossless and the release has none, lossless classes are refused."""
    bgp_unnumbered: G = True
    """eBGP over IPv6 link-local (RFC 5549), underlay.addressing: unnumbered."""
    trust_pcp: bool = True
    """qos.trust: pcp (classify on the 802.1Q priority) on the fabric's routed ports."""
    explicit_headroom: bool = True
    """qos.buffers.headroom as a byte size, not auto."""
    max_lossless_cable_m: float | None = None
    """Longest cable a lossless port can have with the headroom netfab renders; None = no limit."""
    max_strict_queues: int = Field(default=8, ge=0, le=8)
    strict_max_rate: G = False
    """A strict queue's shaper (qos.classes[].max_rate_percent) is rendered. Where it is not, lint says so
    (CAP026): a stated cap is refused, the default one noted, never silently dropped (FIDELITY_REVIEW X-1)."""
    strict_max_rate_percent: PercentKnob = PercentKnob()
    """How the shaper's percentage is taken (whole, minimum) where the CLI takes a percent."""
    dwrr_weight: PercentKnob = PercentKnob()
    ecn_pmax: PercentKnob = PercentKnob()
    ecn_weight: bool = True
    """An ECN queue-averaging weight other than 0 can be configured."""
    ecn_fill_levels: bool = False
    """ECN thresholds are fill levels (percent_fill) of the egress queue's buffer: Kmin/Kmax bytes are a percent
    of `buffer_of(model).queue_bytes` (the switch model's shared buffer times the queue share), rounded up, and
    must give Kmin < Kmax < 100 % (Juniper: never a last fill level of 100 %). No buffer figure, no ECN: a
    model whose buffer is not public is refused, never rated against an assumed size (FIDELITY_REVIEW JUN-2)."""
    unclassified_dscp_needs_class: bool = False
    """DSCPs no class lists go to the default class's queue (queue 0 without one), which must have a class."""
    reasons: dict[str, str] = {}
    """Why a feature is missing or limited, in the renderer's own words (its refusal message), keyed by the
    feature's dotted path ('hash_fields.ingress_port', 'pfc_watchdog.actions.forward', 'pfc_watchdog.timers')."""

    def resolve(self, platform: str, os_version: str | None) -> Capabilities:
        later: dict[str, str] = {}

        def gate(path: str, since: Since) -> bool:
            enabled = since.open_at(os_version)
            if not enabled:
                later[_feature(path)] = since.since
            return enabled

        resolved = {name: _resolved(getattr(self, name), name, gate) for name in type(self).model_fields}
        return Capabilities.model_validate(
            {**resolved, "platform": platform, "os_version": os_version, "later_releases": later}
        )


def _feature(path: str) -> str:
    # A sub-feature's `supported` switch is the feature itself: "pfc_watchdog.supported" -> "pfc_watchdog".
    return path.removesuffix(".supported")


def _resolved(value: Any, path: str, gate: Callable[[str, Since], bool]) -> Any:
    """`value` as plain data with every Since replaced by gate(path, since)."""
    if isinstance(value, Since):
        return gate(path, value)
    if isinstance(value, BaseModel):
        items = {name: getattr(value, name) for name in type(value).model_fields}
        done = {name: _resolved(item, f"{path}.{name}" if path else name, gate) for name, item in items.items()}
        # A model without gates stays the validated instance (re-validating its dump would re-parse units).
        return value if all(done[n] is items[n] for n in items) else done
    if isinstance(value, dict):
        done = {key: _resolved(item, f"{path}.{key}", gate) for key, item in value.items()}
        return value if all(done[k] is value[k] for k in value) else done
    return value


class Capabilities(CapabilityData[bool]):
    """One platform at one NOS release: every gate resolved to a boolean."""

    platform: str
    os_version: str | None
    later_releases: dict[str, str] = {}
    """Features this release lacks but a later one has: feature -> first release (for hints)."""

    @property
    def hashes(self) -> frozenset[HashField]:
        """The ECMP hash fields this release can select."""
        return frozenset(f for f, on in self.hash_fields.items() if on)

    @property
    def watchdog(self) -> WatchdogData[bool] | None:
        """The PFC watchdog's limits, or None where there is none at this release."""
        return self.pfc_watchdog if self.pfc_watchdog.supported else None

    @property
    def watchdog_actions(self) -> frozenset[WatchdogAction]:
        if not self.pfc_watchdog.supported:
            return frozenset()
        return frozenset(a for a, on in self.pfc_watchdog.actions.items() if on)

    def buffer_of(self, model: SwitchModel | None) -> BufferData:
        """The buffer figures a switch of `model` on this platform is rated against (lint, analyze, and the
        templates that convert bytes to fill levels): the model's shared buffer (else its total; None = not
        public) with this platform's queue share, or the platform's planning figure when no model is named
        (netfab.intent.hardware.tier_buffer labels which)."""
        if model is None:
            return self.buffer
        figure = model.buffer.shared_bytes or model.buffer.total_bytes
        cell = model.buffer.cell_bytes
        update = {
            "asic": model.asic_label,
            "shared_bytes": figure.value if figure is not None else None,
            "cell_bytes": cell.value if cell is not None else None,
        }
        return self.buffer.model_copy(update=update)

    def interface_mtu(self, ip_mtu: int) -> int:
        """The interface `mtu` value that gives an IP MTU of `ip_mtu` (the intent's fabric MTU): plus the L2
        header where the platform counts it, capped at the CLI's maximum. Templates and verify both use it."""
        value = ip_mtu + self.mtu_l2_header_bytes
        return min(value, self.max_mtu) if self.max_mtu is not None else value

    @property
    def label(self) -> str:
        """How messages name the platform: 'arista_eos 4.32.0F' or 'nvidia_cumulus'."""
        return f"{self.platform} {self.os_version}" if self.os_version else self.platform

    def upgrade_hint(self, feature: str) -> str:
        since = self.later_releases.get(feature)
        if not since:
            return ""
        if parse_version(self.os_version) is None:
            # Only a needs_version gate closes on an unknown release: say what to write, not "upgrade".
            return f"{self.platform} has it from {since} on; set the tier's os_version, or "
        return f"{self.platform} has it from {since} on; upgrade, or "

    def why(self, feature: str) -> str:
        """': <reason>' for a message, or '' when the data gives none."""
        reason = self.reasons.get(feature)
        return f": {reason}" if reason else ""
