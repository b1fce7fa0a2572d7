"""Elephant-flow generator for the namespace lab: N parallel UDP flows from one host NIC to another.

It stands in for a RoCEv2 NIC: every flow (QP) has its own UDP source port, all go to UDP port 4791, and every
flow sends the same number of equal-size datagrams at the same paced rate. With equal flows, a leaf uplink's
byte counter divided by one flow's bytes is the number of flows the kernel hashed onto it.

The sender is a small stdlib-only Python program run inside the source host's namespace (netfab.lab.exec);
it needs no iperf or other tools, and its traffic never leaves the lab's namespaces. It prints one JSON line:
datagrams sent per flow and the time it took.

Two kernel details shape it:
- the sockets stay unconnected (sendto). A connected UDP socket gets a random sk_txhash that rides on every
  skb (skb->l4_hash) through the veth into the leaf, and fib_multipath_hash_policy 1 then uses that random
  value instead of hashing the headers, which a NIC-built RoCE packet never carries;
- each socket binds its own source port explicitly: the port is the flow's identity in the hash.
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass
from typing import Any

from netfab.analyze.hashing import ROCE_SPORT_BASE, ROCE_UDP_PORT

ETH_IP_UDP_OVERHEAD = 14 + 20 + 8
"""Bytes a datagram adds on a veth's tx counter besides its payload: Ethernet, IPv4 and UDP headers."""

SENDER_SOURCE = r"""
import json, socket, sys, time
cfg = json.loads(sys.argv[1])
payload = bytes(cfg["payload"])
dst = (cfg["dst_ip"], cfg["dst_port"])
socks = []
for port in cfg["sports"]:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    s.bind((cfg["src_ip"], port))
    socks.append(s)
sent = [0] * len(socks)
errors = 0
interval = 1.0 / cfg["rate_pps"]
start = time.monotonic()
for k in range(cfg["packets"]):
    # One datagram per flow per tick: the flows stay interleaved, so none finishes early.
    for i, s in enumerate(socks):
        try:
            s.sendto(payload, dst)
            sent[i] += 1
        except OSError:
            errors += 1
    delay = start + (k + 1) * interval - time.monotonic()
    if delay > 0:
        time.sleep(delay)
elapsed = time.monotonic() - start
print(json.dumps({"sent": sent, "errors": errors, "elapsed": elapsed}))
"""


@dataclass(frozen=True)
class FlowBatch:
    """One batch of elephant flows: same endpoints and sizes, one UDP source port per flow."""

    src_host: str
    src_ip: str
    dst_ip: str
    sports: tuple[int, ...]
    payload_bytes: int = 1200
    packets_per_flow: int = 200
    rate_pps: float = 2000.0
    """Datagrams per second per flow."""
    dst_port: int = ROCE_UDP_PORT

    def sender_config(self) -> dict[str, Any]:
        return {
            "src_ip": self.src_ip,
            "dst_ip": self.dst_ip,
            "dst_port": self.dst_port,
            "sports": list(self.sports),
            "payload": self.payload_bytes,
            "packets": self.packets_per_flow,
            "rate_pps": self.rate_pps,
        }


@dataclass(frozen=True)
class SendResult:
    sent: tuple[int, ...]
    """Datagrams the kernel accepted, per flow."""
    errors: int
    elapsed_s: float


def draw_sports(flows: int, rng: random.Random) -> tuple[int, ...]:
    """Distinct UDP source ports from the RoCE NIC range 49152-65535, as a NIC picks one per QP."""
    return tuple(sorted(rng.sample(range(ROCE_SPORT_BASE, 1 << 16), flows)))


def sender_argv(batch: FlowBatch, python: str | None = None) -> list[str]:
    """The command that runs the sender (inside the source host's namespace)."""
    return [python or sys.executable, "-c", SENDER_SOURCE, json.dumps(batch.sender_config())]


def parse_sender_output(stdout: str, flows: int) -> SendResult:
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if not lines:
        raise ValueError("the flow sender printed nothing")
    doc = json.loads(lines[-1])
    sent = tuple(int(n) for n in doc["sent"])
    if len(sent) != flows:
        raise ValueError(f"the flow sender reported {len(sent)} flows, expected {flows}")
    return SendResult(sent=sent, errors=int(doc["errors"]), elapsed_s=float(doc["elapsed"]))
