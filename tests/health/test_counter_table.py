"""The columnar counter table every device sample is stored as: raw device values, merging several sources'
tables, and reading it back as per-port counters (absent stays absent, never 0)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from netfab.health.model import CounterTable, DeviceSample
from netfab.health.signals import series


def test_rows_read_numbers_as_devices_print_them_and_leave_unsupported_ones_absent() -> None:
    t = CounterTable.from_rows(["swp1", "swp2"], ["a", "b"], [[1, "1,234"], ["N/A", None]])
    assert t["swp1"] == {"a": 1.0, "b": 1234.0}
    assert t["swp2"] == {}  # "N/A" and None are not measured, not zero
    assert math.isnan(t.data[1, 0])


def test_merge_joins_sources_and_the_later_measured_value_wins() -> None:
    ip = CounterTable.from_rows(["swp1", "swp2"], ["rx_bytes", "oper_up"], [[10, 1], [20, 0]])
    tc = CounterTable.from_rows(["swp2", "swp9"], ["shaper_overlimits", "oper_up"], [[5, None], [7, 1]])
    m = CounterTable.merge([ip, tc])
    assert m["swp1"] == {"rx_bytes": 10.0, "oper_up": 1.0}
    assert m["swp2"] == {"rx_bytes": 20.0, "oper_up": 0.0, "shaper_overlimits": 5.0}  # tc's None keeps ip's 0
    assert m["swp9"] == {"shaper_overlimits": 7.0, "oper_up": 1.0}
    same_ports = CounterTable.merge([ip, CounterTable.from_rows(["swp1", "swp2"], ["x"], [[1], [2]])])
    assert same_ports.names == ("rx_bytes", "oper_up", "x") and same_ports["swp2"]["x"] == 2.0


def test_a_table_of_the_wrong_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="shape"):
        CounterTable(["a"], ["x", "y"], np.zeros((1, 1)))


def test_series_places_each_device_block_on_the_planned_rows_only() -> None:
    keys = [("d", "p1"), ("d", "p2"), ("e", "p1")]
    samples = [
        {
            "d": DeviceSample.of("d", 1.0 + k, {"p2": {"x": 2.0 + k}, "lo": {"x": 99.0}, "p1": {"x": 1.0 + k}}),
            "e": DeviceSample.of("e", 1.5 + k, {"p1": {"y": 5.0}}),
        }
        for k in range(2)
    ]
    s = series(keys, samples)
    x, y = s.col("x"), s.col("y")
    assert x is not None and y is not None
    assert s.values[:, :2, x].tolist() == [[1.0, 2.0], [2.0, 3.0]]  # by port name, not output order; lo ignored
    assert np.isnan(s.values[:, 2, x]).all() and s.values[:, 2, y].tolist() == [5.0, 5.0]
    assert s.at.tolist() == [[1.0, 1.0, 1.5], [2.0, 2.0, 2.5]]
