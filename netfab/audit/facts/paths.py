"""Fact paths: how one device's path becomes a fleet-wide kind.

``interface[swp1].ecn[queue=3].kmin_bytes`` on leaf2 and ``interface[swp7].ecn[queue=3].kmin_bytes`` on leaf9
are the same kind of drift: interface names, neighbor keys and prefixes are device-specific, queue numbers,
DSCP values and profile names are not.
"""

from __future__ import annotations

import re

_DEVICE_SPECIFIC = re.compile(r"\b(interface|neighbor|network)\[[^\]]*\]")
_KEY = re.compile(r"\b(interface|neighbor|network)\[([^\]]*)\]")


def normalise(path: str) -> str:
    return _DEVICE_SPECIFIC.sub(r"\1[*]", path)


def device_keys(path: str) -> list[str]:
    """The device-specific keys of a path, e.g. ['swp1'] for interface[swp1].mtu."""
    return [m.group(2) for m in _KEY.finditer(path)]


def under(path: str, container: str) -> bool:
    return path.startswith(container) and path[len(container) : len(container) + 1] == "."
