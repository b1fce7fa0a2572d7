"""Front-panel port numbers -> each platform's interface names, as its record states them (naming.port).

Port numbers are 1-based as on the faceplate.
"""

from __future__ import annotations

from netfab.platforms import platform_spec


def port_name(platform: str, port: int) -> str:
    return platform_spec(platform).naming.port.name(port)
