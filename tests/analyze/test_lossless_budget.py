"""Lossless budget: headroom per port class and per switch, ECN thresholds against BDP and the XOFF point."""

from __future__ import annotations

from analyze_helpers import example, small_clos3

from netfab.analyze.lossless_budget import analyze_lossless
from netfab.analyze.report import _lossless
from netfab.capabilities import capabilities_for
from netfab.core.findings import Severity
from netfab.design import design
from netfab.intent.qos import Qos
from netfab.lossless.ecn import bdp_bytes, path_rtt_us
from netfab.lossless.headroom import headroom


def test_clos3_headroom_per_port_class_uses_the_shared_formula() -> None:
    intent, plan = example("clos3-24k")
    budget = analyze_lossless(intent, plan)
    ports = {(p.role, p.link): p for p in budget.ports}
    buf = capabilities_for("arista_eos", "4.33.1F").buffer
    long_haul = headroom(400, 300, 9216, cell_bytes=buf.cell_bytes, mac_phy_delay_bytes=buf.mac_phy_delay_bytes)
    assert ports[("spine", "spine_superspine")].need.required_bytes == long_haul.required_bytes
    assert ports[("spine", "spine_superspine")].ports == 16 * 8 * 28  # 128 spines x 28 uplinks
    assert ports[("leaf", "host")].ports == 24_576
    assert budget.as_dict()["largest_required_bytes"] == long_haul.required_bytes
    # A spine reserves headroom for 192 downlinks (30 m) and 28 uplinks (300 m), one lossless priority.
    spine = next(s for s in budget.switches if s.role == "spine")
    down = ports[("spine", "leaf_spine")].need.required_bytes
    assert spine.lossless_ports == 220
    assert spine.reserved_bytes == 192 * down + 28 * long_haul.required_bytes
    # The example's spines declare Jericho2-class deep-buffer hardware but no buffer size: they are not rated
    # against another ASIC's planning figure (they were against a Tomahawk 3's 64 MB).
    assert spine.share is None and spine.basis == "not public" and spine.asic.startswith("Jericho2")


def test_ecn_thresholds_against_bdp_and_xoff() -> None:
    intent, plan = example("clos3-24k")
    # The example runs without DCQCN and so without ECN; put the default RoCE class (ECN 150 KB / 1.5 MB) back,
    # and declare a 64 MB buffer on every tier so the XOFF point is known.
    topo = intent.topology
    tiers = {
        role: tier.model_copy(update={"hardware": tier.hardware.model_copy(update={"buffer": 64_000_000})})
        for role, tier in (("leaf", topo.leaf), ("spine", topo.spine), ("superspine", topo.superspine))
        if tier is not None and tier.hardware is not None
    }
    intent = intent.model_copy(
        update={
            "qos": intent.qos.model_copy(update={"classes": Qos().classes}),
            "topology": topo.model_copy(update=tiers),
        }
    )
    ecn = analyze_lossless(intent, plan).as_dict()["ecn"]
    rtt = path_rtt_us([3, 30, 300, 300, 30, 3])  # host -> leaf -> spine -> superspine and back down
    bdp = bdp_bytes(400, rtt)
    up = ecn["spine_to_superspine"]
    assert up["bdp_bytes"] == bdp
    assert up["kmax_over_bdp"] == round(1_500_000 / bdp, 3)
    assert up["marks_before_pfc"] is True  # 1.5 MB against a ~32 MB dynamic-threshold XOFF point
    assert ecn["leaf_to_host"]["xoff_point_bytes"] is None  # a NIC is not a switch queue


def test_long_cables_eat_the_buffer_and_are_reported() -> None:
    intent, _ = small_clos3()
    topo = intent.topology
    eos = {"platform": "arista_eos", "os_version": "4.33.1F"}
    long = intent.model_copy(
        update={
            "topology": topo.model_copy(
                update={
                    "spine": topo.spine.model_copy(update={"uplink_cable_m": 10_000, **eos}),
                    "superspine": topo.superspine.model_copy(update=eos),  # type: ignore[union-attr]
                }
            )
        }
    )
    budget = analyze_lossless(long, design(long))
    # 10 km at 400G: 2 x 10,000 m / 2e8 m/s x 50 GB/s = 5 MB of cable alone per port. A superspine has 8 such
    # ports: ~40 MB of a 64 MB planning buffer.
    superspine = next(s for s in budget.switches if s.role == "superspine")
    assert superspine.lossless_ports == 8
    assert superspine.share is not None and superspine.share > 0.6
    findings = budget.findings("x.yaml")
    assert [f.rule_id for f in findings] == ["ANALYZE002"]
    assert findings[0].severity == Severity.WARNING
    assert "superspine" in findings[0].message
    # One verdict per budget: the headline of the same report never says ok beside that warning.
    doc = budget.as_dict()
    assert doc["headroom_ok"] and doc["verdict"] == "over the buffer"
    headline = _lossless(doc)[0]
    assert "OVER THE BUFFER" in headline and ": ok" not in headline
    short = analyze_lossless(intent, design(intent))
    assert short.verdict() == "ok" and ": ok;" in _lossless(short.as_dict())[0]


def test_lab_has_no_switch_buffer_to_compare_with() -> None:
    intent, plan = example("lab")
    budget = analyze_lossless(intent, plan)
    assert all(s.shared_bytes is None and s.share is None for s in budget.switches)
    assert budget.findings("lab.yaml") == []
    assert budget.verdict() == "not rated" and "not rated" in _lossless(budget.as_dict())[0]
