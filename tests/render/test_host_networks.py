"""Host scripts of several networks on one server never collide (issue 13 point 2): every network's script
for one server is applied, as root, with real `ip`, in a network namespace this test creates (the lab's
NETFAB_LAB=1 mode: addresses, MTU, routes, rules, sysctls), in order and again in reverse, and the kernel
state is checked after each pass: every network keeps its own interfaces, addresses, routing tables and
rules, the host-wide sysctls agree, and re-applying one network changes nothing of the others."""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from netfab.design import design
from netfab.design.plan import ServerPlan
from netfab.intent import Intent
from netfab.render.device import render_server

INTENTS = Path(__file__).resolve().parents[2] / "intent"

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("ip"), reason="needs root and iproute2 to create a network namespace"
)


def three_networks() -> dict[str, Any]:
    """ent64 (generic profile: eth0-7 back end) plus a 2-port storage network and a 1-port front end."""
    data = yaml.safe_load((INTENTS / "ent64.yaml").read_text())
    data["servers"] = {"profile": "generic"}
    front = copy.deepcopy(data["networks"]["storage"])
    front.update(kind="frontend", description="in-band")
    front["topology"]["servers"] = {"gpus_per_server": 8, "nics": 1, "nic_speed": "100G", "cable_m": 2}
    front["topology"]["leaf"].update(uplinks=2, uplink_speed="100G")
    front["topology"].pop("rails", None)
    front["underlay"] = {
        "loopbacks": {"spine": "10.2.1.0/24", "leaf": "10.2.16.0/20"},
        "p2p": {"leaf_spine": "10.136.0.0/16"},
        "hosts": "10.112.0.0/16",
    }
    front["management"] = {"subnet": "172.22.0.0/24"}
    data["networks"]["frontend"] = front
    return data


def scripts_for(data: dict[str, Any], index: int = 0) -> list[tuple[str, ServerPlan, str]]:
    intent = Intent.model_validate(data)
    out = []
    for name in intent.network_names():
        plan = design(intent, network=name)
        if plan.kind == "oob":
            continue
        server = plan.servers[index]
        out.append((name, server, render_server(server, plan)[f"hosts/{server.name}.sh"]))
    return out


def run(ns: str, *cmd: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", "netns", "exec", ns, *cmd], capture_output=True, text=True, timeout=60, **kw)


def state(ns: str) -> dict[str, str]:
    """Everything a host script may touch, as text (sorted where the kernel's order is not ours)."""
    snap = {
        "addr": run(ns, "ip", "-o", "-4", "addr", "show").stdout,
        "rules": run(ns, "ip", "-4", "rule", "show").stdout,
        "main": run(ns, "ip", "route", "show", "table", "main").stdout,
        "all": "\n".join(sorted(run(ns, "ip", "-4", "route", "show", "table", "all").stdout.splitlines())),
        "rp_filter": run(ns, "cat", "/proc/sys/net/ipv4/conf/all/rp_filter").stdout,
    }
    for line in run(ns, "ip", "-o", "link", "show").stdout.splitlines():
        m = re.match(r"\d+: ([^:@]+)[:@].* mtu (\d+)", line)
        if m:
            snap[f"mtu {m.group(1)}"] = m.group(2)
    return snap


@pytest.mark.parametrize("case", ["generic-3-networks", "dgx-h100-superpod"])
def test_every_network_of_one_server_applies_without_collision(case: str, tmp_path: Path) -> None:
    data = (
        three_networks() if case == "generic-3-networks" else yaml.safe_load((INTENTS / "superpod-su.yaml").read_text())
    )
    scripts = scripts_for(data)
    assert len(scripts) == (3 if case == "generic-3-networks" else 2)
    nics = [n for _, server, _ in scripts for n in server.nics]
    # Static guarantee first: no netdev and no routing table is used by two networks.
    assert len({n.netdev for n in nics}) == len(nics)
    assert len({n.table for n in nics}) == len(nics)
    ns = f"nfcl-{uuid.uuid4().hex[:8]}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for i, n in enumerate(nics):
            peer = f"pe{i}"
            subprocess.run(["ip", "-n", ns, "link", "add", n.netdev, "type", "veth", "peer", "name", peer], check=True)
            subprocess.run(["ip", "-n", ns, "link", "set", peer, "up"], check=True)
        paths = []
        for name, _, text in scripts:
            path = tmp_path / f"{name}.sh"
            path.write_text(text)
            paths.append(path)
        env = {**os.environ, "NETFAB_LAB": "1"}
        for path in paths:
            proc = run(ns, "sh", str(path), env=env)
            assert proc.returncode == 0, (path.name, proc.stdout, proc.stderr)
        first = state(ns)
        # Each network's interfaces carry exactly its own address and MTU; its table only its own routes.
        for name, server, _ in scripts:
            for n in server.nics:
                assert re.search(rf"\b{re.escape(n.netdev)}\s+inet {re.escape(n.address)}\b", first["addr"]), (
                    name, n.netdev, first["addr"])  # fmt: skip
                assert first[f"mtu {n.netdev}"] == str(server.congestion.host_mtu)
                src = n.address.split("/")[0]
                assert len(re.findall(rf"from {re.escape(src)} lookup {n.table}\b", first["rules"])) == 1
                table = run(ns, "ip", "route", "show", "table", str(n.table)).stdout
                devs = set(re.findall(r"dev (\S+)", table))
                assert devs == {n.netdev}, (name, n.table, table)
        assert sum(len(s.nics) for _, s, _ in scripts) == len(re.findall(r"lookup 1\d\d\b", first["rules"]))
        assert first["rp_filter"].strip() == "2"
        assert len(re.findall(r"\binet ", first["addr"])) == len(nics)
        # Re-applying in reverse, and any one network again, changes nothing: no script undoes another's state.
        for path in [*reversed(paths), paths[0]]:
            proc = run(ns, "sh", str(path), env=env)
            assert proc.returncode == 0, proc.stderr
            assert state(ns) == first, path.name
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
    assert ns not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
