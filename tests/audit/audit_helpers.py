"""Shared helpers for the audit tests: plans per platform, rendered intended files, config transformations
that must never count as drift, and the kernel state a correctly applied host script leaves."""

from __future__ import annotations

import json
import re
from copy import deepcopy
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from netfab.audit.device import audit_texts, intended_files
from netfab.audit.model import Collected, DeviceAudit
from netfab.audit.rules import AuditRules
from netfab.design import DevicePlan, FabricPlan, design
from netfab.intent.model import Intent

ROOT = Path(__file__).resolve().parents[2]
CLI_PLATFORMS = ("arista_eos", "cisco_nxos", "juniper_junos")
ALL_PLATFORMS = (*CLI_PLATFORMS, "frr", "sonic", "nvidia_cumulus")


@cache
def lab_intent() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "intent" / "lab.yaml").read_text())


def intent_for(platform: str, addressing: str | None = None) -> dict[str, Any]:
    """The lab intent on `platform` (p2p31 except on frr, which the lab runs unnumbered)."""
    data = deepcopy(lab_intent())
    for tier in ("leaf", "spine"):
        data["topology"][tier]["platform"] = platform
    data["underlay"]["addressing"] = addressing or ("unnumbered" if platform == "frr" else "p2p31")
    return data


@cache
def plan_for(platform: str) -> FabricPlan:
    return design(Intent.model_validate(intent_for(platform)))


def leaf(platform: str, name: str = "leaf1") -> DevicePlan:
    return plan_for(platform).devices[name]


def intended(platform: str, name: str = "leaf1") -> dict[str, str]:
    return intended_files(leaf(platform, name))


def run(
    platform: str,
    running: dict[str, str],
    kernel: dict[str, Any] | None = None,
    rules: AuditRules | None = None,
    name: str = "leaf1",
    want: dict[str, str] | None = None,
) -> DeviceAudit:
    """Audit `running` (files by suffix) against the intended files of the lab's `name` on `platform`."""
    collected = Collected(name, files=running, kernel=kernel, origin="test")
    return audit_texts(name, platform, want or intended(platform, name), collected, rules or AuditRules())


def drift_paths(result: DeviceAudit) -> dict[str, tuple[Any, Any]]:
    return {d.path: (d.actual, d.intended) for d in result.drifts}


# --- transformations a device may apply without changing anything -----------------------------------------
def _tree(lines: list[str]) -> list[tuple[str, list[Any]]]:
    """Indented text -> [(line, children)], comment-free."""
    root: list[tuple[str, list[Any]]] = []
    stack: list[tuple[int, list[Any]]] = [(-1, root)]
    for line in lines:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        while stack[-1][0] >= indent:
            stack.pop()
        node: tuple[str, list[Any]] = (line, [])
        stack[-1][1].append(node)
        stack.append((indent, node[1]))
    return root


def _emit(nodes: list[tuple[str, list[Any]]], out: list[str], comment: str) -> None:
    for line, children in nodes:
        out.append(line)
        _emit(list(reversed(children)), out, comment)
        if not line.startswith(" "):
            out.append(comment)


def reorder(text: str, comment: str = "!") -> str:
    """Every section's lines in reverse order, at every depth; comments and blank lines dropped."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.strip().startswith(comment) and ln != "end"]
    out: list[str] = []
    _emit(list(reversed(_tree(lines))), out, comment)
    return "\n".join(out) + "\n"


def with_noise(text: str, comment: str = "!", header: tuple[str, ...] = (), footer: tuple[str, ...] = ()) -> str:
    """Comments and blank lines between lines, trailing spaces, doubled inner spaces, a banner and a trailer."""
    out = list(header)
    for n, line in enumerate(text.splitlines()):
        if n % 7 == 3:
            out += [f"{comment} noted by ops {n}", ""]
        out.append(line + ("   " if n % 5 == 0 else ""))
    return "\n".join([*out, *footer]) + "\n"


def shuffle_lines(text: str, comment: str = "#") -> str:
    """Flat (Junos set) configs: reversed, with comments sprinkled in."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith(comment)]
    out = []
    for n, line in enumerate(reversed(lines)):
        out.append(line)
        if n % 9 == 0:
            out.append(f"{comment} ops note {n}")
    return "\n".join(out) + "\n"


def reverse_keys(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: reverse_keys(v) for k, v in reversed(list(doc.items()))}
    if isinstance(doc, list):
        return [reverse_keys(v) for v in doc]
    return doc


# --- the frr platform's kernel side -----------------------------------------------------------------------
def kernel_state(dev: DevicePlan, avpkt: int = 1500, mode: str = "nftables") -> dict[str, Any]:
    """What FRRDriver.get_kernel_state() reports once the host script ran correctly, computed from the plan
    (not from the script, so the audit's script parser is checked against the plan)."""
    ecn_queues = [q for q in dev.qos.queues if q.ecn]
    ports: dict[str, Any] = {}
    for iface in dev.interfaces:
        if mode == "nftables":
            ports[iface.name] = {
                "nftables": {
                    str(q.queue): {
                        "rate_pps": iface.speed_gbps * 1000 * 1_000_000 * 95 // 100 // 8 // avpkt,
                        "burst_packets": -(-q.ecn.kmin_bytes // avpkt),  # type: ignore[union-attr]
                    }
                    for q in ecn_queues
                }
            }
        elif mode == "red":
            e = ecn_queues[0].ecn
            assert e is not None
            ports[iface.name] = {
                "red": {"limit": 4 * e.kmax_bytes, "min": e.kmin_bytes, "max": e.kmax_bytes,
                        "probability": 0.99999999, "ecn": True}
            }  # fmt: skip
    return {
        "sysctl": {
            "net.ipv4.fib_multipath_hash_policy": 1,
            "net.ipv4.fib_multipath_hash_fields": 0x37,
            "net.ipv4.fib_multipath_hash_seed": dev.hash_seed,
            "net.ipv6.fib_multipath_hash_policy": 1,
            "net.ipv6.fib_multipath_hash_fields": 0x37,
            "net.ipv4.ip_forward": 1,
            "net.ipv6.conf.all.forwarding": 1,
            "net.ipv4.conf.all.rp_filter": 0,
            "net.ipv4.conf.default.rp_filter": 0,
        },
        "links": {**{i.name: {"mtu": i.mtu, "kind": "veth"} for i in dev.interfaces}, "mgmt0": {"mtu": 1500}},
        "ecn": {
            "mode": mode if ports else "off",
            "ports": ports,
            "dscp": {fam: {str(q.queue): list(q.dscp) for q in ecn_queues} for fam in ("ipv4", "ipv6")}
            if mode == "nftables"
            else {},
        },
        "env": {},
    }


def frr_running(conf: str) -> str:
    """What `show running-config` prints for a loaded frr.conf on FRR 8.4: vtysh's banner, the version stamp,
    `service integrated-vtysh-config`, comments gone, a route-map moved after router bgp, `end`."""
    lines = [ln for ln in conf.splitlines() if not ln.startswith("!") or ln == "!"]
    body = "\n".join(lines)
    route_map = re.search(r"^route-map .*?\nexit\n", body + "\n", re.M | re.S)
    if route_map:
        body = body.replace(route_map.group(0), "") + "\n!\n" + route_map.group(0)
    body = body.replace("frr defaults datacenter\n", "frr defaults datacenter\nservice integrated-vtysh-config\n")
    return "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\n" + body + "\n!\nend\n"


def dump_json(doc: Any) -> str:
    return json.dumps(doc, indent=1)
