"""The Nornir inventory (SimpleInventory files) generated from the plan. It never holds secrets:
credentials come from the environment or an SSH agent/key at deploy time."""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from netfab.design.plan import FabricPlan
from netfab.platforms import platform_spec

CONNECTION_NAME = "netfab_napalm"


# libyaml's emitter: the pure-Python one spent ~0.5 s on a 1,700-host inventory.
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _dump(data: Any) -> str:
    """`data` as yaml.dump(sort_keys=True, default_flow_style=False, width=120) writes it, byte for byte.

    Even with libyaml's emitter, PyYAML's representer and serializer run in Python: 0.76 s for a 6,684-host
    inventory. Its documents are nested mappings of names, numbers and short lists, which are written here
    directly; a document holding anything else (a string YAML would quote, an empty mapping, a list of
    mappings, a long key) is handed to PyYAML whole."""
    lines: list[str] = []
    try:
        _block(data, "", lines)
    except (_NotSimple, TypeError):  # TypeError: keys sorted() cannot order, which PyYAML leaves unsorted
        return yaml.dump(data, Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=120)
    lines.append("")
    return "\n".join(lines)


class _NotSimple(Exception):
    """A value _block does not write as PyYAML would: PyYAML writes the document."""


# A plain scalar PyYAML writes as it is (no indicator, space, quote or line break in it) when its resolver also
# reads it back as a string (not a number, bool, null or date): checked per distinct string, then remembered.
_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*")
_STR_TAG = "tag:yaml.org,2002:str"
_RESOLVER = Resolver()
_plain_strings: dict[str, bool] = {}


def _scalar(value: object) -> str:
    kind = type(value)
    if kind is str:
        text: str = value  # type: ignore[assignment]
        plain = _plain_strings.get(text)
        if plain is None:
            if len(_plain_strings) >= 200_000:  # names and addresses of a few fabrics, in one long-lived process
                _plain_strings.clear()
            plain = _plain_strings[text] = (
                len(text) < 128  # a longer key is written as a complex key ("? ...")
                and _PLAIN.fullmatch(text) is not None
                and _RESOLVER.resolve(ScalarNode, text, (True, False)) == _STR_TAG  # type: ignore[no-untyped-call]
            )
        if plain:
            return text
    elif kind is int:
        return str(value)
    elif kind is bool:
        return "true" if value else "false"
    elif value is None:
        return "null"
    raise _NotSimple


def _block(mapping: object, indent: str, lines: list[str]) -> None:
    """A non-empty mapping of scalar keys in block style, keys sorted, nested mappings indented two spaces and
    lists of scalars not indented (PyYAML's defaults)."""
    if type(mapping) is not dict or not mapping:
        raise _NotSimple
    for key in sorted(mapping):
        value = mapping[key]
        head = f"{indent}{_scalar(key)}:"
        kind = type(value)
        if kind is dict:
            lines.append(head)
            _block(value, indent + "  ", lines)
        elif kind is list:
            if not value:
                raise _NotSimple
            lines.append(head)
            lines.extend([f"{indent}- {_scalar(item)}" for item in value])
        else:
            lines.append(f"{head} {_scalar(value)}")


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
