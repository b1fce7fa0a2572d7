"""Every platform's health parsers on recorded outputs (tests/health/recordings/README.md says which are captured
on the lab and which are reconstructed from documentation). One row per (platform, source): the recording, the
port, and counters it must yield."""

from __future__ import annotations

import pytest

from netfab.health.collect import host_health
from netfab.health.parsers import ParseError, resolve
from netfab.platforms import registry
from netfab.platforms.model import HealthSource
from tests.health.conftest import RECORDINGS

# platform (or "host"), source id, file, port, expected counters (a subset)
TABLE: list[tuple[str, str, str, str, dict[str, float]]] = [
    ("frr", "ip_link", "ip_link.txt", "swp2", {"oper_up": 1.0, "rx_errors": 0.0, "tx_errors": 0.0, "link_flaps": 2.0}),
    ("frr", "tc_qdisc", "tc_qdisc.txt", "swp2", {"shaper_overlimits": 112.0, "shaper_backlog_bytes": 346723.0}),
    ("frr", "tc_qdisc", "tc_qdisc.txt", "swp3", {"shaper_overlimits": 0.0}),
    ("frr", "nft_counters", "nft_counters.txt", "swp1", {"ecn_marked": 0.0}),
    ("host", "ip_link", "ip_link.txt", "eth0", {"oper_up": 1.0, "rx_errors": 0.0}),
    (
        "host",
        "ethtool",
        "ethtool.eth0.txt",
        "eth0",
        {"pfc_rx:3": 3321.0, "pfc_rx_us:3": 10240.0, "pfc_tx:3": 11.0, "fec_corrected_bits": 1204.0, "link_flaps": 1.0},
    ),
    (
        "host",
        "hw_counters",
        "hw_counters.eth0.txt",
        "eth0",
        {"cnp_sent": 9912.0, "cnp_handled": 8810.0, "roce_ecn_marked": 10033.0, "out_of_sequence": 2.0},
    ),
    (
        "arista_eos",
        "interfaces",
        "interfaces.txt",
        "Ethernet2/1",
        {"rx_errors": 17.0, "fcs_errors": 17.0, "link_flaps": 6.0, "speed_bps": 4e11, "oper_up": 1.0, "rx_drops": 3.0},
    ),
    ("arista_eos", "pfc", "pfc.txt", "Ethernet2/1", {"pfc_rx": 88123.0, "pfc_tx": 12.0}),
    ("arista_eos", "ecn", "ecn.txt", "Ethernet1/1", {"ecn_marked:3": 1024.0, "ecn_marked:0": 0.0}),
    ("arista_eos", "transceivers", "transceivers.txt", "Ethernet2/1", {"rx_power_dbm": -7.92, "temperature_c": 44.8}),
    (
        "nvidia_cumulus",
        "pfc_stats",
        "pfc_stats.swp1.txt",
        "swp1",
        {"pfc_rx:3": 50211.0, "pfc_rx_us:3": 183420.0, "pfc_tx_us:3": 21.0},
    ),
    (
        "nvidia_cumulus",
        "egress_queues",
        "egress_queues.swp1.txt",
        "swp1",
        {"queue_drops:3": 4.0, "ecn_marked:3": 33211.0},
    ),
    ("nvidia_cumulus", "pfc_watchdog", "pfc_watchdog.swp1.txt", "swp1", {"pfcwd_detected:3": 2.0}),
    ("nvidia_cumulus", "link", "link.swp1.txt", "swp1", {"oper_up": 1.0, "link_flaps": 3.0, "speed_bps": 4e11}),
    ("sonic", "portstat", "portstat.txt", "Ethernet0", {"rx_packets": 1204331221.0, "oper_up": 1.0}),
    ("sonic", "portstat", "portstat.txt", "Ethernet8", {"oper_up": 0.0, "tx_drops": 3.0}),
    ("sonic", "pfcstat", "pfcstat.txt", "Ethernet0", {"pfc_rx:3": 1022311.0, "pfc_tx:3": 17.0, "pfc_rx:0": 0.0}),
    (
        "sonic",
        "pfcwd",
        "pfcwd.txt",
        "Ethernet0",
        {"pfcwd_detected:3": 3.0, "pfcwd_restored:3": 2.0, "pfcwd_detected:4": 0.0},
    ),
    (
        "sonic",
        "watermarks",
        "watermarks.txt",
        "Ethernet0",
        {"watermark_bytes:3": 4718592.0, "watermark_bytes:6": 1024.0},
    ),
    (
        "cisco_nxos",
        "interfaces",
        "interfaces.txt",
        "Ethernet1/2",
        {"oper_up": 0.0, "fcs_errors": 9.0, "speed_bps": 4e11},
    ),
    ("cisco_nxos", "pfc", "pfc.txt", "Ethernet1/1", {"pfc_rx": 4411.0, "pfc_tx": 2.0}),
    (
        "juniper_junos",
        "interfaces",
        "interfaces.txt",
        "et-0/0/1",
        {"oper_up": 0.0, "fcs_errors": 2.0, "fec_uncorrectable": 41.0},
    ),
    (
        "juniper_junos",
        "queues",
        "queues.txt",
        "et-0/0/0",
        {"queue_drops:3": 5.0, "ecn_marked:3": 88123.0, "wred_drops:0": 12.0},
    ),
]


def _source(platform: str, source_id: str) -> HealthSource:
    health = host_health() if platform == "host" else registry().spec(platform).health
    assert health is not None, platform
    return next(s for s in health.sources if s.id == source_id)


@pytest.mark.parametrize(("platform", "source_id", "file", "port", "expected"), TABLE)
def test_recorded_output_parses(
    platform: str, source_id: str, file: str, port: str, expected: dict[str, float]
) -> None:
    src = _source(platform, source_id)
    text = (RECORDINGS / platform / file).read_text(encoding="utf-8")
    parsed = resolve(src.parser)(text, port)
    assert port in parsed, sorted(parsed)
    got = {k: parsed[port].get(k) for k in expected}
    assert got == pytest.approx(expected)


def test_every_source_of_every_record_has_a_recording_row() -> None:
    covered = {(p, s) for p, s, *_ in TABLE}
    sources = {(name, s.id) for name, spec in registry().specs.items() if spec.health for s in spec.health.sources}
    sources |= {("host", s.id) for s in host_health().sources}
    assert sources == covered


def test_unsupported_counters_stay_absent_not_zero() -> None:
    text = (RECORDINGS / "sonic" / "pfcstat.txt").read_text()
    row = resolve(_source("sonic", "pfcstat").parser)(text, "")["Ethernet8"]
    assert "pfc_rx:1" not in row and row["pfc_rx:0"] == 0.0  # N/A is "not counted", never 0


@pytest.mark.parametrize(
    ("platform", "source_id", "text"),
    [
        ("frr", "ip_link", "Cannot find device"),
        ("arista_eos", "interfaces", '{"errors": ["invalid command"]}'),
        ("sonic", "pfcstat", "Error: pfcstat not found"),
        ("host", "ethtool", "Cannot get stats strings information: Operation not supported"),
        ("juniper_junos", "interfaces", "{}"),
        ("cisco_nxos", "interfaces", "% Invalid command at '^' marker."),
        ("nvidia_cumulus", "pfc_stats", "Error: The requested item does not exist."),
    ],
)
def test_garbage_is_a_parse_error_naming_the_command(platform: str, source_id: str, text: str) -> None:
    with pytest.raises(ParseError):
        resolve(_source(platform, source_id).parser)(text, "swp1")


def test_eos_declares_it_has_no_pause_duration_source_and_reports_over_eos_say_so() -> None:
    from netfab.health.fleet import coverage_notes

    eos = registry().spec("arista_eos").health
    assert eos is not None and set(eos.unavailable) == {"pfc_rx_us", "pfc_tx_us"}
    assert not any("_us" in s.id or "history" in s.command for s in eos.sources)
    (rx, tx) = coverage_notes({"arista_eos": 3, "frr": 2})
    assert rx.startswith("arista_eos (3 devices): no pfc_rx_us source: EOS publishes no per-priority pause-duration")
    assert tx.startswith("arista_eos (3 devices): no pfc_tx_us source")


def test_a_platform_cannot_declare_a_counter_netfab_does_not_know() -> None:
    from pydantic import ValidationError

    from netfab.platforms.model import Health

    src = {"id": "x", "command": "show x", "parser": "netfab.health.parsers.eos.interfaces", "doc": "d"}
    with pytest.raises(ValidationError, match="names no counter netfab reads: pfc_pause_ms"):
        Health.model_validate({"sources": [src], "unavailable": {"pfc_pause_ms": "no"}})
