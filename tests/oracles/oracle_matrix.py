"""The vendor-schema matrix: every example intent in intent/ x every platform x every release, rendered.

An example intent is forced onto one platform at a time (every tier of it), at one release (every tier's
os_version), and adapted to what that platform can do at that release, as its platform record says: a knob the
record refuses there (a hash field, adaptive routing, the PFC watchdog...) is what lint would stop, so the
matrix asks for what a user targeting that platform would write instead. Whatever the renderer still refuses
is a `Refusal` (reported, never a schema verdict). Renders are cached per cell for the whole session, so every
schema test and the measuring script share them.

Releases of a platform: the newest (os_version unset, netfab's own default), every release its record names
(capability gates, release_data), and every release the platform's oracle has a model of (its own list).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from copy import deepcopy
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from netfab.capabilities import Capabilities, NosVersion, Since, capabilities_for
from netfab.design import design
from netfab.design.plan import DevicePlan
from netfab.intent.model import Intent
from netfab.platforms import platform_names, platform_spec
from netfab.render.device import render_device

REPO = Path(__file__).resolve().parents[2]
INTENTS = REPO / "intent"
TIERS = ("leaf", "spine", "superspine")
ORACLES_ENV = "NETFAB_ORACLES"


def oracles_dir() -> Path | None:
    """../shared/oracles beside the repository (CI lays shared/ there; a git worktree finds it further up),
    or $NETFAB_ORACLES. None when there is none: the oracle tests then skip, saying so."""
    env = os.environ.get(ORACLES_ENV)
    if env:
        return Path(env) if Path(env).is_dir() else None
    for parent in REPO.parents:
        candidate = parent / "shared" / "oracles"
        if candidate.is_dir():
            return candidate
    return None


# Judged in full only by a schema with every_example=True (pyavd: one verdict per distinct block extract, ~5 s
# CPU per 24k cell) or with NETFAB_ORACLE_INCLUDE_PENDING=1: a clos3-24k cell judges 1,692 devices (~1 min CPU
# per NVUE cell measured on a loaded machine), clos3-100k 6,684. Every other schema judges them as sampled cells
# (Cell.sample: first two and last device per role; sampled() says what that does and does not cover).
_PENDING = frozenset({"clos3-24k.yaml", "clos3-100k.yaml"})


INCLUDE_PENDING_ENV = "NETFAB_ORACLE_INCLUDE_PENDING"


def example_intents(every: bool = False) -> list[str]:
    """Every example intent (intent/*.yaml), by file name; the pending ones only when `every` (a schema cheap
    enough to judge them) or with NETFAB_ORACLE_INCLUDE_PENDING=1 (tests/oracles/measure.py --include-pending)."""
    pending = frozenset() if every or os.environ.get(INCLUDE_PENDING_ENV) == "1" else _PENDING
    return sorted(p.name for p in INTENTS.glob("*.yaml") if p.name not in pending)


def gate_releases(platform: str) -> list[str]:
    """Every release the platform record names: its capability gates' `{since: ...}` and its release_data keys
    (the release from which the templates read other data, i.e. render another shape)."""
    spec = platform_spec(platform)
    found: set[str] = set(spec.release_data)

    def walk(value: object) -> None:
        if isinstance(value, Since):
            found.add(value.since)
        elif isinstance(value, BaseModel):
            for name in type(value).model_fields:
                walk(getattr(value, name))
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)

    walk(spec.capabilities)
    return sorted(found, key=NosVersion)


def releases(platform: str, oracle_releases: Iterable[str] = ()) -> list[str | None]:
    """None (newest) first, then the record's gate releases and the oracle's, each once."""
    named = sorted({*gate_releases(platform), *oracle_releases}, key=NosVersion)
    return [None, *named]


def platforms() -> tuple[str, ...]:
    return platform_names()


# --- forcing an intent onto a platform -------------------------------------------------------------------


@cache
def _example(name: str) -> dict[str, Any]:
    with (INTENTS / name).open(encoding="utf-8") as fh:
        data: dict[str, Any] = yaml.safe_load(fh)
    return data


def _fit_hash_fields(fields: list[str], caps: Capabilities) -> list[str]:
    kept = [f for f in fields if f in caps.hashes]
    if "rocev2_dest_qp" in kept and caps.qp_hash_companions is not None:
        kept = [f for f in kept if f == "rocev2_dest_qp" or f in caps.qp_hash_companions]
    for a, b in caps.hash_field_pairs:
        if (a in kept) != (b in kept):
            kept = [f for f in kept if f not in (a, b)]
    kept += [f for f in sorted(caps.hash_fields_required) if f not in kept]
    return kept


def forced_intent(example: str, platform: str, release: str | None) -> dict[str, Any]:
    """The example's data with every tier on `platform` at `release`, adapted to that release's capabilities."""
    data = deepcopy(_example(example))
    caps = capabilities_for(platform, release)
    for tier in TIERS:
        if tier in data["topology"]:
            data["topology"][tier]["platform"] = platform
            data["topology"][tier]["os_version"] = release
    lb = data.setdefault("load_balancing", {})
    if "hash_fields" in lb:
        lb["hash_fields"] = _fit_hash_fields(lb["hash_fields"], caps)
    for knob in ("adaptive_routing", "packet_spraying"):
        if lb.get(knob) and not getattr(caps, knob):
            lb[knob] = False
    if "hash_seed" in lb and not caps.hash_seed:
        del lb["hash_seed"]
    qos = data.setdefault("qos", {})
    pfc = qos.setdefault("pfc", {})
    watchdog = pfc.get("watchdog", {})
    if watchdog is not None:
        if caps.watchdog is None:
            pfc["watchdog"] = None
        elif watchdog.get("action", "drop") not in caps.watchdog_actions:
            watchdog["action"] = sorted(caps.watchdog_actions)[0]
    if qos.get("trust") == "pcp" and not caps.trust_pcp:
        qos["trust"] = "dscp"
    if not caps.explicit_headroom and isinstance(qos.get("buffers"), dict):
        qos["buffers"].pop("headroom", None)
    if not caps.ecn_weight:
        for cls in qos.get("classes", []):
            if isinstance(cls.get("ecn"), dict):
                cls["ecn"]["weight"] = 0
    underlay = data.setdefault("underlay", {})
    if underlay.get("addressing", "unnumbered") == "unnumbered" and not caps.bgp_unnumbered:
        underlay["addressing"] = "p2p31"
    return data


# --- rendering a cell and judging its documents ------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    example: str
    platform: str
    release: str | None
    sample: bool = False
    """Judge a sample of the cell's devices (SAMPLE_PER_ROLE), not all: see sampled()."""

    @property
    def label(self) -> str:
        return f"{self.example.removesuffix('.yaml')}-{self.release or 'newest'}{'-sample' if self.sample else ''}"


def is_pending(example: str) -> bool:
    return example in _PENDING


def sampled(devices: list[DevicePlan]) -> list[DevicePlan]:
    """Per role, the first two devices and the last, in plan order. Devices of a role are rendered by the same
    templates from the same per-role data; what differs between them is what the design allocates by index
    (names, addresses, ASNs, port numbers, peer lists), which grows with the index, so the first and last
    devices hold its extremes (the last pod's last rack: the highest address, ASN, port). What a sample cannot
    see: a value that is wrong only for some device in the middle (nothing in the design allocates that way
    today) and a failure that depends on a device's exact peer count other than the extremes."""
    by_role: dict[str, list[DevicePlan]] = {}
    for dev in devices:
        by_role.setdefault(dev.role, []).append(dev)
    chosen: list[DevicePlan] = []
    for role_devices in by_role.values():
        picks = [*role_devices[:2], role_devices[-1]]
        chosen += [d for i, d in enumerate(picks) if all(d is not e for e in picks[:i])]
    return chosen


class Refusal(Exception):
    """netfab would not design or render this cell (the reason is its own message): no document to judge."""


def cell_documents(cell: Cell) -> Iterator[tuple[str, str]]:
    """(path, text) of every file the cell renders, one device at a time (a clos3 cell's text is ~100 MB, so it
    is never held whole). Raises Refusal when netfab refuses the intent or a device."""
    try:
        plan = design(Intent.model_validate(forced_intent(cell.example, cell.platform, cell.release)))
    except Exception as exc:
        raise Refusal(_reason(exc)) from exc
    devices = list(plan.devices.values())
    for dev in sampled(devices) if cell.sample else devices:
        try:
            outputs = render_device(dev)
        except Exception as exc:
            raise Refusal(_reason(exc)) from exc
        yield from outputs.items()


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:300]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
