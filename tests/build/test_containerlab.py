"""containerlab export: a loadable topology that follows the cabling plan."""

from __future__ import annotations

from pathlib import Path

import yaml

from netfab.design import design
from netfab.intent import Intent
from netfab.lab.containerlab import containerlab_topology

INTENTS = Path(__file__).resolve().parents[2] / "intent"


def _plan(name: str, **platforms: str):  # type: ignore[no-untyped-def]
    data = yaml.safe_load((INTENTS / name).read_text())
    for tier, platform in platforms.items():
        data["topology"][tier]["platform"] = platform
    return design(Intent.model_validate(data))


def test_every_cable_becomes_one_link_between_known_nodes() -> None:
    plan = _plan("lab.yaml")
    topo = yaml.safe_load(containerlab_topology(plan))
    nodes = topo["topology"]["nodes"]
    links = topo["topology"]["links"]
    assert len(links) == len(plan.links)
    seen: set[str] = set()
    for link in links:
        for end in link["endpoints"]:
            node, ifname = end.split(":")
            assert node in nodes
            assert end not in seen, f"interface wired twice: {end}"
            seen.add(end)
            assert ifname != "eth0", "eth0 is containerlab's management interface"
    assert nodes["leaf1"]["kind"] == "linux" and nodes["leaf1"]["binds"] == ["configs/leaf1.conf:/etc/frr/frr.conf"]


def test_vendor_kinds_get_startup_configs() -> None:
    plan = _plan("lab.yaml", leaf="arista_eos", spine="sonic")
    nodes = yaml.safe_load(containerlab_topology(plan))["topology"]["nodes"]
    assert nodes["leaf1"]["kind"] == "arista_ceos" and nodes["leaf1"]["startup-config"] == "configs/leaf1.cfg"
    assert nodes["spine1"]["kind"] == "sonic-vs" and nodes["spine1"]["startup-config"] == "configs/spine1.json"
    host = nodes["host1"]
    assert "ip address add 10.64.0.1/31 dev nic0" in host["exec"]
