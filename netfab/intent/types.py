"""The intent's shared vocabulary: constrained types reused by every model.

Quantities that have units in the real world (bytes, speeds, durations, rates) must be written WITH their
unit in the intent ("150KB", "400G", "200ms", "5Mbps"): a bare 150 next to an ECN threshold is exactly the
kind of ambiguity (cells? KB? KiB?) that puts a lossless fabric into PFC storms. Values are normalised to one
internal unit (bytes, Gb/s, microseconds, Mb/s) so later stages never convert again.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, GetCoreSchemaHandler, WithJsonSchema
from pydantic_core import core_schema

Dscp = Annotated[int, Field(ge=0, le=63, description="DSCP code point, 0-63")]
Priority = Annotated[int, Field(ge=0, le=7, description="802.1p priority / switch priority / traffic class, 0-7")]
Percent = Annotated[float, Field(ge=0, le=100, description="percent, 0-100")]
# A rate cap: above 0, since a 0 % shaper drops every packet of the queue, never what a cap means.
ShaperPercent = Annotated[float, Field(gt=0, le=100, description="percent of the port speed, above 0, at most 100")]
Asn = Annotated[int, Field(ge=1, le=4294967294, description="BGP AS number (2- or 4-byte)")]
Mtu = Annotated[int, Field(ge=1280, le=9216, description="interface MTU in bytes (L3), 1280-9216")]
Count = Annotated[int, Field(ge=1, le=1_000_000)]

_NAME_RE = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$"
# Names end up in file names, Nornir inventory keys and CLI; restrict them so they can never escape an
# output directory ("../x") or break a config line.
Name = Annotated[str, Field(pattern=_NAME_RE, description="letters, digits, '_', '-', '.'; starts alnum")]


def _registered_platform(value: Any) -> str:
    # The registry, not a fixed enum: a platform is whatever has a record (netfab/platforms/, plus
    # NETFAB_PLATFORMS_PATH), so adding one needs no code change here.
    from netfab.platforms import platform_names

    names = platform_names()
    if not isinstance(value, str) or value not in names:
        raise ValueError(f"unknown platform {value!r}; known: {', '.join(names)}")
    return value


class _PlatformJsonSchema:
    """The schema lists the platforms registered when it is generated (netfab schema)."""

    @classmethod
    def __get_pydantic_json_schema__(cls, core: Any, handler: Any) -> dict[str, Any]:
        from netfab.platforms import platform_names

        return {"enum": list(platform_names()), "title": "Platform", "type": "string"}


Platform = Annotated[str, BeforeValidator(_registered_platform), _PlatformJsonSchema]
"""A platform name with a record in the registry ('arista_eos', 'sonic', ...)."""


class HashField(StrEnum):
    """ECMP hash inputs, named vendor-neutrally; renderers map them to each platform's keywords."""

    SRC_IP = "src_ip"
    DST_IP = "dst_ip"
    IP_PROTOCOL = "ip_protocol"
    SRC_PORT = "src_port"
    DST_PORT = "dst_port"
    IPV6_FLOW_LABEL = "ipv6_flow_label"
    INGRESS_PORT = "ingress_port"
    INNER_SRC_IP = "inner_src_ip"
    INNER_DST_IP = "inner_dst_ip"
    INNER_IP_PROTOCOL = "inner_ip_protocol"
    INNER_SRC_PORT = "inner_src_port"
    INNER_DST_PORT = "inner_dst_port"
    ROCE_DEST_QP = "rocev2_dest_qp"  # RoCEv2 BTH destination queue pair: entropy per QP
    ROCE_OPCODE = "rocev2_opcode"


# --- quantities with units -------------------------------------------------------------------------------


class _UnitDefault(int):
    """A model default written with its unit (`us("4us")`), parsed once at import.

    It is the int the field holds, so the default is typed like the field, and it keeps the text so the JSON
    Schema shows the default as a user writes it ("4us", not 4). The parsers accept it where they refuse a
    bare number: only code can make one, never a YAML file.
    """

    text: str

    def __new__(cls, value: int, text: str) -> _UnitDefault:
        obj = super().__new__(cls, value)
        obj.text = text
        return obj

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        # Only reached when the JSON Schema encodes a field's default: the fields themselves are typed int.
        return core_schema.is_instance_schema(
            cls, serialization=core_schema.plain_serializer_function_ser_schema(lambda v: v.text)
        )


_BYTE_UNITS = {"B": 1, "KB": 1000, "KIB": 1024, "MB": 1000**2, "MIB": 1024**2, "GB": 1000**3, "GIB": 1024**3}
_BYTES_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMG]i?B|B)\s*$", re.IGNORECASE)


def _parse_bytes(value: Any) -> Any:
    if isinstance(value, _UnitDefault):
        return int(value)
    if isinstance(value, bool):
        raise ValueError("a size needs a number and a unit, e.g. 150KB")
    if isinstance(value, int | float):
        raise ValueError(f"size {value!r} has no unit; write it with one, e.g. '{value}KB' or '{value}B'")
    if isinstance(value, str):
        m = _BYTES_RE.match(value)
        if not m:
            raise ValueError(f"cannot read size {value!r}; use B, KB, KiB, MB or MiB (KB = 1000 B, KiB = 1024 B)")
        # 'kb' is ambiguous with kilobits in networking, so units are case-sensitive except for the i.
        unit = m.group(2)
        if unit[0] in "kmg" or unit[-1] == "b":
            raise ValueError(f"size {value!r}: write the unit as B, KB, KiB, MB or MiB ('kb' reads as kilobits)")
        return round(float(m.group(1)) * _BYTE_UNITS[unit.upper()])
    return value


ByteSize = Annotated[
    int,
    BeforeValidator(_parse_bytes),
    Field(ge=0),
    WithJsonSchema({"type": "string", "pattern": r"^\d+(\.\d+)?\s*([KMG]i?B|B)$", "examples": ["150KB", "1.5MB"]}),
]

_SPEED_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([GT])(?:bps|b/s)?\s*$", re.IGNORECASE)


def _parse_speed(value: Any) -> Any:
    if isinstance(value, _UnitDefault):
        return int(value)
    if isinstance(value, bool | int | float):
        raise ValueError(f"speed {value!r} has no unit; write e.g. '400G'")
    if isinstance(value, str):
        m = _SPEED_RE.match(value)
        if not m:
            raise ValueError(f"cannot read speed {value!r}; write e.g. 100G, 400G, 800G or 1.6T")
        gbps = float(m.group(1)) * (1000 if m.group(2).upper() == "T" else 1)
        if gbps not in (1, 10, 25, 40, 50, 100, 200, 400, 800, 1600):
            raise ValueError(f"{value!r} is not an Ethernet port speed (10G..1.6T)")
        return int(gbps)
    return value


SpeedGbps = Annotated[
    int,
    BeforeValidator(_parse_speed),
    WithJsonSchema({"type": "string", "pattern": r"^\d+(\.\d+)?[GT]$", "examples": ["400G", "800G"]}),
]

_DURATION_UNITS = {"us": 1, "µs": 1, "ms": 1000, "s": 1_000_000}
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|µs|ms|s)\s*$")


def _parse_duration(value: Any) -> Any:
    if isinstance(value, _UnitDefault):
        return int(value)
    if isinstance(value, bool | int | float):
        raise ValueError(f"duration {value!r} has no unit; write e.g. '200ms' or '4us'")
    if isinstance(value, str):
        m = _DURATION_RE.match(value)
        if not m:
            raise ValueError(f"cannot read duration {value!r}; use us, ms or s (e.g. 200ms)")
        return round(float(m.group(1)) * _DURATION_UNITS[m.group(2)])
    return value


Microseconds = Annotated[
    int,
    BeforeValidator(_parse_duration),
    Field(ge=0),
    WithJsonSchema({"type": "string", "pattern": r"^\d+(\.\d+)?\s*(us|µs|ms|s)$", "examples": ["200ms", "4us"]}),
]

_RATE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([MG])bps\s*$")


def _parse_rate(value: Any) -> Any:
    if isinstance(value, _UnitDefault):
        return int(value)
    if isinstance(value, bool | int | float):
        raise ValueError(f"rate {value!r} has no unit; write e.g. '5Mbps'")
    if isinstance(value, str):
        m = _RATE_RE.match(value)
        if not m:
            raise ValueError(f"cannot read rate {value!r}; write e.g. 5Mbps or 1Gbps")
        return round(float(m.group(1)) * (1000 if m.group(2) == "G" else 1))
    return value


Mbps = Annotated[
    int,
    BeforeValidator(_parse_rate),
    Field(ge=0),
    WithJsonSchema({"type": "string", "pattern": r"^\d+(\.\d+)?\s*[MG]bps$", "examples": ["5Mbps", "1Gbps"]}),
]


def size(text: str) -> int:
    """A ByteSize default written with its unit: ``size("150KB")`` is 150000."""
    return _UnitDefault(_parse_bytes(text), text)


def gbps(text: str) -> int:
    """A SpeedGbps default written with its unit: ``gbps("400G")`` is 400."""
    return _UnitDefault(_parse_speed(text), text)


def us(text: str) -> int:
    """A Microseconds default written with its unit: ``us("200ms")`` is 200000."""
    return _UnitDefault(_parse_duration(text), text)


def mbps(text: str) -> int:
    """An Mbps default written with its unit: ``mbps("5Mbps")`` is 5."""
    return _UnitDefault(_parse_rate(text), text)


def _parse_ratio(value: Any) -> Any:
    # Oversubscription is downlink:uplink capacity, read in that order: "7:1" is 7 times more server-facing
    # than uplink capacity, "1:2" an undersubscribed tier (twice the uplink capacity, e.g. a storage leaf).
    if isinstance(value, bool):
        raise ValueError("oversubscription is a ratio like '1:1' or '7:1'")
    if isinstance(value, int):
        # YAML 1.1 reads an unquoted 1:1 as the base-60 integer 61; the loader keeps such scalars as strings,
        # so an int here was written as a plain number.
        raise ValueError(f"oversubscription {value} is not a ratio; write it quoted, e.g. '{value}:1'")
    if isinstance(value, float):
        return value
    if isinstance(value, str):
        m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)\s*$", value)
        if not m or float(m.group(1)) == 0 or float(m.group(2)) == 0:
            raise ValueError(f"cannot read ratio {value!r}; write e.g. '1:1' or '7:1'")
        a, b = float(m.group(1)), float(m.group(2))
        return a / b
    return value


Oversubscription = Annotated[
    float,
    BeforeValidator(_parse_ratio),
    Field(gt=0),
    WithJsonSchema({"type": "string", "pattern": r"^\d+(\.\d+)?:\d+(\.\d+)?$", "examples": ["1:1", "7:1"]}),
]
