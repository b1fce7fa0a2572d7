"""netfab's NAPALM drivers, one driver class per module: frr (Linux + FRR), nvue (nvidia_cumulus), sonic.

Getting a driver class:
    import netfab.deploy.drivers                       # registers the napalm_netfab_* names (below)
    napalm.get_network_driver("netfab_frr")            # FRRDriver   (also "netfab_nvue", "netfab_sonic")
    netfab.deploy.drivers.driver_class("sonic")        # by netfab platform name

NAPALM 5.2 only imports `custom_napalm.<name>`, `napalm.<name>` or a top-level `napalm_<name>` module (dotted
paths such as "netfab.deploy.drivers.frr" are rejected), so importing this package aliases each driver
module as `napalm_netfab_<name>` in sys.modules. Nornir inventories can then say `platform: netfab_frr`.
"""

from __future__ import annotations

import importlib
import sys

from napalm.base.base import NetworkDriver as _NetworkDriver

PLATFORM_MODULES = {
    "frr": "netfab.deploy.drivers.frr",
    "nvidia_cumulus": "netfab.deploy.drivers.nvue",
    "sonic": "netfab.deploy.drivers.sonic",
}
NAPALM_NAMES = {"netfab_frr": "frr", "netfab_nvue": "nvidia_cumulus", "netfab_sonic": "sonic"}


def driver_class(platform: str) -> type[_NetworkDriver]:
    """The driver for a netfab platform name ("frr", "nvidia_cumulus", "sonic")."""
    import napalm

    for napalm_name, plat in NAPALM_NAMES.items():
        if plat == platform:
            return napalm.get_network_driver(napalm_name)
    raise KeyError(f"no netfab NAPALM driver for platform {platform!r}; have {sorted(PLATFORM_MODULES)}")


def register_napalm_names() -> None:
    """Idempotent: make `napalm.get_network_driver("netfab_<name>")` find the driver modules."""
    for napalm_name, platform in NAPALM_NAMES.items():
        sys.modules.setdefault(f"napalm_{napalm_name}", importlib.import_module(PLATFORM_MODULES[platform]))


register_napalm_names()
