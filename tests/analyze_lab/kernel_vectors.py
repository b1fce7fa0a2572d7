"""Known answers for the kernel-hash replica, from the running kernel itself.

A throw-away network namespace gets one input port and N veth next hops behind a weighted multipath default
route; for each case (hash seed, fib_multipath_hash_policy, fib_multipath_hash_fields, weights) the kernel is
asked with `ip route get DST from SRC iif in0 ipproto P sport S dport D` which next hop it picks, for random
flows (addresses, protocol, both ports). That is the same fib_multipath_hash and hash-threshold walk a
forwarded packet takes, independent of netfab's replica.

`python3 tests/analyze_lab/kernel_vectors.py` (as root, kernel >= 6.11 for the seed) rewrites
vectors/kernel_multipath_hash.json; tests replay that file anywhere, and test_kernel_hash also asks the live
kernel with fresh flows where it can.
"""

from __future__ import annotations

import ipaddress
import json
import os
import platform
import random
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

VECTORS = Path(__file__).parent / "vectors" / "kernel_multipath_hash.json"
SEED_SYSCTL = Path("/proc/sys/net/ipv4/fib_multipath_hash_seed")
PROTOCOLS = {"udp": 17, "tcp": 6}

# Seeds at the edges of the 32-bit sysctl and in the middle; every policy; fields masks that select
# addresses only, ports only, protocol only, one of each, no outer field (0x0040, inner source only: a
# constant on plain UDP), and the 5-tuple; equal and unequal weights over 2-4 next hops.
CASES: list[tuple[int, int, int, tuple[int, ...]]] = [
    (1031014252, 1, 0x0037, (1, 1)),
    (1031014252, 0, 0x0037, (1, 1)),
    (1, 1, 0x0037, (1, 1, 1)),
    (0xFFFFFFFF, 1, 0x0037, (1, 2, 1)),
    (0x80000000, 2, 0x0037, (1, 1, 1, 1)),
    (12345, 0, 0x0037, (3, 1)),
    (12345, 3, 0x0037, (1, 1)),
    (12345, 3, 0x0003, (1, 1, 1)),
    (12345, 3, 0x0030, (1, 1)),
    (12345, 3, 0x0004, (1, 1, 1, 1)),
    (12345, 3, 0x0013, (2, 1)),
    (0xDEADBEEF, 3, 0x0021, (1, 1, 1)),
    (0xDEADBEEF, 3, 0x0040, (1, 1)),
    (0xDEADBEEF, 1, 0x0037, (5, 3, 1, 1)),
]
FLOWS_PER_CASE = 24


@dataclass(frozen=True)
class Flow:
    src: str
    dst: str
    protocol: str
    sport: int
    dport: int


def random_flows(rng: random.Random, n: int) -> list[Flow]:
    """Sources from 10.128/9 and destinations from 172.16/12 (clear of the namespace's own addresses); RoCE's
    dport 4791 half the time, any port otherwise, so the port ordering the kernel applies is exercised."""

    def addr(net: str) -> str:
        network = ipaddress.IPv4Network(net)
        return str(network[rng.randrange(1, network.num_addresses - 1)])

    return [
        Flow(
            addr("10.128.0.0/9"),
            addr("172.16.0.0/12"),
            rng.choice(sorted(PROTOCOLS)),
            rng.randrange(1024, 1 << 16),
            4791 if rng.random() < 0.5 else rng.randrange(1, 1 << 16),
        )
        for _ in range(n)
    ]


def live_kernel_problem() -> str | None:
    """Why the live kernel cannot be asked here (None: it can)."""
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    if not SEED_SYSCTL.exists():
        return f"this kernel ({platform.release()}) has no fib_multipath_hash_seed (< 6.11): its key is random"
    try:
        subprocess.run(["ip", "-V"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return "no `ip` (apt-get install iproute2)"
    return None


class Namespace:
    """One input port and `paths` veth next hops; the peers stay in the namespace, nothing leaves it."""

    def __init__(self, name: str, paths: int) -> None:
        self.name, self.paths = name, paths

    def run(self, *argv: str, stdin: str | None = None) -> str:
        proc = subprocess.run(
            ["ip", "netns", "exec", self.name, *argv], input=stdin, capture_output=True, text=True, timeout=60
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {proc.stderr.strip()}")
        return proc.stdout

    def setup(self) -> None:
        self.run("ip", "link", "set", "lo", "up")
        for i, name in enumerate(["in0", *(f"nh{k}" for k in range(self.paths))]):
            self.run("ip", "link", "add", name, "type", "veth", "peer", "name", f"{name}p")
            self.run("ip", "link", "set", name, "up")
            self.run("ip", "link", "set", f"{name}p", "up")
            self.run("ip", "addr", "add", f"192.168.{i}.1/24", "dev", name)
        self.sysctl("net.ipv4.ip_forward", "1")
        for conf in ("all", "default", "in0"):
            self.sysctl(f"net.ipv4.conf.{conf}.rp_filter", "0")

    def sysctl(self, name: str, value: str) -> None:
        self.run("sysctl", "-qw", f"{name}={value}")

    def next_hops(self, seed: int, policy: int, fields: int, weights: tuple[int, ...], flows: list[Flow]) -> list[int]:
        """The next-hop index (route order) the kernel picks for each flow under this configuration."""
        self.sysctl("net.ipv4.fib_multipath_hash_seed", str(seed))
        self.sysctl("net.ipv4.fib_multipath_hash_fields", f"0x{fields:04x}")
        self.sysctl("net.ipv4.fib_multipath_hash_policy", str(policy))
        hops: list[str] = []
        for k, w in enumerate(weights):
            hops += ["nexthop", "via", f"192.168.{k + 1}.2", "dev", f"nh{k}", "weight", str(w)]
        self.run("ip", "route", "replace", "default", *hops)
        batch = "".join(
            f"route get {f.dst} from {f.src} iif in0 ipproto {f.protocol} sport {f.sport} dport {f.dport}\n"
            for f in flows
        )
        devs = [ln.split(" dev ", 1)[1].split()[0] for ln in self.run("ip", "-o", "-b", "-", stdin=batch).splitlines()]
        if len(devs) != len(flows):
            raise RuntimeError(f"ip route get answered {len(devs)} of {len(flows)} flows")
        return [int(d.removeprefix("nh")) for d in devs]


@contextmanager
def namespace(paths: int) -> Iterator[Namespace]:
    name = f"nfkh{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True, capture_output=True)
    try:
        ns = Namespace(name, paths)
        ns.setup()
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def ask_kernel(cases: list[tuple[int, int, int, tuple[int, ...]]], flows_per_case: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    with namespace(max(len(c[3]) for c in cases)) as ns:
        for s, policy, fields, weights in cases:
            flows = random_flows(rng, flows_per_case)
            members = ns.next_hops(s, policy, fields, weights, flows)
            out.append(
                {
                    "seed": s,
                    "policy": policy,
                    "fields": f"0x{fields:04x}",
                    "weights": list(weights),
                    "flows": [
                        [f.src, f.dst, f.protocol, f.sport, f.dport, m] for f, m in zip(flows, members, strict=True)
                    ],
                }
            )
    return out


def _compact_json(doc: dict) -> str:
    """One line per flow: the file stays reviewable in a diff."""
    cases = []
    for c in doc["cases"]:
        head = json.dumps({k: v for k, v in c.items() if k != "flows"})[:-1]
        flows = ",\n    ".join(json.dumps(f) for f in c["flows"])
        cases.append(f'  {head}, "flows": [\n    {flows}\n  ]}}')
    meta = json.dumps({k: v for k, v in doc.items() if k != "cases"})[:-1]
    return meta + ', "cases": [\n' + ",\n".join(cases) + "\n]}\n"


def main() -> None:
    if problem := live_kernel_problem():
        raise SystemExit(problem)
    doc = {
        "about": "next hops a Linux kernel chose (ip route get ... iif), see tests/analyze_lab/kernel_vectors.py",
        "kernel": platform.release(),
        "cases": ask_kernel(CASES, FLOWS_PER_CASE, seed=20261201),
    }
    VECTORS.write_text(_compact_json(doc))
    print(f"{VECTORS}: {sum(len(c['flows']) for c in doc['cases'])} vectors from kernel {doc['kernel']}")


if __name__ == "__main__":
    main()
