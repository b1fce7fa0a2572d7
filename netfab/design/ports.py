"""Front-panel port numbers -> each platform's interface names, as its record states them (naming.port).

Port numbers are 1-based as on the faceplate.
"""

from __future__ import annotations

from collections.abc import Callable

from netfab.platforms import platform_spec


def port_namer(platform: str) -> Callable[[int], str]:
    """The record's naming function for `platform`. The expander binds it once per platform: looking the
    record up per link end (~80,000 times for clos3-24k) cost 0.3 s of every lint and build."""
    return platform_spec(platform).naming.port.name


def port_name(platform: str, port: int) -> str:
    return port_namer(platform)(port)
