"""The 3-tier rail-optimized design in real FRR (Linux namespaces, tests/lab's machinery): two pods of one SU
each under a superspine tier converge with every BGP session up, the pods reach each other only through the
superspines, and a route never comes back up through a spine of its own pod (RFC 7938 numbering)."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from ipaddress import IPv4Interface, IPv4Network
from typing import Any

import pytest

import netfab.lab as lab
from netfab.design import FabricPlan, design
from netfab.intent import Intent
from netfab.lab import LabSpec
from netfab.lab.fromplan import lab_intent, lab_spec

pytestmark = [
    pytest.mark.lab,
    pytest.mark.skipif(
        os.geteuid() != 0 or shutil.which("bgpd", path="/usr/lib/frr:/usr/sbin:/usr/bin") is None,
        reason="needs root and FRR",
    ),
]

TINY: dict[str, Any] = {
    "version": 1,
    "fabric": {"name": "r3lab"},
    "topology": {
        "scalable_units": 2,
        "sus_per_pod": 1,
        "servers_per_su": 1,
        "rails": 2,
        "servers": {"gpus_per_server": 2, "nic_speed": "400G"},
        "leaf": {"ports": 8, "uplinks": 2},
        "spine": {"count": 2, "ports": 8, "uplinks": 2},
        "superspine": {"count": 2, "ports": 8},
    },
    "underlay": {"asn": {"superspine": 64900, "spine": 65000, "leaf_base": 65100}},
}


@pytest.fixture(scope="module")
def fabric(lab_names: Callable[[str], tuple[str, str]]) -> Iterator[tuple[LabSpec, lab.LabStatus, FabricPlan]]:
    plan = design(lab_intent(Intent.model_validate(TINY)))
    prefix, subnet = lab_names("r3")
    spec = lab_spec(plan, prefix, IPv4Network(subnet))
    status = lab.up(spec, timeout=90)
    try:
        yield spec, status, plan
    finally:
        lab.down(spec)


def test_pods_converge_and_reach_each_other_through_the_superspines(
    fabric: tuple[LabSpec, lab.LabStatus, FabricPlan],
) -> None:
    spec, status, plan = fabric
    assert status.ready, status.missing
    assert {d.role for d in plan.devices.values()} == {"leaf", "spine", "superspine"}
    for sw in status.switches:
        assert sw.sessions and all(s.established for s in sw.sessions), sw.name
    src, dst = plan.servers[0], plan.servers[1]  # su1 (pod 1) and su2 (pod 2), rail 1 each
    target = dst.nics[0].address.split("/")[0]
    ping = lab.exec(spec.prefix, src.name, ["ping", "-c1", "-W2", target])
    assert ping.returncode == 0, f"{src.name} -> {target}: {ping.stdout}{ping.stderr}"
    # Valley-free: a pod-1 spine reaches pod 2's hosts only via the superspines (never down to a leaf and up
    # through its pod's other spine: the shared pod ASN makes BGP reject that path).
    block = str(IPv4Interface(dst.nics[0].address).network)  # the /31 its leaf announces
    spine = next(d for d in plan.devices.values() if d.role == "spine" and d.pod == 1)
    shown = lab.exec(spec.prefix, spine.name, ["vtysh", "-c", f"show ip route {block} json"])
    entries = json.loads(shown.stdout)[block]
    hops = {h.get("interfaceName") for e in entries if e.get("selected") for h in e["nexthops"]}
    supers = {i.name for i in spine.interfaces if i.peer_device.startswith("superspine")}
    assert hops and hops <= supers, (hops, supers)
    # Cut that spine off the superspines: with its pod's shared ASN it must lose the route (the only other path
    # goes down to a leaf and back up through the pod's other spine, a valley that could close a PFC cycle),
    # not detour through a leaf.
    for iface in sorted(supers):
        assert lab.exec(spec.prefix, spine.name, ["ip", "link", "set", iface, "down"]).returncode == 0
    try:
        # Absent for 8 s in a row: the withdrawal is immediate, a detour (if BGP accepted one) follows it.
        absent_since, deadline = None, time.monotonic() + 40
        while time.monotonic() < deadline:
            shown = lab.exec(spec.prefix, spine.name, ["vtysh", "-c", f"show ip route {block} json"])
            present = block in json.loads(shown.stdout or "{}")
            now = time.monotonic()
            absent_since = None if present else (absent_since or now)
            if absent_since is not None and now - absent_since >= 8:
                break
            time.sleep(0.5)
        assert absent_since is not None and not present, f"{spine.name} detours through a leaf: {shown.stdout}"
    finally:
        for iface in sorted(supers):
            lab.exec(spec.prefix, spine.name, ["ip", "link", "set", iface, "up"])
