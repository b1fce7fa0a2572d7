"""Per-platform capability data (the `capabilities:` section of each platform record) resolved for one release.

`capabilities_for("arista_eos", "4.33.1F")` resolves the record's data for that release; cached, because lint
asks once per tier and render once per device.
"""

from __future__ import annotations

from functools import cache

from netfab.capabilities.model import (
    BufferData,
    Capabilities,
    CapabilityData,
    EcnUnit,
    Gate,
    PercentKnob,
    Since,
    TimerLimit,
    WatchdogAction,
    WatchdogData,
)
from netfab.capabilities.version import NosVersion, at_least, parse_version


@cache
def _capabilities_for(env_key: str, platform: str, os_version: str | None) -> Capabilities:
    from netfab.platforms import platform_spec

    return platform_spec(platform).capabilities.resolve(platform, os_version)


def capabilities_for(platform: str, os_version: str | None = None) -> Capabilities:
    """What `platform` can do at `os_version`. An omitted or unreadable version means the newest release."""
    import os

    from netfab.platforms import ENV_PATH

    # Keyed by the registry's source too, so a test that adds platforms in-process never sees a stale answer.
    return _capabilities_for(os.environ.get(ENV_PATH, ""), str(platform), os_version)


def clear_cache() -> None:
    """For tests that swap platform records."""
    _capabilities_for.cache_clear()


__all__ = [
    "BufferData",
    "Capabilities",
    "CapabilityData",
    "EcnUnit",
    "Gate",
    "NosVersion",
    "PercentKnob",
    "Since",
    "TimerLimit",
    "WatchdogAction",
    "WatchdogData",
    "at_least",
    "capabilities_for",
    "clear_cache",
    "parse_version",
]
