"""Is the fabric converged? BGP sessions from bgpd, ECMP from each switch's kernel, sshd reachability.

The checks are pure functions over FRR's and iproute2's JSON so they are testable without a lab;
the probes that feed them are cheap (direct vty socket, one `ip -j route`) because wait_ready polls them.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from typing import Any

from netfab.lab.errors import LabError
from netfab.lab.frr import vty
from netfab.lab.proc import POLL, run
from netfab.lab.state import LabState, SwitchRecord
from netfab.lab.status import BgpSession

# IPv4 unicast must always be there; every other address family FRR reports (IPv6 unicast on an
# unnumbered fabric) must be fully Established too. The config is loaded before the first poll, so an AF
# missing from the summary is one the switch does not run, not one that has not come up yet.
REQUIRED_AFI = "ipv4Unicast"


def sessions_from_summary(summary: dict[str, Any]) -> list[BgpSession]:
    sessions = []
    for afi, body in summary.items():
        if isinstance(body, dict) and isinstance(body.get("peers"), dict):
            for peer, info in sorted(body["peers"].items()):
                sessions.append(BgpSession(afi, peer, str(info.get("state", "?")), str(info.get("hostname", ""))))
    return sessions


def bgp_missing(rec: SwitchRecord, summary: dict[str, Any]) -> list[str]:
    """Sessions this switch still lacks: each fabric interface needs an Established peer in every AF."""
    if not rec.fabric_ifnames:
        return []
    missing = []
    afis = [REQUIRED_AFI, *sorted(k for k, v in summary.items() if k != REQUIRED_AFI and isinstance(v, dict))]
    for afi in afis:
        body = summary.get(afi)
        if not isinstance(body, dict):
            missing.append(f"{rec.name}: no {afi} BGP sessions configured or up")
            continue
        peers = body.get("peers", {})
        for peer, info in sorted(peers.items()):
            if info.get("state") != "Established":
                missing.append(f"{rec.name}: {afi} session {peer} is {info.get('state', '?')}")
        established = sum(info.get("state") == "Established" for info in peers.values())
        absent = [i for i in rec.fabric_ifnames if i not in peers]
        if established < len(rec.fabric_ifnames):
            what = f" (no neighbor on {', '.join(absent)})" if absent else ""
            missing.append(f"{rec.name}: {afi} has {established} of {len(rec.fabric_ifnames)} expected sessions{what}")
    return missing


def route_widths(routes: list[dict[str, Any]]) -> dict[str, int]:
    """Kernel route destination -> number of next hops (multipath routes list them under `nexthops`)."""
    widths = {}
    for r in routes:
        hops = r.get("nexthops")
        widths[r.get("dst", "?")] = len(hops) if hops else (1 if r.get("gateway") or r.get("via") else 0)
    return widths


def ecmp_missing(rec: SwitchRecord, widths: dict[str, int]) -> list[str]:
    missing = []
    for dst in rec.remote_subnets:
        have = widths.get(dst, 0)
        if have < rec.ecmp_width:
            missing.append(f"{rec.name}: route {dst} has {have} of {rec.ecmp_width} ECMP next hops in the kernel")
    return missing


def bgp_summary(state: LabState, switch: str) -> dict[str, Any]:
    text = vty(state.layout, switch, "bgpd", "show bgp summary json")
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise LabError(f"{switch}: bgpd answered `show bgp summary json` with something that is not JSON") from exc


def kernel_routes(namespace: str, family: str = "-4") -> list[dict[str, Any]]:
    out = run(["ip", "-n", namespace, "-j", family, "route", "show"], what=f"routes in {namespace}").stdout
    routes: list[dict[str, Any]] = json.loads(out or "[]")
    return routes


def ssh_listening(mgmt_ip: str, timeout: float = 0.2) -> bool:
    try:
        with socket.create_connection((mgmt_ip, 22), timeout=timeout):
            return True
    except OSError:
        return False


def _switch_bgp(state: LabState, rec: SwitchRecord) -> list[str]:
    try:
        return bgp_missing(rec, bgp_summary(state, rec.name))
    except LabError as exc:
        return [str(exc)]


def _switch_ecmp(rec: SwitchRecord) -> list[str]:
    return ecmp_missing(rec, route_widths(kernel_routes(rec.namespace)))


def wait_ready(state: LabState, timeout: float, started: float | None = None) -> tuple[list[str], dict[str, float]]:
    """Poll until every switch has its sessions, every leaf its ECMP routes and every sshd listens.

    Returns (what is still missing, milestone times in seconds since `started`). A switch that passed a
    check is not polled again: that keeps polling from competing with convergence for the 2 CPUs.
    """
    t0 = time.monotonic() if started is None else started
    deadline = time.monotonic() + timeout
    checks: dict[str, tuple[Callable[[SwitchRecord], list[str]], set[str]]] = {
        "established": (lambda rec: _switch_bgp(state, rec), set(state.switches)),
        "ecmp": (_switch_ecmp, {n for n, r in state.switches.items() if r.remote_subnets}),
        "ssh": (
            lambda rec: [] if ssh_listening(rec.mgmt_ip) else [f"{rec.name}: sshd not listening on {rec.mgmt_ip}:22"],
            set(state.switches),
        ),
    }
    timings: dict[str, float] = {}
    while True:
        last = time.monotonic() >= deadline
        missing: list[str] = []
        for milestone, (check, pending) in checks.items():
            for name in sorted(pending):
                problems = check(state.switches[name])
                if problems:
                    missing += problems
                else:
                    pending.discard(name)
            if not pending and milestone not in timings:
                timings[milestone] = round(time.monotonic() - t0, 3)
        if not missing or last:
            return missing, timings
        time.sleep(POLL * 2.5)
