"""Lab access for the check: commands inside a node's namespace, the leaf's hash sysctls, its routes and
counters, and what `ip route get` says about each flow."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any

from netfab.analyze.labcheck.options import Endpoint, HashConfig, LabCheckError
from netfab.analyze.traffic import FlowBatch

SYSCTL_DIR = "/proc/sys/net/ipv4"
HASH_SYSCTLS = ("fib_multipath_hash_policy", "fib_multipath_hash_fields")
SEED_SYSCTL = "fib_multipath_hash_seed"


Exec = Callable[[str, list[str], str | None, float], tuple[int, str, str]]
"""(node, argv, stdin, timeout) -> (returncode, stdout, stderr), run inside the node's namespace."""


def lab_exec(prefix: str) -> Exec:
    from netfab.lab import LabError
    from netfab.lab import exec as run_in

    def run(node: str, argv: list[str], stdin: str | None, timeout: float) -> tuple[int, str, str]:
        try:
            proc = run_in(prefix, node, argv, input=stdin, timeout=timeout)
        except LabError as exc:
            raise LabCheckError(str(exc)) from None
        return proc.returncode, proc.stdout, proc.stderr

    return run


class LabNode:
    def __init__(self, run: Exec, name: str) -> None:
        self.run, self.name = run, name

    def out(self, argv: list[str], stdin: str | None = None, timeout: float = 30.0) -> str:
        rc, out, err = self.run(self.name, argv, stdin, timeout)
        if rc != 0:
            raise LabCheckError(f"{self.name}: {' '.join(argv[:4])}... failed (rc {rc}): {err.strip()[:300]}")
        return out

    def read_sysctls(self, names: Sequence[str]) -> dict[str, str]:
        # One `cat` per name: a knob this kernel lacks (the seed before 6.11) must not hide the others.
        script = 'for f in "$@"; do if [ -e "$f" ]; then cat "$f"; else echo -; fi; done'
        out = self.out(["sh", "-c", script, "sh", *(f"{SYSCTL_DIR}/{n}" for n in names)]).split()
        return {n: v for n, v in zip(names, out, strict=True) if v != "-"}

    def write_sysctl(self, name: str, value: str) -> None:
        self.out(["sh", "-c", 'printf "%s\\n" "$1" > "$2"', "sh", value, f"{SYSCTL_DIR}/{name}"])

    def counters(self, ifnames: Sequence[str]) -> dict[str, tuple[int, int]]:
        paths = [f"/sys/class/net/{i}/statistics/{c}" for i in ifnames for c in ("tx_bytes", "tx_packets")]
        values = [int(v) for v in self.out(["cat", *paths]).split()]
        return {i: (values[2 * k], values[2 * k + 1]) for k, i in enumerate(ifnames)}


def apply_hash_config(leaf: LabNode, cfg: HashConfig) -> None:
    # Fields first: policy 3 never runs with a stale mask. Policies 0-2 ignore the mask, so it stays as found.
    if cfg.policy == 3:
        leaf.write_sysctl("fib_multipath_hash_fields", f"0x{cfg.fields_mask:04x}")
    leaf.write_sysctl("fib_multipath_hash_policy", str(cfg.policy))


def restore_hash_sysctls(leaf: LabNode, before: dict[str, str]) -> dict[str, str]:
    for name in ("fib_multipath_hash_fields", "fib_multipath_hash_policy"):
        # A failed write shows below: the value read back differs and the check says "not restored".
        with suppress(LabCheckError):
            leaf.write_sysctl(name, before[name])
    try:
        return leaf.read_sysctls([*HASH_SYSCTLS, SEED_SYSCTL])
    except LabCheckError:
        return {}


def check_address(host: LabNode, ep: Endpoint) -> None:
    out = host.out(["ip", "-j", "-4", "addr", "show", "dev", ep.nic])
    have = {a.get("local") for link in json.loads(out or "[]") for a in link.get("addr_info", [])}
    if ep.ip not in have:
        raise LabCheckError(
            f"{ep.host}:{ep.nic} has {', '.join(sorted(filter(None, have))) or 'no address'}, the plan says "
            f"{ep.ip}: the lab was brought up from another intent"
        )


def nexthop_order(leaf: LabNode, dst_ip: str) -> list[str]:
    """The uplinks of the route to dst_ip in the kernel's next-hop order (hash-threshold walks them in order)."""
    routes = json.loads(leaf.out(["ip", "-j", "route", "show", "match", dst_ip]) or "[]")
    best: dict[str, Any] | None = None
    for r in routes:
        plen = 0 if r.get("dst") == "default" else int(str(r.get("dst", "0/32")).partition("/")[2] or 32)
        if best is None or plen >= best["plen"]:
            best = {"plen": plen, "route": r}
    if best is None:
        return []
    r = best["route"]
    if "nexthops" in r:
        return [nh["dev"] for nh in r["nexthops"]]
    return [r["dev"]] if "dev" in r else []


def route_get(leaf: LabNode, batch: FlowBatch, iif: str) -> list[str]:
    """The kernel's own choice per flow: `ip route get` builds a packet with these headers and routes it as
    input on the host port, through the same fib_multipath_hash as forwarded traffic."""
    lines = "".join(
        f"route get {batch.dst_ip} from {batch.src_ip} iif {iif} ipproto udp sport {p} dport {batch.dst_port}\n"
        for p in batch.sports
    )
    out = leaf.out(["ip", "-o", "-b", "-"], stdin=lines)
    devs = [ln.split(" dev ", 1)[1].split()[0] for ln in out.splitlines() if " dev " in ln]
    if len(devs) != len(batch.sports):
        raise LabCheckError(f"{leaf.name}: ip route get answered {len(devs)} of {len(batch.sports)} flows")
    return devs
