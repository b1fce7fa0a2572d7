"""What a rule sees: the validated intent, where each of its values is written, and each tier's capabilities."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from netfab.capabilities import Capabilities, capabilities_for
from netfab.core.findings import Location
from netfab.intent import Intent
from netfab.intent.hardware import tier_buffer, tier_switch_model
from netfab.intent.topology import SwitchTier
from netfab.lint.fabric import DataPath, Role, switch_tiers

if TYPE_CHECKING:
    from netfab.load import IntentSource

__all__ = ["DataPath", "LintContext", "PlatformGroup", "Tier", "tier_capabilities"]


@dataclass(frozen=True, slots=True)
class Tier:
    """A switching tier as rules talk about it: 'the spine tier (arista_eos 4.33.1F)'."""

    role: Role
    spec: SwitchTier
    caps: Capabilities

    @property
    def path(self) -> DataPath:
        return ("topology", self.role)

    @property
    def label(self) -> str:
        return f"{self.role} tier ({self.caps.label})"


@dataclass(frozen=True, slots=True)
class PlatformGroup:
    """Tiers that run the same platform and release: one finding for all of them, not one per tier."""

    caps: Capabilities
    roles: tuple[Role, ...]

    @property
    def label(self) -> str:
        roles = " and ".join(self.roles)
        return f"{roles} {'tier' if len(self.roles) == 1 else 'tiers'} ({self.caps.label})"

    @property
    def path(self) -> DataPath:
        return ("topology", self.roles[0])


def tier_capabilities(intent: Intent) -> dict[Role, Capabilities]:
    """Each tier's capabilities, with `buffer` the tier's switch model's (netfab.intent.hardware.tier_buffer)
    when it names one, so headroom and ECN rules rate against the real box, not the planning ASIC."""
    out: dict[Role, Capabilities] = {}
    for role, spec in switch_tiers(intent):
        caps = capabilities_for(spec.platform, spec.os_version)
        if tier_switch_model(spec) is not None:
            caps = caps.model_copy(update={"buffer": tier_buffer(spec)[0]})
        out[role] = caps
    return out


@dataclass(frozen=True)
class LintContext:
    intent: Intent
    source: IntentSource | None
    capabilities: Mapping[Role, Capabilities]
    plan: Any = None
    """The fabric plan (netfab.design.FabricPlan) once a caller has one; rules with needs_plan read it."""
    prefix: DataPath = ()
    """Where this network is written: () for the back end (the root), ('networks', name) for another. Rules
    run once per network on that network's own intent and write paths relative to it; at() and written()
    add the prefix, so a finding points into the right section of the YAML."""
    root: Intent | None = None
    """The whole cluster intent (every network), for cross-network rules; None = `intent` is the root."""
    _fallback: Location = field(default=Location("<intent>", 1, 1), repr=False)

    @classmethod
    def build(
        cls,
        intent: Intent,
        source: IntentSource | None = None,
        plan: Any = None,
        prefix: DataPath = (),
        root: Intent | None = None,
    ) -> LintContext:
        return cls(intent, source, tier_capabilities(intent), plan, prefix, root)

    @property
    def cluster(self) -> Intent:
        """The whole intent, every network included."""
        return self.root if self.root is not None else self.intent

    @property
    def is_root(self) -> bool:
        return not self.prefix

    @property
    def network_kind(self) -> str:
        """backend for the root pass; the network's kind (frontend, storage, oob) on a network's pass."""
        if not self.prefix:
            return "backend"
        return self.cluster.networks[str(self.prefix[1])].kind

    @cached_property
    def tiers(self) -> list[Tier]:
        return [Tier(role, spec, self.capabilities[role]) for role, spec in switch_tiers(self.intent)]

    @cached_property
    def platform_groups(self) -> list[PlatformGroup]:
        groups: dict[str, list[Tier]] = {}
        for tier in self.tiers:
            groups.setdefault(tier.caps.label, []).append(tier)
        return [PlatformGroup(ts[0].caps, tuple(t.role for t in ts)) for ts in groups.values()]

    def written(self, *path: str | int) -> bool:
        """Is this exact field written in the user's YAML (not left at its default)?"""
        node: Any = self.source.data if self.source is not None else {}
        for part in (*self.prefix, *path):
            present = (isinstance(node, dict) and part in node) or (
                isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
            )
            if not present:
                return False
            node = node[part]
        return True

    def first_written(self, *paths: DataPath) -> DataPath:
        """The first of `paths` the user wrote: a finding about two fields goes where the user can see one."""
        return next((p for p in paths if self.written(*p)), paths[0])

    def at(self, *path: str | int) -> Location:
        """Where intent field `path` is written; a field left at its default is reported at the key of its
        nearest written ancestor (`qos:`), a mapping or list at its key, a scalar at its value."""
        if self.source is None:
            return self._fallback
        path = (*self.prefix, *path)
        smap = self.source.source_map
        node: Any = self.source.data
        depth = 0
        for part in path:
            present = (isinstance(node, dict) and part in node) or (
                isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
            )
            if not present:
                break
            node = node[part]
            depth += 1
        found = tuple(path[:depth])
        if depth == len(path) and not isinstance(node, dict | list):
            return smap.locate(found)
        return smap.key_location(found) or smap.locate(found)
