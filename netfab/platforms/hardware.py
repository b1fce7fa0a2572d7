"""One switch model as data: the shape of netfab/platforms/models/<name>.yaml (the catalogue).

A model is hardware: the ASIC, the packet buffer, the ports and their breakouts, and, for SONiC, the hwsku's
port map (lanes, alias, index of every port). Everything hardware-dependent in netfab (EOS syntax family,
SONiC PORT rows, buffer budgets in lint and analyze) reads it instead of guessing.

Every figure carries where it comes from (`source`, a key of the model's `sources`) and how sure it is
(`confidence`). A figure that is not public is left out (None), never filled with a plausible number: the
consumers then refuse or say "not public" instead of rating a design against an invented buffer.
"""

from __future__ import annotations

import re
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

MODEL_NAME = r"^[a-z0-9][a-z0-9.-]{1,62}$"
"""Catalogue names: the file stem, lower case (`arista-7060x6-64pe`, `sonic-mellanox-sn5600-o128`)."""

Confidence = Literal["datasheet", "vendor_doc", "upstream_code", "secondary", "derived", "declared"]
"""How a figure is known:
- datasheet: the vendor's datasheet or hardware manual states it;
- vendor_doc: other vendor documentation (white paper, configuration guide, press release);
- upstream_code: the NOS's own public data (a SONiC hwsku's port_config.ini or buffer template);
- secondary: third-party material (analysts, community pages): use with care;
- derived: computed from figures above (the computation is in the figure's note);
- declared: written in the user's intent (hardware overrides), not checked against anything."""

Architecture = Literal["strata", "sand", "spectrum", "express", "cloudscale", "software"]
"""The ASIC line, as it changes a NOS's configuration grammar and buffer model: Broadcom StrataXGS
(Tomahawk/Trident: shallow shared buffer), Broadcom DNX (Jericho/Qumran: VoQ, deep HBM buffer), NVIDIA
Spectrum, Juniper Express, Cisco Cloud Scale, or software forwarding (Linux)."""

T = TypeVar("T")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Source(_Frozen):
    title: str = Field(min_length=3)
    url: str = Field(pattern=r"^(https?://\S+|intent)$")
    """Where to read it; 'intent' for figures the user declared."""


class Figure(_Frozen, Generic[T]):
    """One fact with its provenance."""

    value: T
    source: str = Field(min_length=1)
    """A key of the model's `sources`."""
    confidence: Confidence
    note: str = ""


class Asic(_Frozen):
    vendor: str = Field(min_length=2)
    family: Figure[str]
    """'Tomahawk 5', 'Jericho2', 'Spectrum-4', 'Express 5', ...: what analyze names."""
    architecture: Figure[Architecture] | None = None
    """None only for unlisted hardware whose intent does not declare it: syntax that depends on it is
    refused."""
    count: Figure[int] | None = None
    """Forwarding ASICs in the system (chassis: per line card times cards); None = one or not public."""


class Buffer(_Frozen):
    """Packet buffer of the whole system, in bytes. None = not public (say so in `note`)."""

    total_bytes: Figure[int] | None = None
    """All packet memory (on-chip plus HBM for deep-buffer ASICs)."""
    shared_bytes: Figure[int] | None = None
    """The shared pool lossless traffic competes for (what headroom and ECN are rated against); when only
    a total is public, consumers fall back to it."""
    headroom_pool_bytes: Figure[int] | None = None
    """A shared headroom (xoff) pool, where the ASIC has one."""
    cell_bytes: Figure[int] | None = None
    note: str = ""

    @property
    def rating_bytes(self) -> int | None:
        """The figure budgets are rated against: the shared pool, else the total, else None (not public)."""
        figure = self.shared_bytes or self.total_bytes
        return figure.value if figure is not None else None


BREAKOUT = re.compile(r"^(?P<n>[1-8])x(?P<speed>\d+)G$")


class PortGroup(_Frozen):
    """Faceplate ports of one kind (64 x 800G OSFP)."""

    count: int = Field(ge=1, le=4096)
    max_speed_gbps: int = Field(ge=1, le=3200)
    cage: str = Field(min_length=3)
    """OSFP, QSFP-DD, QSFP112, SFP28, ... (a chassis: the line card's cages)."""
    breakouts: tuple[str, ...] = ()
    """Modes a cage can be split into ('2x400G', '4x200G', '8x100G'); the unsplit mode is implied."""
    source: str
    confidence: Confidence

    @field_validator("breakouts")
    @classmethod
    def _breakout_syntax(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [b for b in value if not BREAKOUT.match(b)]
        if bad:
            raise ValueError(f"breakout modes are written NxSPEEDG ('2x400G'): {bad}")
        return value

    def speeds(self) -> set[int]:
        """Port speeds (Gb/s) one logical port of this group can run at, unsplit or broken out."""
        out = {self.max_speed_gbps}
        for mode in self.breakouts:
            match = BREAKOUT.match(mode)
            assert match is not None  # validated
            out.add(int(match["speed"]))
        return out

    def logical_ports(self, speed_gbps: int) -> int:
        """How many logical ports of `speed_gbps` the group gives (its densest mode at that speed); 0 = none."""
        best = 1 if self.max_speed_gbps == speed_gbps else 0
        for mode in self.breakouts:
            match = BREAKOUT.match(mode)
            assert match is not None
            if int(match["speed"]) == speed_gbps:
                best = max(best, int(match["n"]))
        return best * self.count


class PortRow(_Frozen):
    """One row of a SONiC hwsku's port_config.ini: the port as the NOS knows it."""

    name: str = Field(pattern=r"^Ethernet\d+$")
    lanes: tuple[int, ...] = Field(min_length=1, max_length=16)
    alias: str = Field(min_length=1)
    index: int = Field(ge=0)
    speed_gbps: int = Field(ge=1)
    withheld: str = ""
    """Non-empty: upstream's row is defective (the reason); netfab never places a link on it."""


class Hwsku(_Frozen):
    """A SONiC hwsku: the port map one breakout mode gives (device/<vendor>/<platform>/<hwsku>/)."""

    name: str = Field(min_length=3)
    """DEVICE_METADATA hwsku ('Mellanox-SN5600-O128')."""
    platform: str = Field(min_length=3)
    """DEVICE_METADATA platform ('x86_64-nvidia_sn5600-r0')."""
    breakout_mode: str = Field(min_length=2)
    source: str
    confidence: Confidence
    ports: tuple[PortRow, ...] = Field(min_length=1)
    """In port_config.ini order. netfab's faceplate-order port N is the N-th row."""

    @model_validator(mode="before")
    @classmethod
    def _from_port_config(cls, data: object) -> object:
        # The catalogue keeps upstream's port_config.ini rows as text (`port_config:`), so a reviewer can
        # diff them against the cited file; `withheld: {name: reason}` marks rows upstream got wrong.
        if not isinstance(data, dict) or "port_config" not in data:
            return data
        data = dict(data)
        withheld = data.pop("withheld", {}) or {}
        rows = []
        for line in str(data.pop("port_config")).splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            cols = line.split()
            if len(cols) < 5:
                raise ValueError(f"port_config row needs name, lanes, alias, index, speed: {line!r}")
            name, lanes, alias, index, speed = cols[:5]
            rows.append(
                {
                    "name": name,
                    "lanes": tuple(int(x) for x in lanes.split(",")),
                    "alias": alias,
                    "index": int(index),
                    "speed_gbps": int(speed) // 1000,
                    "withheld": withheld.get(name, ""),
                }
            )
        unknown = set(withheld) - {r["name"] for r in rows}
        if unknown:
            raise ValueError(f"withheld names rows the port_config does not have: {sorted(unknown)}")
        data["ports"] = tuple(rows)
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Hwsku:
        names = [p.name for p in self.ports]
        if len(set(names)) != len(names):
            raise ValueError(f"hwsku {self.name}: a port name repeats")
        seen: dict[int, str] = {}
        for row in self.ports:
            if row.withheld:
                continue
            for lane in row.lanes:
                if lane in seen:
                    raise ValueError(f"hwsku {self.name}: lane {lane} is in both {seen[lane]} and {row.name}")
                seen[lane] = row.name
        return self

    _by_name: dict[str, PortRow] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: object, /) -> None:
        self._by_name.update((p.name, p) for p in self.ports)

    def usable(self) -> tuple[PortRow, ...]:
        return tuple(p for p in self.ports if not p.withheld)

    def row(self, name: str) -> PortRow | None:
        """The port_config row of interface `name` (templates merge the plan's values into it)."""
        return self._by_name.get(name)


EcnUnitName = Literal["bytes", "kbytes", "mbytes", "cells", "segments", "percent_fill"]


class Features(_Frozen):
    """What the silicon can do for an AI fabric. None = not public / not known: lint then refuses to rely
    on the feature instead of assuming it."""

    adaptive_routing: Figure[bool] | None = None
    """Per-packet or flowlet adaptive routing / dynamic load balancing in hardware."""
    rdma_bth_hash: Figure[bool] | None = None
    """ECMP hashing on the RoCEv2 BTH destination QP."""
    pfc_watchdog_min_detect_us: Figure[int] | None = None
    ecn_units: Figure[tuple[EcnUnitName, ...]] | None = None


class SwitchModel(_Frozen):
    """netfab/platforms/models/<name>.yaml (after `base:` is merged in by the loader)."""

    name: str = Field(pattern=MODEL_NAME)
    vendor: str = Field(min_length=2)
    title: str = Field(min_length=3)
    """How documentation names it ('Arista 7060X6-64PE')."""
    platforms: tuple[str, ...] = Field(min_length=1)
    """The NOS records (netfab/platforms/<name>/) this entry runs under."""
    base: str | None = Field(default=None, pattern=MODEL_NAME)
    """Another entry this one refines (a SONiC hwsku of a box): its fields are the defaults here."""
    asic: Asic
    buffer: Buffer
    deep_buffer: Figure[bool]
    ports: tuple[PortGroup, ...] = Field(min_length=1)
    port_naming: dict[str, str] = {}
    """Per NOS record, a str.format of the faceplate number ({n}) where it differs from the record's own
    naming (broken-out names like 'Ethernet{n}/1' are the record's)."""
    hwsku: Hwsku | None = None
    features: Features = Features()
    sources: dict[str, Source] = Field(min_length=1)
    notes: str = ""

    @model_validator(mode="after")
    def _sources_resolve(self) -> SwitchModel:
        missing = sorted({ref for ref in self._source_refs() if ref not in self.sources})
        if missing:
            raise ValueError(f"model {self.name}: figures cite sources it does not list: {missing}")
        return self

    def _source_refs(self) -> list[str]:
        refs: list[str] = []

        def walk(value: object) -> None:
            if isinstance(value, Figure | PortGroup | Hwsku):
                refs.append(value.source)
            if isinstance(value, BaseModel):
                for field in type(value).model_fields:
                    walk(getattr(value, field))
            elif isinstance(value, tuple):
                for item in value:
                    walk(item)

        for field in ("asic", "buffer", "deep_buffer", "ports", "hwsku", "features"):
            walk(getattr(self, field))
        return refs

    @property
    def port_count(self) -> int:
        """Faceplate ports (unsplit), all groups."""
        return sum(g.count for g in self.ports)

    @property
    def max_speed_gbps(self) -> int:
        return max(g.max_speed_gbps for g in self.ports)

    def logical_ports(self, speed_gbps: int) -> int:
        """Logical ports of `speed_gbps` the box gives, over all groups (broken out where needed). With a
        hwsku, the hwsku's usable rows at that speed or faster: its breakout mode is fixed."""
        if self.hwsku is not None:
            return sum(1 for p in self.hwsku.usable() if p.speed_gbps >= speed_gbps)
        return sum(g.logical_ports(speed_gbps) for g in self.ports)

    def speeds(self) -> set[int]:
        out: set[int] = set()
        for g in self.ports:
            out |= g.speeds()
        return out

    @property
    def asic_label(self) -> str:
        """'Tomahawk 5 (Arista 7060X6-64PE)': how reports name the hardware."""
        return f"{self.asic.family.value} ({self.title})"


__all__ = [
    "Architecture",
    "Asic",
    "Buffer",
    "Confidence",
    "Features",
    "Figure",
    "Hwsku",
    "PortGroup",
    "PortRow",
    "Source",
    "SwitchModel",
]
