"""PFC headroom and ECN bounds: the worked examples of VENDOR_REFERENCE §7.1 reproduced to the byte."""

from __future__ import annotations

import pytest

from netfab.lossless.ecn import bdp_bytes, kmax_bounds, kmin_floor, path_rtt_us
from netfab.lossless.headroom import cable_round_trip_bytes, cell_occupancy, headroom, pause_quanta


def test_400g_100m_worked_example() -> None:
    h = headroom(400, 100, 9216)
    assert round(h.cable) == 50_000  # 400e9 b/s x 1.0 us / 8
    assert h.peer_response == 57_920  # 905 quanta x 512 b / 8
    assert h.pfc_frame == 64
    assert 2 * h.mtu == 18_432
    assert h.required_bytes == 126_416
    assert h.required_bytes == pytest.approx(126_400, rel=0.001)  # "~126,400 B ~ 123.5 KiB"
    assert h.required_bytes / 1024 == pytest.approx(123.5, abs=0.1)


def test_100g_100m_worked_example() -> None:
    h = headroom(100, 100, 9216)
    assert round(h.cable) == 12_500
    assert h.peer_response == 25_216  # 394 quanta
    assert h.required_bytes == 56_212  # "~56 KB"
    assert h.required_bytes == pytest.approx(56_000, rel=0.01)


def test_roce_frames_instead_of_jumbo() -> None:
    # "with RoCE 4K frames (~4200 B) instead of 9216: ~116,400 B"
    assert headroom(400, 100, 4200).required_bytes == pytest.approx(116_400, rel=0.001)


def test_sonic_cable_formula_differs_by_velocity_only() -> None:
    sonic = 2 * 100 * 400_000 * 1e9 / 198_000_000 / (8 * 1024)  # buffer_headroom_mellanox.lua
    assert round(sonic) == 49_321
    assert cable_round_trip_bytes(100, 400) == pytest.approx(sonic * 1.98 / 2 * 1.024, rel=1e-9)


@pytest.mark.parametrize(("gbps", "quanta"), [(10, 67), (25, 80), (100, 394), (400, 905), (800, 905), (1600, 1810),
                                              (1, 67)])  # fmt: skip
def test_pause_quanta(gbps: int, quanta: int) -> None:
    assert pause_quanta(gbps) == quanta


def test_cell_occupancy() -> None:
    assert cell_occupancy(0, 254) == 1.0
    assert cell_occupancy(50, None) == 1.0
    assert cell_occupancy(100, 128) == 1.0  # small cells: no inflation (SONiC applies it above 128 B)
    assert cell_occupancy(100, 256) == pytest.approx(4.0)
    assert cell_occupancy(50, 256) == pytest.approx(2.5)
    inflated = headroom(400, 100, 9216, small_packet_percent=50, cell_bytes=256)
    assert inflated.required_bytes % 256 == 0
    assert inflated.required_bytes > 2 * headroom(400, 100, 9216).required_bytes


def test_ecn_bounds() -> None:
    assert kmin_floor(9216) == 18_432
    rtt = path_rtt_us([3, 30, 30, 3])  # 2-tier: 3 switches, 66 m each way
    assert rtt == pytest.approx(0.66 + 6 + 2)
    assert bdp_bytes(400, rtt) == 433_000
    bounds = kmax_bounds(400, rtt)
    assert bounds.low == 433_000 and bounds.high == 50 * 433_000
    # The Cumulus default (1.5 MB) sits inside the bounds at 100G-800G on a 2-tier fabric.
    assert all(kmax_bounds(s, rtt).low <= 1_500_000 <= kmax_bounds(s, rtt).high for s in (100, 200, 400))
