"""Front-panel port numbers -> each platform's interface names.

Data, not branches: one format per platform. Port numbers are 1-based as on the faceplate.
"""

from __future__ import annotations

from collections.abc import Callable

# SONiC names ports by first SerDes lane; 8 lanes per 400G/800G OSFP port is the common AI-switch layout.
_SONIC_LANES_PER_PORT = 8

PORT_NAMES: dict[str, Callable[[int], str]] = {
    "arista_eos": lambda n: f"Ethernet{n}/1",
    "nvidia_cumulus": lambda n: f"swp{n}",
    "sonic": lambda n: f"Ethernet{(n - 1) * _SONIC_LANES_PER_PORT}",
    "cisco_nxos": lambda n: f"Ethernet1/{n}",
    "juniper_junos": lambda n: f"et-0/0/{n - 1}",
    "frr": lambda n: f"swp{n}",
}

LOOPBACK_NAMES: dict[str, str] = {
    "arista_eos": "Loopback0",
    "nvidia_cumulus": "lo",
    "sonic": "Loopback0",
    "cisco_nxos": "loopback0",
    "juniper_junos": "lo0.0",
    "frr": "lo",
}


def port_name(platform: str, port: int) -> str:
    return PORT_NAMES[platform](port)
