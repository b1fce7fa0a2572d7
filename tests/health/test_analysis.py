"""The analysis on synthetic samples of the lab fleet: deltas (wrap, reset), peer scores, each finding kind, the
fleet grouping, the straggler odds. Counters are built per port so each test changes one thing only."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from netfab.health.analysis import Issue, analyse
from netfab.health.fleet import Fleet, fleet_of
from netfab.health.model import DeviceSample
from netfab.health.report import group_sentences, to_findings
from netfab.health.signals import WRAP32, deltas, series
from tests.analyze_lab.labcheck_helpers import lab_plan

Tweak = Callable[[str, str, int, dict[str, float]], None]


@pytest.fixture(scope="module")
def fleet() -> Fleet:
    return fleet_of(lab_plan())


def _samples(
    fleet: Fleet, tweak: Tweak | None = None, count: int = 2, dt: float = 1.0
) -> list[dict[str, DeviceSample]]:
    """Every planned port healthy: 1 GB/s each way, no errors, no pauses, up; `tweak` changes what a test needs."""
    out = []
    for k in range(count):
        ports: dict[str, dict[str, dict[str, float]]] = {}
        for dev, port in fleet.ports:
            c = {
                "tx_bytes": 1e9 * k, "rx_bytes": 1e9 * k, "tx_packets": 1e5 * k, "rx_packets": 1e5 * k,
                "rx_errors": 0.0, "tx_errors": 0.0, "oper_up": 1.0, "shaper_overlimits": 0.0, "pfc_rx:3": 0.0,
                "pfc_rx_us:3": 0.0, "pfc_tx:3": 0.0, "ecn_marked:3": 0.0, "queue_drops:3": 0.0, "link_flaps": 2.0,
            }  # fmt: skip
            if tweak is not None:
                tweak(dev, port, k, c)
            ports.setdefault(dev, {})[port] = c
        out.append({dev: DeviceSample.of(dev, 100.0 + k * dt, read) for dev, read in ports.items()})
    return out


def test_deltas_take_wraps_modulo_2_32_and_count_from_zero_after_a_reset() -> None:
    keys = [("d", "p")]
    values = [4294967000.0, 200.0, 150.0]  # wrap (+496), then a reset (150 counted from zero)
    samples = [
        {"d": DeviceSample.of("d", float(k), {"p": {"tx_bytes": v, "oper_up": 1.0}})} for k, v in enumerate(values)
    ]
    s = series(keys, samples)
    dl = deltas(s)
    col = s.col("tx_bytes")
    assert col is not None
    assert dl.d[:, 0, col].tolist() == [WRAP32 - 4294967000.0 + 200.0, 150.0]
    assert dl.resets.tolist() == [1]
    gauge = s.col("oper_up")
    assert gauge is not None and dl.d[:, 0, gauge].tolist() == [1.0, 1.0]  # gauges keep their level


def test_a_healthy_fabric_has_no_findings_and_barrier_bytes_do_not_make_a_tail(fleet: Fleet) -> None:
    report = analyse(fleet, _samples(fleet))
    assert report.issues == [] and report.storms == [] and not report.slow_links
    assert report.straggler["p_link"] == 0.0
    assert report.tiers["host"]["score"]["max"] == 0.0


def test_a_shaped_port_is_slow_but_up_and_only_it_is_named(fleet: Fleet) -> None:
    def shaped(dev: str, port: str, k: int, c: dict[str, float]) -> None:
        if (dev, port) == ("leaf3", "swp2"):
            c["shaper_overlimits"] = 5000.0 * k  # same bytes as every peer: only the integral signal differs

    report = analyse(fleet, _samples(fleet, shaped))
    assert [(p.meta.device, p.meta.port, p.slow_by) for p in report.slow_links] == [("leaf3", "swp2", "overlimit_rate")]
    (issue,) = [i for i in report.issues if i.rule == "HEALTH-SLOW-LINK"]
    assert "host4 eth0" in issue.message and "up and error-free" in issue.message
    assert report.straggler["p_link"] == pytest.approx(1 / 8)
    assert report.straggler["p_slow_step"]["8"] == pytest.approx(1 - (7 / 8) ** 8)  # type: ignore[index]


def test_pause_time_against_peers_names_the_paused_port(fleet: Fleet) -> None:
    def paused(dev: str, port: str, k: int, c: dict[str, float]) -> None:
        c["pfc_rx_us:3"] = (300_000.0 if (dev, port) == ("spine2", "swp4") else 1_000.0) * k

    report = analyse(fleet, _samples(fleet, paused))
    assert [(p.meta.device, p.meta.port) for p in report.slow_links] == [("spine2", "swp4")]
    assert report.slow_links[0].slow_by == "pause_share"


def test_a_pause_storm_is_traced_to_its_root_and_grouped(fleet: Fleet) -> None:
    # host3's NIC pauses leaf3 (swp1); leaf3 pauses both spines; the spines pause leaf1 and leaf2 uplinks.
    def storm(dev: str, port: str, k: int, c: dict[str, float]) -> None:
        if (dev, port) == ("leaf3", "swp1"):
            c["pfc_rx:3"] = 50_000.0 * k
        if dev == "leaf3" and port in ("swp3", "swp4"):
            c["pfc_tx:3"] = 40_000.0 * k
        if dev in ("spine1", "spine2") and port == "swp3":
            c["pfc_rx:3"] = 40_000.0 * k
        if dev in ("spine1", "spine2") and port in ("swp1", "swp2"):
            c["pfc_tx:3"] = 30_000.0 * k
        if dev in ("leaf1", "leaf2") and port in ("swp3", "swp4"):
            c["pfc_rx:3"] = 30_000.0 * k

    report = analyse(fleet, _samples(fleet, storm))
    (s,) = report.storms
    assert s.priority == 3
    assert s.root is not None and (s.root.device, s.root.port) == ("leaf3", "swp1")
    assert s.spread[0] == "leaf3" and set(s.spread) == {"leaf3", "spine1", "spine2", "leaf1", "leaf2"}
    (sentence,) = [x for x in group_sentences(report) if x.startswith("PFC pause storms")]
    assert "priority 3" in sentence and "root leaf3 swp1" in sentence
    assert any(f.rule_id == "HEALTH-PFC-STORM" for f in to_findings(report))


@pytest.mark.parametrize(
    ("counter", "value", "rule"),
    [
        ("queue_drops:3", 12.0, "HEALTH-LOSSLESS-DROP"),
        ("rx_errors", 40.0, "HEALTH-ERRORS"),
        ("pfcwd_detected:3", 1.0, "HEALTH-PFCWD"),
        ("link_flaps", 5.0, "HEALTH-FLAP"),
    ],
)
def test_each_problem_counter_gives_its_finding_on_that_port(
    fleet: Fleet, counter: str, value: float, rule: str
) -> None:
    def bad(dev: str, port: str, k: int, c: dict[str, float]) -> None:
        c.setdefault(counter, 0.0)
        if (dev, port) == ("leaf2", "swp1") and k == 1:
            c[counter] += value

    report = analyse(fleet, _samples(fleet, bad))
    hits = [(i.meta.device, i.meta.port) for i in report.issues if i.rule == rule]
    assert hits == [("leaf2", "swp1")]


def test_ecn_marks_without_dcqcn_and_congestion_without_marks(fleet: Fleet) -> None:
    def marks(dev: str, port: str, k: int, c: dict[str, float]) -> None:
        if (dev, port) == ("leaf1", "swp1"):
            c["ecn_marked:3"] = 100.0 * k

    off = Fleet(fleet.ports, fleet.targets, [], fleet.gpus, fleet.lossless, dcqcn=False)
    report = analyse(off, _samples(off, marks))
    assert [i.group for i in report.issues if i.rule == "HEALTH-ECN"] == ["marks without DCQCN"]

    def congested(dev: str, port: str, k: int, c: dict[str, float]) -> None:
        if (dev, port) == ("spine1", "swp1"):
            c["pfc_rx:3"] = 10.0 * k

    report = analyse(fleet, _samples(fleet, congested))
    assert [(i.meta.device, i.group) for i in report.issues if i.rule == "HEALTH-ECN"] == [
        ("spine1", "no marks with DCQCN")
    ]


def test_optics_outlier_and_a_down_link(fleet: Fleet) -> None:
    def optics(dev: str, port: str, k: int, c: dict[str, float]) -> None:
        if dev.startswith("leaf"):
            c["rx_power_dbm"] = -1.0 + 0.1 * int(port[-1])
        if (dev, port) == ("leaf4", "swp2"):
            c["rx_power_dbm"] = -9.5
        if (dev, port) == ("leaf1", "swp3"):
            c["oper_up"] = 0.0

    report = analyse(fleet, _samples(fleet, optics))
    assert [(i.meta.device, i.meta.port) for i in report.issues if i.rule == "HEALTH-OPTICS"] == [("leaf4", "swp2")]
    assert [(i.meta.device, i.meta.port) for i in report.issues if i.rule == "HEALTH-LINK-DOWN"] == [("leaf1", "swp3")]
    assert ("leaf1", "swp3") not in {(p.meta.device, p.meta.port) for p in report.slow_links}


def test_a_nic_port_with_many_times_its_peers_pre_fec_ber_is_an_optics_outlier(fleet: Fleet) -> None:
    def ber(dev: str, port: str, k: int, c: dict[str, float]) -> None:
        if dev.startswith("host"):  # mlx5: corrected bits over PHY bits, ~1e-8 on a healthy link
            c["rx_bits"] = 8e9 * k
            c["fec_corrected_bits"] = (80.0 + int(dev[-1])) * k
        if (dev, port) == ("host2", "eth1"):
            c["fec_corrected_bits"] = 40_000.0 * k  # 5e-6: FEC still corrects it, the link is still error-free

    report = analyse(fleet, _samples(fleet, ber))
    (issue,) = [i for i in report.issues if i.rule == "HEALTH-OPTICS"]
    assert (issue.meta.device, issue.meta.port, issue.group) == ("host2", "eth1", "pre-FEC BER")
    assert "pre-FEC BER 5.0e-06" in issue.message
    assert analyse(fleet, _samples(fleet, lambda d, p, k, c: ber(d, p, k, c) if p != "eth1" else None)).issues == []


def test_busy_long_at_a_low_peak_is_slow_with_enough_intervals(fleet: Fleet) -> None:
    # Barrier workload at 0.1 s sampling: healthy ports send their step in one interval and idle; the slow one
    # trickles the same bytes over every interval.
    def trickle(dev: str, port: str, k: int, c: dict[str, float]) -> None:
        slow = (dev, port) == ("leaf2", "swp2")
        c["tx_bytes"] = 1e6 * k if slow else 8e6 * ((k + 7) // 8)

    report = analyse(fleet, _samples(fleet, trickle, count=9, dt=0.1))
    assert [(p.meta.device, p.meta.port, p.slow_by) for p in report.slow_links] == [("leaf2", "swp2", "busy_low_peak")]


def test_an_unreadable_device_is_reported_and_not_analysed(fleet: Fleet) -> None:
    samples = _samples(fleet)
    samples[1]["spine1"] = DeviceSample("spine1", 101.0, error="ssh: connection refused")
    report = analyse(fleet, samples)
    assert report.unreadable == {"spine1": "ssh: connection refused"}
    assert all(i.meta.device != "spine1" for i in report.issues)
    assert [f.rule_id for f in to_findings(report)] == ["HEALTH-UNREADABLE"]
    assert not np.isnan(report.window_s)


def _tx_rx(report_issues: list[Issue]) -> list[tuple[str, str, str]]:
    return [(i.meta.device, i.meta.port, i.group) for i in report_issues if i.rule == "HEALTH-TX-RX"]


def test_what_one_end_sent_and_its_peer_never_received_is_named_in_packets_and_bytes(fleet: Fleet) -> None:
    def lossy(dev: str, port: str, k: int, c: dict[str, float]) -> None:
        if (dev, port) == ("spine1", "swp2"):  # faces leaf2 swp3: receives 2 % less than leaf2 sent
            c["rx_packets"] *= 0.98
            c["rx_bytes"] *= 0.98

    report = analyse(fleet, _samples(fleet, lossy))
    assert _tx_rx(report.issues) == [("leaf2", "swp3", "packets lost"), ("leaf2", "swp3", "bytes lost")]
    (packets, _) = [i for i in report.issues if i.rule == "HEALTH-TX-RX"]
    assert "sent 100,000 packets, the peer received 98,000: 2,000 (2.00%) lost on the way" in packets.message
    assert "spine1 swp2" in packets.message
    finding = next(f for f in to_findings(report) if f.rule_id == "HEALTH-TX-RX")
    assert finding.severity.value == "error" and finding.path == "leaf2:swp3"


def test_a_link_that_keeps_losing_is_named_over_a_longer_window(fleet: Fleet) -> None:
    def lossy(dev: str, port: str, k: int, c: dict[str, float]) -> None:
        if (dev, port) == ("spine1", "swp2"):  # faces leaf2 swp3: 2 % short in every interval
            c["rx_packets"] *= 0.98
            c["rx_bytes"] *= 0.98

    report = analyse(fleet, _samples(fleet, lossy, count=4))
    assert _tx_rx(report.issues) == [("leaf2", "swp3", "packets lost"), ("leaf2", "swp3", "bytes lost")]


def test_a_burst_between_two_reads_at_one_instant_is_not_loss(fleet: Fleet) -> None:
    """Collective traffic comes in steps: at the last read spine1 swp2 has not yet counted a step (20 MB, 2,000
    packets) that leaf2 swp3 already had, twice what the average rate carries in the 10 ms the reads were
    apart. Over three samples the gap is at that instant only (gone without the last sample) and nothing is
    named; with two samples there is nothing to tell it from loss by, and it is."""

    def step_in_flight(count: int) -> Tweak:
        def tweak(dev: str, port: str, k: int, c: dict[str, float]) -> None:
            if (dev, port) == ("spine1", "swp2") and k == count - 1:
                c["rx_bytes"] -= 20e6
                c["rx_packets"] -= 2_000

        return tweak

    def skewed(count: int) -> list[dict[str, DeviceSample]]:
        samples = _samples(fleet, step_in_flight(count), count=count)
        samples[-1]["spine1"].at += 0.01
        return samples

    assert _tx_rx(analyse(fleet, skewed(3)).issues) == []
    assert ("leaf2", "swp3", "bytes lost") in _tx_rx(analyse(fleet, skewed(2)).issues)


def test_a_peer_counting_more_than_was_sent_is_a_counter_defect(fleet: Fleet) -> None:
    def over(dev: str, port: str, k: int, c: dict[str, float]) -> None:
        if (dev, port) == ("host3", "eth1"):  # faces leaf4 swp1
            c["rx_packets"] *= 1.05

    report = analyse(fleet, _samples(fleet, over))
    assert _tx_rx(report.issues) == [("leaf4", "swp1", "packets overcounted")]
    assert "more than were sent (a counter defect on one end)" in report.issues[-1].message


def test_ends_read_apart_may_differ_by_what_the_link_carried_meanwhile(fleet: Fleet) -> None:
    """spine1 is read 50 ms after the others at the end of the window: at 100,000 packets/s its receive counters
    hold ~5,000 packets more than leaf2 had sent when leaf2 was read. That is skew, not loss; without the
    skew the same gap is a finding."""

    def ahead(dev: str, port: str, k: int, c: dict[str, float]) -> None:
        if dev == "spine1" and k == 1:
            c["rx_packets"] *= 1.05
            c["rx_bytes"] *= 1.05

    skewed = _samples(fleet, ahead)
    skewed[1]["spine1"].at += 0.05
    assert _tx_rx(analyse(fleet, skewed).issues) == []
    assert {d for d, _, _ in _tx_rx(analyse(fleet, _samples(fleet, ahead)).issues)} == {
        "leaf1",
        "leaf2",
        "leaf3",
        "leaf4",
    }
