"""The design builds InterfacePlan, LinkPlan and NicPlan positionally (netfab.design.expand: keywords cost
~2.7x per call at 420,000 calls). A field reordered in netfab.design.plan would then shift values into the wrong
fields with no type error for same-typed neighbours (names, ports, addresses): these checks tie every record to
the others it must agree with, so such a shift fails here."""

from __future__ import annotations

from ipaddress import ip_interface
from pathlib import Path

import pytest
import yaml

from netfab.design import FabricPlan, design
from netfab.intent import Intent

INTENTS = Path(__file__).resolve().parents[2] / "intent"


@pytest.fixture(scope="module", params=["rail-4su.yaml", "meta-3tier.yaml"])
def plan(request: pytest.FixtureRequest) -> FabricPlan:
    return design(Intent.model_validate(yaml.safe_load((INTENTS / request.param).read_text())))


def test_interfaces_agree_with_their_cables(plan: FabricPlan) -> None:
    ports = {(d.name, i.name): i for d in plan.devices.values() for i in d.interfaces}
    assert plan.links
    for link in plan.links:
        if link.b_device not in plan.devices:
            continue  # a server's end: checked against its NIC below
        a, b = ports[(link.a_device, link.a_port)], ports[(link.b_device, link.b_port)]
        assert (a.role, b.role) == ("fabric_down", "fabric_up")
        assert (a.peer_device, a.peer_port, b.peer_device, b.peer_port) == (
            link.b_device,
            link.b_port,
            link.a_device,
            link.a_port,
        )
        assert a.speed_gbps == b.speed_gbps == link.speed_gbps
        assert a.cable_m == b.cable_m == link.cable_m
        assert a.rail == b.rail == link.rail
        assert (a.address, b.address) == (link.a_address, link.b_address)
        assert a.bgp_peer_asn == plan.devices[link.b_device].asn
        assert b.bgp_peer_asn == plan.devices[link.a_device].asn
        assert isinstance(a.port, int) and isinstance(a.mtu, int) and isinstance(a.lossless, bool)
        if link.a_address is not None:
            assert a.peer_address == str(ip_interface(link.b_address).ip)
            assert b.peer_address == str(ip_interface(link.a_address).ip)


def test_nics_agree_with_their_leaf_ports(plan: FabricPlan) -> None:
    ports = {(d.name, i.name): i for d in plan.devices.values() for i in d.interfaces}
    nics = [(s, n) for s in plan.servers for n in s.nics]
    assert nics
    for server, nic in nics:
        port = ports[(nic.leaf, nic.leaf_port)]
        assert port.role == "host"
        assert (port.peer_device, port.peer_port) == (server.name, nic.netdev)
        assert port.rail == nic.rail
        assert port.bgp_peer_asn is None
        if nic.address is not None:
            assert port.peer_address == str(ip_interface(nic.address).ip)
            assert nic.gateway == str(ip_interface(port.address).ip)
            assert all("/" in route for route in nic.routes)
