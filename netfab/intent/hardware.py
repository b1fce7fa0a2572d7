"""The intent's hardware: `topology.<tier>.model` (a catalogue entry) and `topology.<tier>.hardware`
(explicit figures for hardware the catalogue does not list, or corrections to an entry).

`tier_switch_model(tier)` is THE accessor for "the switch model of this tier": the catalogue entry with the
intent's overrides applied (each overridden figure tagged `declared`, source `intent`), a model built from
the overrides alone, or None when the tier names no hardware at all. The expander stores the same object
on every DevicePlan of the tier (`DevicePlan.switch_model`), so templates, lint, analyze and other stages
read one answer.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BeforeValidator, Field

from netfab.intent.base import IntentModel
from netfab.intent.types import ByteSize, Count, SpeedGbps
from netfab.platforms.hardware import Architecture, Asic, Buffer, Figure, PortGroup, Source, SwitchModel

if TYPE_CHECKING:
    from netfab.intent.topology import SwitchTier

DECLARED = "intent"
"""The source key every intent-declared figure cites."""


def _catalogued(value: Any) -> str:
    from netfab.platforms.catalogue import did_you_mean, model_names

    names = model_names()
    if not isinstance(value, str) or value not in names:
        hint = did_you_mean(str(value), names) if isinstance(value, str) else ""
        raise ValueError(
            f"unknown switch model {value!r}{hint}; `netfab schema` lists the catalogue "
            "(netfab/platforms/models/), or describe unlisted hardware under `hardware:`"
        )
    return value


class _ModelJsonSchema:
    """The schema lists the catalogue's names when it is generated, so editors complete them."""

    @classmethod
    def __get_pydantic_json_schema__(cls, core: Any, handler: Any) -> dict[str, Any]:
        from netfab.platforms.catalogue import model_names

        return {"enum": list(model_names()), "title": "SwitchModelName", "type": "string"}


SwitchModelName = Annotated[str, BeforeValidator(_catalogued), _ModelJsonSchema]
"""A catalogue entry's name ('arista-7060x6-64pe', 'sonic-mellanox-sn5600-o128')."""


class HardwareOverride(IntentModel):
    """Figures for hardware the catalogue does not list (or corrections to the named model). Each is taken as
    declared: netfab cannot check it, so write what the vendor's datasheet says."""

    architecture: Architecture | None = None
    """ASIC line: strata (Tomahawk/Trident), sand (Jericho), spectrum, express, cloudscale, software."""
    asic: str | None = Field(default=None, min_length=2, max_length=60)
    """ASIC family as reports should name it ('Tomahawk 5')."""
    buffer: ByteSize | None = None
    """Shared packet buffer headroom and ECN are rated against ('64MB')."""
    cell_bytes: int | None = Field(default=None, ge=16, le=4096)
    ports: Count | None = None
    """Faceplate ports (unsplit)."""
    max_speed: SpeedGbps | None = None
    """Fastest port speed ('800G')."""
    breakouts: tuple[str, ...] | None = None
    """Breakout modes of a port ('2x400G', '4x200G')."""
    deep_buffer: bool | None = None


def _declared(value: Any) -> Figure[Any]:
    return Figure(value=value, source=DECLARED, confidence="declared")


@cache
def _resolve(name: str | None, override: HardwareOverride | None, platform: str, tier_ports: int) -> SwitchModel:
    from netfab.platforms.catalogue import switch_model

    o = override or HardwareOverride()
    if name is not None:
        base = switch_model(name)
    else:
        # Unlisted hardware: only what the intent declares; the rest stays unknown (None), never filled in.
        base = SwitchModel(
            name="unlisted",
            vendor="unlisted",
            title="unlisted hardware (topology hardware: overrides)",
            platforms=(platform,),
            asic=Asic(vendor="unlisted", family=_declared(o.asic or "unlisted ASIC")),
            buffer=Buffer(note="declared in the intent"),
            deep_buffer=_declared(bool(o.deep_buffer)),
            ports=(
                PortGroup(
                    count=o.ports or tier_ports,
                    max_speed_gbps=o.max_speed or 400,
                    cage="unlisted",
                    breakouts=o.breakouts or (),
                    source=DECLARED,
                    confidence="declared",
                ),
            ),
            sources={DECLARED: Source(title="the intent's topology hardware: section", url="intent")},
        )
    if override is None:
        return base
    declared = Source(title="the intent's topology hardware: section", url="intent")
    update: dict[str, Any] = {"sources": {**base.sources, DECLARED: declared}}
    asic = base.asic
    if o.asic is not None:
        asic = asic.model_copy(update={"family": _declared(o.asic)})
    if o.architecture is not None:
        asic = asic.model_copy(update={"architecture": _declared(o.architecture)})
    update["asic"] = asic
    if o.buffer is not None or o.cell_bytes is not None:
        buf = base.buffer
        if o.buffer is not None:
            buf = buf.model_copy(update={"shared_bytes": _declared(int(o.buffer)), "total_bytes": None})
        if o.cell_bytes is not None:
            buf = buf.model_copy(update={"cell_bytes": _declared(o.cell_bytes)})
        update["buffer"] = buf
    if o.deep_buffer is not None:
        update["deep_buffer"] = _declared(o.deep_buffer)
    if name is not None and (o.ports is not None or o.max_speed is not None or o.breakouts is not None):
        first = base.ports[0]
        group = first.model_copy(
            update={
                "count": o.ports or base.port_count,
                "max_speed_gbps": o.max_speed or base.max_speed_gbps,
                "breakouts": o.breakouts if o.breakouts is not None else first.breakouts,
                "source": DECLARED,
                "confidence": "declared",
            }
        )
        update["ports"] = (group,)
    return base.model_copy(update=update)


def tier_switch_model(tier: SwitchTier) -> SwitchModel | None:
    """The switch model of a tier: its catalogue entry with `hardware:` overrides applied, a model made of the
    overrides alone, or None when the tier names neither (then nothing hardware-specific may be assumed)."""
    name: str | None = getattr(tier, "model", None)
    override: HardwareOverride | None = getattr(tier, "hardware", None)
    if name is None and override is None:
        return None
    return _resolve(name, override, str(tier.platform), tier.ports)


if TYPE_CHECKING:
    from netfab.capabilities import BufferData


def tier_buffer(tier: SwitchTier) -> tuple[BufferData, str]:
    """The buffer figures lint and analyze rate a tier against, and their basis:
    - 'model': the tier's switch model states them (with its sources);
    - 'declared': the intent's hardware: section does;
    - 'not public': the model is named but its buffer is not public: nothing is rated (shared_bytes None);
    - 'planning figure, no model named': the platform record's planning ASIC, labelled as such.
    The queue share and MAC/PHY allowance stay the platform record's (properties of its buffer model)."""
    from netfab.capabilities import capabilities_for

    caps = capabilities_for(tier.platform, tier.os_version)
    model = tier_switch_model(tier)
    if model is None:
        label = f"{caps.buffer.asic} (platform planning figure: no topology model named)"
        return caps.buffer.model_copy(update={"asic": label}), "planning figure, no model named"
    buffer = caps.buffer_of(model)
    figure = model.buffer.shared_bytes or model.buffer.total_bytes
    basis = "not public" if figure is None else ("declared" if figure.confidence == "declared" else "model")
    return buffer, basis


__all__ = ["DECLARED", "HardwareOverride", "SwitchModelName", "tier_buffer", "tier_switch_model"]
