"""The Nornir inventory (SimpleInventory files) generated from the plan. It never holds secrets:
credentials come from the environment or an SSH agent/key at deploy time."""

from __future__ import annotations

from typing import Any

import yaml

from netfab.design.plan import FabricPlan
from netfab.platforms import platform_spec

CONNECTION_NAME = "netfab_napalm"


# libyaml's emitter: the pure-Python one spent ~0.5 s on a 1,700-host inventory.
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=120)


def inventory_files(plan: FabricPlan) -> dict[str, str]:
    return dump_inventory(inventory_data(plan))


def dump_inventory(data: dict[str, Any]) -> dict[str, str]:
    """inventory_data's documents as the YAML files they are written to."""
    return {path: _dump(doc) for path, doc in data.items()}


def inventory_data(plan: FabricPlan) -> dict[str, Any]:
    """{relative path: the document dumped there}: everything the inventory files are made of (the build
    digests it to know whether they can have changed)."""
    hosts: dict[str, Any] = {}
    platforms: set[str] = set()
    for dev in plan.devices.values():
        platforms.add(dev.platform)
        data: dict[str, Any] = {"role": dev.role, "asn": dev.asn, "loopback": dev.loopback}
        for key in ("su", "pod", "rack", "rail", "plane"):
            value = getattr(dev, key)
            if value is not None:
                data[key] = value
        hosts[dev.name] = {
            "hostname": dev.mgmt_ip,
            "platform": dev.platform,
            "groups": [f"platform_{dev.platform}", f"role_{dev.role}"],
            "data": data,
        }
    groups: dict[str, Any] = {
        f"platform_{p}": {"connection_options": {CONNECTION_NAME: {"platform": platform_spec(p).driver.napalm}}}
        for p in sorted(platforms)
    }
    for role in ("superspine", "spine", "leaf"):
        groups[f"role_{role}"] = {"data": {"role": role}}
    defaults = {"data": {"fabric": plan.name}}
    return {"inventory/hosts.yaml": hosts, "inventory/groups.yaml": groups, "inventory/defaults.yaml": defaults}
