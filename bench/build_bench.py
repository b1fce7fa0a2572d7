"""Build benchmark: `netfab build` of intent/clos3-24k.yaml (1,692 switches, 3,072 servers) as whole processes,
for its own platform and for every platform, plus ms per EOS leaf beside pyavd's eos_cli_config_gen in the
same run.

    python3 bench/build_bench.py --runs 5            # needs network access to PyPI once, for pyavd
    python3 bench/build_bench.py --runs 5 --no-avd   # netfab only

pyavd lives only in the benchmark's own virtualenv (--avd-venv, created on first use), never in netfab's
environment. Figures are wall-clock medians on whatever machine runs this; compare side by side, not across
runs: these machines are noisy.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from bytecode import measured_env  # noqa: E402  (bench/ is a folder of scripts, not a package)

INTENT = ROOT / "intent" / "clos3-24k.yaml"
PLATFORMS = ("arista_eos", "nvidia_cumulus", "sonic", "cisco_nxos", "juniper_junos", "frr")

# What each platform cannot express (lint refuses it), dropped to get a buildable variant of the same fabric.
ADJUST: dict[str, dict[str, Any]] = {
    "nvidia_cumulus": {"drop_hash": ["rocev2_dest_qp"]},
    "cisco_nxos": {"drop_hash": ["rocev2_dest_qp"], "max_cable_m": 100},
    "frr": {"drop_hash": ["rocev2_dest_qp"], "no_watchdog": True},
}


def variant(platform: str) -> dict[str, Any]:
    data = yaml.safe_load(INTENT.read_text())
    data = copy.deepcopy(data)
    adjust = ADJUST.get(platform, {})
    for tier in ("leaf", "spine", "superspine"):
        if data["topology"][tier]["platform"] != platform:
            data["topology"][tier]["platform"] = platform
            data["topology"][tier].pop("os_version", None)  # an EOS release means nothing to another NOS
        if "max_cable_m" in adjust:
            cable = data["topology"][tier].get("uplink_cable_m")
            if cable is not None:
                data["topology"][tier]["uplink_cable_m"] = min(cable, adjust["max_cable_m"])
    lb = data.setdefault("load_balancing", {})
    lb["hash_fields"] = [f for f in lb.get("hash_fields", []) if f not in adjust.get("drop_hash", [])]
    if adjust.get("no_watchdog"):
        data.setdefault("qos", {}).setdefault("pfc", {})["watchdog"] = None
    return data


def timed(argv: list[str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=measured_env(ROOT))
        out.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return out


def netfab(*args: str) -> list[str]:
    return [sys.executable, "-m", "netfab.cli.app", *args]


def leaf_structured_config(dev: Any) -> dict[str, Any]:
    """The same EOS leaf as AVD structured config (eos_cli_config_gen input): qos maps, a lossless qos
    profile, PFC watchdog, routed ports with the profile, eBGP with one neighbor per uplink."""
    qos = dev.qos
    queues = []
    for q in qos.queues:
        entry: dict[str, Any] = {"id": q.queue}
        if q.scheduling == "strict":
            entry["priority"] = "priority strict"
        else:
            entry["priority"] = "no priority"
            entry["bandwidth_percent"] = int(q.weight or 0)
        if q.ecn is not None:
            entry["random_detect"] = {
                "ecn": {
                    "threshold": {
                        "units": "kbytes",
                        "min": -(-q.ecn.kmin_bytes // 1000),
                        "max": -(-q.ecn.kmax_bytes // 1000),
                        "max_probability": int(q.ecn.pmax_percent),
                        "weight": q.ecn.weight,
                    }
                }
            }
        queues.append(entry)
    by_queue: dict[int, list[int]] = {}
    for dscp, queue in sorted(qos.dscp_to_queue.items()):
        by_queue.setdefault(queue, []).append(dscp)
    return {
        "hostname": dev.name,
        "ip_routing": True,
        "qos": {"map": {"dscp": [f"{' '.join(map(str, d))} to traffic-class {q}" for q, d in by_queue.items()]}},
        "priority_flow_control": {
            "watchdog": {"timeout": "0.2", "recovery_time": "0.4", "polling_interval": "0.1", "action": "drop"}
        },
        "qos_profiles": [
            {
                "name": "NETFAB-LOSSLESS",
                "trust": "dscp",
                "tx_queues": queues,
                "priority_flow_control": {
                    "enabled": True,
                    "priorities": [{"priority": p, "no_drop": True} for p in qos.pfc_priorities],
                    "watchdog": {"enabled": True},
                },
            }
        ],
        "loopback_interfaces": [{"name": "Loopback0", "description": "router-id", "ip_address": f"{dev.loopback}/32"}],
        "ethernet_interfaces": [
            {
                "name": i.name,
                "description": i.description,
                "mtu": i.mtu,
                "switchport": {"enabled": False},
                "ip_address": i.address,
                "service_profile": "NETFAB-LOSSLESS",
            }
            for i in dev.interfaces
        ],
        "router_bgp": {
            "as": str(dev.bgp.asn),
            "router_id": dev.bgp.router_id,
            "bgp_defaults": ["no bgp default ipv4-unicast"],
            "maximum_paths": {"paths": dev.bgp.max_paths, "ecmp": dev.bgp.max_paths},
            "peer_groups": [{"name": "fabric"}],
            "neighbors": [
                {
                    "ip_address": n.address,
                    "peer_group": "fabric",
                    "remote_as": str(n.remote_as),
                    "description": n.peer_device,
                }
                for n in dev.bgp.neighbors
            ],
            "address_family_ipv4": {
                "peer_groups": [{"name": "fabric", "activate": True}],
                "networks": [{"prefix": p} for p in dev.bgp.networks],
            },
        },
    }


AVD_TIMER = r"""
import json, sys, time
from pyavd import get_device_config, validate_structured_config
sc = json.load(open(sys.argv[1])); n = int(sys.argv[2])
get_device_config(sc)
t = time.perf_counter()
for _ in range(n):
    get_device_config(sc)
render = (time.perf_counter() - t) / n
t = time.perf_counter()
for _ in range(n):
    validate_structured_config(sc); get_device_config(sc)
both = (time.perf_counter() - t) / n
print(json.dumps({"render_ms": render * 1000, "validate_render_ms": both * 1000, "bytes": len(get_device_config(sc))}))
"""


def ensure_avd(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "pyavd"], check=True)
    return python


def compare_with_pyavd(venv: Path, iterations: int) -> None:
    from netfab.design import design
    from netfab.intent import Intent
    from netfab.render import render_device

    plan = design(Intent.model_validate(yaml.safe_load(INTENT.read_text())))
    leaf = plan.devices["pod1-rtsw001"]
    render_device(leaf)
    start = time.perf_counter()
    for _ in range(iterations):
        text = render_device(leaf)
    ours = (time.perf_counter() - start) / iterations * 1000
    size = sum(len(t) for t in text.values())
    python = ensure_avd(venv)
    with tempfile.TemporaryDirectory() as tmp:
        sc = Path(tmp) / "leaf.json"
        sc.write_text(json.dumps(leaf_structured_config(leaf)))
        script = Path(tmp) / "avd_timer.py"
        script.write_text(AVD_TIMER)
        res = subprocess.run([str(python), str(script), str(sc), str(iterations)], capture_output=True, text=True)
        if res.returncode != 0:
            raise SystemExit(f"pyavd timing failed:\n{res.stderr[-2000:]}")
        avd = json.loads(res.stdout)
    print(f"\nper EOS leaf ({leaf.name}, {len(leaf.interfaces)} interfaces), {iterations} renders each, same run:")
    print(f"  netfab render_device           {ours:7.2f} ms  ({size:,} bytes)")
    print(f"  pyavd get_device_config        {avd['render_ms']:7.2f} ms  ({avd['bytes']:,} bytes)")
    print(f"  pyavd validate + get_device_config {avd['validate_render_ms']:7.2f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--platforms", default=",".join(PLATFORMS))
    ap.add_argument("--avd-venv", type=Path, default=Path("/tmp/netfab-bench-avd"))
    ap.add_argument("--no-avd", action="store_true")
    ap.add_argument("--iterations", type=int, default=100)
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} CPUs; whole-process medians of {args.runs} runs")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "build"
        times = timed(netfab("build", str(INTENT), "--out", str(out), "-q"), args.runs)
        med = statistics.median(times)
        print(
            f"clos3-24k as written (arista_eos): median {med:.2f} s (min {min(times):.2f}, max {max(times):.2f}); "
            f"{med / 4764 * 1000:.2f} ms per device (1,692 switches + 3,072 servers)"
        )
        for platform in args.platforms.split(","):
            path = Path(tmp) / f"clos3-{platform}.yaml"
            path.write_text(yaml.safe_dump(variant(platform)))
            times = timed(netfab("build", str(path), "--out", str(out), "-q"), args.runs)
            med = statistics.median(times)
            print(f"  every tier on {platform:<15} median {med:.2f} s (min {min(times):.2f}, max {max(times):.2f})")
    if not args.no_avd:
        compare_with_pyavd(args.avd_venv, args.iterations)


if __name__ == "__main__":
    main()
