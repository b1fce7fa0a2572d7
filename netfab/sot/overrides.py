"""Writing the as-built state where deploy, verify and audit read inventory overrides.

`sot pull` owns one override directory outright (default inventory/netbox/): its hosts.yaml is rewritten
whole on every pull, so it never mixes with what people keep by hand in inventory/hosts.yaml (comments and
all). Pass it to the pipeline verbs as `--inventory inventory/netbox` (or NETFAB_INVENTORY); later
directories win, so a hand-kept override can still correct NetBox.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from netfab.core.fs import atomic_write_text

HEADER = """\
# Written by `netfab sot pull` from NetBox ({url}, site {site}): the as-built management addresses and
# hardware of fabric {fabric}. Rewritten whole on every pull: keep hand edits in another --inventory directory.
"""


def overrides_text(hosts: dict[str, dict[str, Any]], url: str, site: str, fabric: str) -> str:
    body = yaml.safe_dump(hosts, sort_keys=True, default_flow_style=False, width=120) if hosts else "{}\n"
    return HEADER.format(url=url, site=site, fabric=fabric) + body


def write_overrides(directory: Path, hosts: dict[str, dict[str, Any]], url: str, site: str, fabric: str) -> Path:
    path = directory / "hosts.yaml"
    atomic_write_text(path, overrides_text(hosts, url, site, fabric))
    return path
