"""Per-platform capability data (capabilities/<platform>.yaml) and its lookup by platform and NOS release.

`capabilities_for("arista_eos", "4.33.1F")` reads the platform's file once per process and resolves it for
that release; both steps are cached, because lint asks once per tier and render will ask once per device.
"""

from __future__ import annotations

from functools import cache

from netfab.capabilities.model import (
    BufferData,
    Capabilities,
    EcnUnit,
    PercentKnob,
    PlatformData,
    Since,
    TimerLimit,
    WatchdogAction,
    WatchdogData,
)
from netfab.capabilities.version import NosVersion, at_least, parse_version
from netfab.core.paths import capabilities_dir
from netfab.intent.types import Platform


class CapabilityDataError(RuntimeError):
    """A capability file is missing or malformed: a packaging bug, not a user error."""


@cache
def platform_data(platform: str) -> PlatformData:
    import yaml
    from pydantic import ValidationError

    name = Platform(platform).value
    path = capabilities_dir() / f"{name}.yaml"
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        data = PlatformData.model_validate(raw)
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise CapabilityDataError(f"capability data {path}: {exc}") from exc
    if data.platform.value != name:
        raise CapabilityDataError(f"{path} describes {data.platform.value}, not {name}")
    return data


@cache
def capabilities_for(platform: str | Platform, os_version: str | None = None) -> Capabilities:
    """What `platform` can do at `os_version`. An omitted or unreadable version means the newest release."""
    return platform_data(Platform(platform).value).resolve(os_version)


def clear_cache() -> None:
    """For tests that swap capability files."""
    platform_data.cache_clear()
    capabilities_for.cache_clear()


__all__ = [
    "BufferData",
    "Capabilities",
    "CapabilityDataError",
    "EcnUnit",
    "NosVersion",
    "PercentKnob",
    "PlatformData",
    "Since",
    "TimerLimit",
    "WatchdogAction",
    "WatchdogData",
    "at_least",
    "capabilities_for",
    "clear_cache",
    "parse_version",
    "platform_data",
]
