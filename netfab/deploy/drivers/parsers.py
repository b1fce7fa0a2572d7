"""Pure parsers from device JSON (iproute2, FRR vtysh, lldpd) to NAPALM getter shapes.

Shared by all three drivers: FRR/Linux, Cumulus and SONiC are all Linux with kernel netdevs, FRR and (where
present) lldpd, so one parser per source serves every platform. Kept free of I/O so recorded outputs test them.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from napalm.base import models

_HEADER = re.compile(r"^(Building configuration\.\.\.|Current configuration:)\s*$")


def strip_frr_header(running: str) -> str:
    """`show running-config` minus vtysh's banner, so the text loads back (frr-reload rejects the banner)."""
    lines = running.splitlines()
    while lines and (not lines[0].strip() or _HEADER.match(lines[0])):
        lines.pop(0)
    return "\n".join(lines) + "\n" if lines else ""


def interfaces_from_ip_link(
    links: list[dict[str, Any]], speeds: Mapping[str, float]
) -> dict[str, models.InterfaceDict]:
    """`ip -j -d link show` + per-interface speed in Mbit/s (sysfs; -1 when the kernel does not know)."""
    out: dict[str, models.InterfaceDict] = {}
    for link in links:
        name = str(link.get("ifname", ""))
        if not name:
            continue
        flags = set(link.get("flags", []))
        oper = str(link.get("operstate", "UNKNOWN"))
        # lo and some virtual devices report operstate UNKNOWN although they carry traffic: trust LOWER_UP then
        is_up = oper == "UP" or (oper == "UNKNOWN" and "LOWER_UP" in flags)
        out[name] = {
            "is_up": is_up,
            "is_enabled": "UP" in flags,
            "description": str(link.get("ifalias", "")),
            "last_flapped": -1.0,  # the kernel does not keep it
            "mtu": int(link.get("mtu", 0)),
            "speed": float(speeds.get(name, -1.0)),
            "mac_address": str(link.get("address", "")).upper(),
        }
    return out


def parse_speeds(text: str) -> dict[str, float]:
    """Lines of `<ifname> <speed>` as printed by the drivers' sysfs loop."""
    speeds: dict[str, float] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                speeds[parts[0]] = float(parts[1])
            except ValueError:
                speeds[parts[0]] = -1.0
    return speeds


_AF = {"ipv4Unicast": "ipv4", "ipv6Unicast": "ipv6"}


def bgp_neighbors_from_frr(data: Mapping[str, Any]) -> dict[str, models.BGPStateNeighborsPerVRFDict]:
    """`show bgp vrf all neighbors json` -> NAPALM get_bgp_neighbors.

    Peers are keyed as FRR keys them: the address, or the interface name for unnumbered peers ("swp1").
    FRR's neighbor JSON has no pre-policy received count, so received_prefixes = accepted_prefixes.
    The default VRF is reported as "global" (NAPALM convention).
    """
    result: dict[str, models.BGPStateNeighborsPerVRFDict] = {}
    for vrf, body in data.items():
        if not isinstance(body, Mapping):
            continue
        peers: dict[str, models.BGPStateNeighborDict] = {}
        router_id = ""
        for key, peer in body.items():
            if not isinstance(peer, Mapping):
                continue
            router_id = router_id or str(peer.get("localRouterId", ""))
            established = peer.get("bgpState") == "Established"
            families: dict[str, models.BGPStateAddressFamilyDict] = {}
            for af_key, af in (peer.get("addressFamilyInfo") or {}).items():
                name = _AF.get(af_key)
                if name is None or not isinstance(af, Mapping):
                    continue
                accepted = int(af.get("acceptedPrefixCounter", 0))
                families[name] = {
                    "received_prefixes": accepted,
                    "accepted_prefixes": accepted,
                    "sent_prefixes": int(af.get("sentPrefixCounter", -1)),
                }
            peers[str(key)] = {
                "local_as": int(peer.get("localAs", 0)),
                "remote_as": int(peer.get("remoteAs", 0)),
                "remote_id": str(peer.get("remoteRouterId", "")),
                "is_up": established,
                "is_enabled": not peer.get("adminShutDown", False),
                "description": str(peer.get("nbrDesc", "")),
                "uptime": int(peer.get("bgpTimerUpMsec", 0)) // 1000 if established else -1,
                "address_family": families,
            }
        result["global" if vrf == "default" else str(vrf)] = {"router_id": router_id, "peers": peers}
    return result


def ecmp_width_from_frr(
    route_tables: Iterable[Mapping[str, Any]], prefixes: Iterable[str] | None = None
) -> dict[str, int]:
    """`show ip route json` / `show ipv6 route json` -> {prefix: number of next hops installed in the FIB}.

    Counts next hops FRR reports as programmed (`fib: true`) on the selected route, i.e. what the kernel
    actually hashes over - the number ECMP verification cares about. A wanted prefix that is absent maps to 0.
    """
    wanted = None if prefixes is None else {_normalise(p) for p in prefixes}
    widths: dict[str, int] = {}
    for table in route_tables:
        for prefix, entries in table.items():
            key = _normalise(prefix)
            if wanted is not None and key not in wanted:
                continue
            best = 0
            for entry in entries if isinstance(entries, list) else []:
                if not entry.get("selected"):
                    continue
                best = max(best, sum(1 for nh in entry.get("nexthops", []) if nh.get("fib")))
            widths[key] = best
    for prefix in wanted or ():
        widths.setdefault(prefix, 0)
    return widths


def _normalise(prefix: str) -> str:
    try:
        return str(ipaddress.ip_network(prefix, strict=False))
    except ValueError:
        return prefix


def lldp_from_lldpctl(data: Mapping[str, Any]) -> dict[str, list[models.LLDPNeighborDict]]:
    """`lldpctl -f json0` (lldpd's list-everywhere format) -> NAPALM get_lldp_neighbors."""
    out: dict[str, list[models.LLDPNeighborDict]] = {}
    for agent in data.get("lldp", []) or []:
        for iface in agent.get("interface", []) or []:
            local = str(iface.get("name", ""))
            chassis = (iface.get("chassis") or [{}])[0]
            port = (iface.get("port") or [{}])[0]
            hostname = _first_value(chassis.get("name"))
            port_id = (port.get("id") or [{}])[0]
            # ifname/local ids are the remote port name; MAC ids are not, the description usually is
            remote = str(port_id.get("value", "")) if port_id.get("type") in ("ifname", "local") else ""
            remote = remote or _first_value(port.get("descr")) or str(port_id.get("value", ""))
            if local:
                out.setdefault(local, []).append({"hostname": hostname, "port": remote})
    return out


def _first_value(items: Any) -> str:
    if isinstance(items, list) and items and isinstance(items[0], Mapping):
        return str(items[0].get("value", ""))
    return ""


def loads_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what}: not JSON ({exc}): {text[:200]!r}") from exc
