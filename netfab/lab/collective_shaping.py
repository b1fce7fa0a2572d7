"""Throttling lab links for the collective: tc tbf on the egress of switch ports (this kernel has no netem).

Every port the collective may throttle gets a tbf root qdisc for the whole run, at a rate no veth reaches; a
throttle changes that qdisc's rate in place (`tc qdisc change`) and lifting it changes it back. So every shaped
port has shaper counters (overlimits, backlog) from the first step to the last, throttled or not, the way a real
switch port always has pause and watermark counters: a throttled port stands out against its peers, not
against an absent counter. Changes go through one `tc -batch` per switch per step. At the end the qdiscs are
deleted, which gives the ports back their default (noqueue).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from netfab.lab.errors import LabError
from netfab.lab.proc import run

# Far above what a veth carries here (a few Gbit/s per flow): the "unthrottled" shaper never holds a packet.
LINE_RATE_BPS = 100_000_000_000
_LINE_ARGS = "burst 4mb limit 64mb"
# A throttled port queues rather than drops (a big limit): the link stays loss-free, only slow, as a link
# with a degraded lane or a paused peer is.
_THROTTLE_ARGS = "burst 64kb limit 32mb"
_UNITS = {"bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9, "tbit": 10**12}
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?bit)\s*$", re.IGNORECASE)


def parse_rate(text: str) -> int:
    """'200mbit' -> 200_000_000 bits/s (tc's units: bit, kbit, mbit, gbit, tbit). ValueError when unreadable."""
    m = _RATE.match(text)
    if not m:
        raise ValueError(f"rate {text!r} is not NUMBER followed by bit, kbit, mbit, gbit or tbit (e.g. 200mbit)")
    bps = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if not 8_000 <= bps <= LINE_RATE_BPS:
        raise ValueError(f"rate {text!r} must be between 8kbit and 100gbit")
    return bps


@dataclass(frozen=True, slots=True, order=True)
class Port:
    """One end of a lab link: a switch and one of its interfaces."""

    node: str
    port: str

    def __str__(self) -> str:
        return f"{self.node}:{self.port}"


def _tc_rate(bps: int) -> str:
    return f"{bps}bit"


class Shaper:
    """Owns the tbf qdiscs of one collective run on a set of ports (switch namespace per node given)."""

    def __init__(self, namespaces: Mapping[str, str], ports: Iterable[Port]) -> None:
        self.namespaces = dict(namespaces)
        self.ports = sorted(set(ports))
        self.rates: dict[Port, int] = {}

    def install(self) -> None:
        """A line-rate tbf on every port; refuses a port whose root qdisc someone else set up."""
        taken = []
        for node in sorted({p.node for p in self.ports}):
            existing = _root_qdiscs(self.namespaces[node])
            for p in self.ports:
                if p.node == node and existing.get(p.port, "noqueue") != "noqueue":
                    taken.append(f"{p} (root qdisc {existing[p.port]})")
        if taken:
            raise LabError(
                "the collective shapes ports with its own tbf and will not replace other shaping on " + ", ".join(taken)
            )
        self._batch(
            {
                p: f"qdisc add dev {p.port} root handle 1: tbf rate {_tc_rate(LINE_RATE_BPS)} {_LINE_ARGS}"
                for p in self.ports
            }
        )
        self.rates = dict.fromkeys(self.ports, LINE_RATE_BPS)

    def apply(self, throttled: Mapping[Port, int]) -> None:
        """Make exactly `throttled` ports slow (port -> bits/s), every other shaped port line rate."""
        unknown = [str(p) for p in throttled if p not in self.rates]
        if unknown:
            raise LabError(f"cannot throttle {', '.join(unknown)}: not on the collective's paths")
        want = {p: throttled.get(p, LINE_RATE_BPS) for p in self.ports}
        changes = {}
        for p, bps in want.items():
            if self.rates.get(p) != bps:
                args = _LINE_ARGS if bps == LINE_RATE_BPS else _THROTTLE_ARGS
                changes[p] = f"qdisc change dev {p.port} root handle 1: tbf rate {_tc_rate(bps)} {args}"
        self._batch(changes)
        self.rates.update(want)

    def remove(self) -> None:
        """Delete every qdisc this shaper added (best effort: a port may be gone with its lab)."""
        by_node: dict[str, list[str]] = {}
        for p in self.rates:
            by_node.setdefault(p.node, []).append(f"qdisc del dev {p.port} root\n")
        for node, lines in by_node.items():
            run(["tc", "-n", self.namespaces[node], "-force", "-batch", "-"], input="".join(lines), check=False)
        self.rates = {}

    def _batch(self, commands: Mapping[Port, str]) -> None:
        by_node: dict[str, list[str]] = {}
        for p, line in sorted(commands.items()):
            by_node.setdefault(p.node, []).append(line + "\n")
        for node, lines in by_node.items():
            run(["tc", "-n", self.namespaces[node], "-batch", "-"], input="".join(lines), what=f"{node}: tc")


def _root_qdiscs(namespace: str) -> dict[str, str]:
    out = run(["tc", "-n", namespace, "-j", "qdisc", "show"], what=f"qdiscs in {namespace}").stdout
    roots: dict[str, str] = {}
    for q in json.loads(out or "[]"):
        if q.get("root"):
            roots[str(q.get("dev"))] = str(q.get("kind"))
    return roots
