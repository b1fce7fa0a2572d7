"""Linux (the lab's FRR switches, whitebox Linux, GPU servers): iproute2 JSON, tc JSON, nftables JSON, ethtool -S.

Sources: ip-link(8) `ip -s -s -j link show`, tc(8) `tc -s -j qdisc show`, nft(8) `nft -j list counters` (the
counters netfab's lab ECN marking names marked_<port>), ethtool(8) `ethtool -S <port>` with the mlx5 names of
the kernel's Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst.
"""

from __future__ import annotations

import re
from typing import Any

from netfab.health.model import CounterTable, PortCounters
from netfab.health.parsers import Parsed, ParseError, load_json, number, put

IP_LINK_COUNTERS = ("rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "rx_errors", "tx_errors", "rx_drops",
                    "tx_drops", "fcs_errors", "link_flaps", "oper_up")  # fmt: skip


def ip_link(text: str, port: str = "") -> CounterTable:
    links = load_json(text, "ip -s -s -j link")
    if not isinstance(links, list):
        raise ParseError("ip -s -s -j link: expected a list of links")
    ports: list[str] = []
    rows: list[list[Any]] = []
    empty: dict[str, Any] = {}
    for link in links:
        if not isinstance(link, dict):
            continue
        name, stats = link.get("ifname"), link.get("stats64")
        if not isinstance(name, str) or not isinstance(stats, dict):
            continue
        rx, tx = stats.get("rx", empty), stats.get("tx", empty)
        if not isinstance(rx, dict) or not isinstance(tx, dict):
            continue
        flags = link.get("flags")
        # operstate UNKNOWN is what loopbacks and some virtual links report while carrying traffic.
        up = link.get("operstate") in ("UP", "UNKNOWN") and isinstance(flags, list) and "LOWER_UP" in flags
        ports.append(name)
        rows.append([rx.get("bytes"), tx.get("bytes"), rx.get("packets"), tx.get("packets"), rx.get("errors"),
                     tx.get("errors"), rx.get("dropped"), tx.get("dropped"), rx.get("crc_errors"),
                     tx.get("carrier_changes"), 1.0 if up else 0.0])  # fmt: skip
    return CounterTable.from_rows(ports, IP_LINK_COUNTERS, rows)


TC_COUNTERS = ("shaper_overlimits", "shaper_drops", "shaper_backlog_bytes")


def tc_qdisc(text: str, port: str = "") -> CounterTable:
    """The root qdisc of each port: a shaper's overlimits, drops and backlog (noqueue ports report zeros)."""
    qdiscs = load_json(text, "tc -s -j qdisc")
    if not isinstance(qdiscs, list):
        raise ParseError("tc -s -j qdisc: expected a list of qdiscs")
    row: dict[str, list[Any]] = {}
    for q in qdiscs:
        if not isinstance(q, dict) or not q.get("root") or not isinstance(q.get("dev"), str):
            continue
        row[q["dev"]] = [q.get("overlimits"), q.get("drops"), q.get("backlog")]
    return CounterTable.from_rows(list(row), TC_COUNTERS, list(row.values()))


_MARKED = re.compile(r"^marked_(?P<port>[A-Za-z0-9_.-]+?)(?:_q(?P<queue>\d+))?$")


def nft_counters(text: str, port: str = "") -> Parsed:
    """ECN marks counted by nftables: counter marked_<port> (all marking queues) or marked_<port>_q<N>."""
    doc = load_json(text, "nft -j list counters")
    items = doc.get("nftables") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        raise ParseError("nft -j list counters: no nftables list")
    out: Parsed = {}
    for item in items:
        counter = item.get("counter") if isinstance(item, dict) else None
        if not isinstance(counter, dict):
            continue
        m = _MARKED.match(str(counter.get("name", "")))
        if m:
            key = "ecn_marked" if m.group("queue") is None else f"ecn_marked:{m.group('queue')}"
            put(out.setdefault(m.group("port"), {}), key, counter.get("packets"))
    return out


# mlx5 ethtool -S names (counters.rst) -> netfab's; the per-priority ones are matched below.
_MLX5 = {
    "rx_bytes_phy": "rx_bytes",
    "tx_bytes_phy": "tx_bytes",
    "rx_packets_phy": "rx_packets",
    "tx_packets_phy": "tx_packets",
    "rx_crc_errors_phy": "fcs_errors",
    "rx_symbol_err_phy": "rx_errors",
    "rx_corrected_bits_phy": "fec_corrected_bits",
    "rx_bits_phy": "rx_bits",
    "rx_pcs_symbol_err_phy": "fec_uncorrectable",
    "link_down_events_phy": "link_flaps",
    "rx_discards_phy": "rx_drops",
    "tx_discards_phy": "tx_drops",
    "rx_out_of_buffer": "rx_buffer_discards",
    "tx_pause_storm_warning_events": "pause_storm_events",
    "tx_pause_storm_error_events": "pause_storm_events",
    "np_cnp_sent": "cnp_sent",
    "rp_cnp_handled": "cnp_handled",
    "np_ecn_marked_roce_packets": "roce_ecn_marked",
    "out_of_sequence": "out_of_sequence",
}
_PRIO = re.compile(r"^(rx|tx)_prio(\d)_(pause|pause_duration)$")


def ethtool_stats(text: str, port: str = "") -> Parsed:
    """`ethtool -S PORT` ("NIC statistics:" then "name: value" lines) for one port, keyed by `port`."""
    lines = text.splitlines()
    if not lines or not lines[0].strip().lower().endswith("statistics:"):
        raise ParseError("ethtool -S: expected 'NIC statistics:' first")
    c: PortCounters = {}
    for line in lines[1:]:
        name, sep, value = line.strip().partition(":")
        n = number(value)
        if not sep or n is None:
            continue
        if m := _PRIO.match(name):
            direction, prio, what = m.groups()
            key = f"pfc_{direction}{'_us' if what == 'pause_duration' else ''}:{prio}"
            c[key] = c.get(key, 0.0) + n
        elif (mapped := _MLX5.get(name)) is not None:
            c[mapped] = c.get(mapped, 0.0) + n
    return {port: c}


def hw_counters(text: str, port: str = "") -> Parsed:
    """RDMA hw_counters as `grep . /sys/class/infiniband/<dev>/ports/1/hw_counters/*` prints them."""
    c: PortCounters = {}
    for line in text.splitlines():
        path, sep, value = line.rpartition(":")
        if not sep:
            continue
        name = path.rsplit("/", 1)[-1]
        n = number(value)
        if n is not None and (mapped := _MLX5.get(name)) is not None:
            c[mapped] = c.get(mapped, 0.0) + n
    if not c:
        raise ParseError("hw_counters: no known RDMA counter in the output")
    return {port: c}
