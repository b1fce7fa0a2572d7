"""What a lab looks like right now, as data first (to_dict for JSON) and as text second (a rendering of it)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

PFC_NOTE = (
    "PFC is not verified in the lab: `dcb` (PFC/ETS) is not supported on veth interfaces, "
    "so PFC configuration is rendered and linted but can only be checked on hardware."
)


@dataclass(slots=True)
class BgpSession:
    afi: str  # FRR's JSON key, e.g. ipv4Unicast
    peer: str  # interface name for unnumbered sessions, else the neighbor address
    state: str
    hostname: str = ""

    @property
    def established(self) -> bool:
        return self.state == "Established"


@dataclass(slots=True)
class SwitchStatus:
    name: str
    namespace: str
    mgmt_ip: str
    daemons: dict[str, bool]  # daemon -> alive
    sessions: list[BgpSession] = field(default_factory=list)
    ecmp_width: int = 0  # most next hops of any kernel route
    route_widths: dict[str, int] = field(default_factory=dict)  # kernel route destination -> next hops
    problems: list[str] = field(default_factory=list)


@dataclass(slots=True)
class LabStatus:
    name: str
    prefix: str
    workdir: str
    switches: list[SwitchStatus]
    hosts: list[str]
    missing: list[str] = field(default_factory=list)  # what keeps the lab from being ready
    timings: dict[str, float] = field(default_factory=dict)  # seconds since bring-up started, per milestone
    pfc_note: str = PFC_NOTE

    @property
    def ready(self) -> bool:
        return not self.missing

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ready"] = self.ready
        return data

    def render_text(self) -> str:
        lines = [f"lab {self.name} (prefix {self.prefix}): {'ready' if self.ready else 'NOT ready'}"]
        for sw in self.switches:
            dead = [d for d, ok in sw.daemons.items() if not ok]
            up = sum(s.established for s in sw.sessions)
            lines.append(
                f"  {sw.name:<12} mgmt {sw.mgmt_ip:<15} bgp {up}/{len(sw.sessions)} established  "
                f"ecmp {sw.ecmp_width}  daemons {'ok' if not dead else 'DOWN: ' + ', '.join(dead)}"
            )
            lines += [
                f"    {s.afi} {s.peer} ({s.hostname or '?'}): {s.state}" for s in sw.sessions if not s.established
            ]
        lines.append(f"  hosts: {', '.join(self.hosts) or '-'}")
        if self.timings:
            lines.append("  timings: " + ", ".join(f"{k} {v:.2f} s" for k, v in self.timings.items()))
        lines += [f"  missing: {m}" for m in self.missing]
        lines.append(f"  note: {self.pfc_note}")
        return "\n".join(lines)
