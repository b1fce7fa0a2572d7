"""netfab's NAPALM drivers, one driver class per module; each platform record names its module and its NAPALM
name (`driver: {napalm: netfab_frr, module: netfab.deploy.drivers.frr}`).

Getting a driver class:
    import netfab.deploy.drivers                       # registers the napalm_netfab_* names (below)
    napalm.get_network_driver("netfab_frr")            # FRRDriver   (any record's netfab_<x> name)
    netfab.deploy.drivers.driver_class(platform)       # by netfab platform name

NAPALM 5.2 only imports `custom_napalm.<name>`, `napalm.<name>` or a top-level `napalm_<name>` module (dotted
paths such as "netfab.deploy.drivers.frr" are rejected), so importing this package aliases each driver
module as `napalm_<napalm name>` in sys.modules. Nornir inventories can then say `platform: netfab_frr`.
"""

from __future__ import annotations

import importlib
import sys

from napalm.base.base import NetworkDriver as _NetworkDriver


def driver_class(platform: str) -> type[_NetworkDriver]:
    """The netfab driver of a platform whose record names one (KeyError otherwise)."""
    from netfab.deploy.connection import resolve_driver
    from netfab.platforms import platform_spec

    driver = platform_spec(platform).driver
    if driver.module is None:
        raise KeyError(f"platform {platform!r} uses NAPALM's own driver {driver.napalm!r}, not a netfab one")
    cls: type[_NetworkDriver] = resolve_driver(driver.napalm)
    return cls


def register_napalm_names() -> None:
    """Idempotent: make `napalm.get_network_driver("netfab_<name>")` find the driver modules."""
    from netfab.platforms import registry

    for spec in registry().specs.values():
        if spec.driver.module is not None:
            sys.modules.setdefault(f"napalm_{spec.driver.napalm}", importlib.import_module(spec.driver.module))


register_napalm_names()
