"""From samples to per-port signals over the window: counter deltas (wrap and reset handled), rates, peaks.

Everything is one numpy array per sample (ports x counters), so a 640,000-port fleet is a few array operations,
not a Python loop per counter. A counter that went down between two samples either wrapped (a 32-bit counter
near its top: the delta is taken modulo 2^32) or was reset (a reboot, `clear counters`, a qdisc replaced: the
delta is the new value, counted from zero); resets are counted per port so the report can say which windows
are partial. An absent counter is NaN: not measured, which is not the same as zero.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from netfab.health.model import CounterTable, DeviceSample, base, index, is_gauge

Array = npt.NDArray[np.float64]
WRAP32 = float(2**32)


@dataclass(slots=True)
class Series:
    """Counter values of every planned port over the samples: values[k, row, col], at[k, row] (seconds)."""

    keys: list[tuple[str, str]]
    names: list[str]
    values: Array
    at: Array
    at_error: Array
    """[k, row] the read instant's uncertainty (seconds)."""
    missing: dict[str, str]
    """Device -> why it has no data (unreadable in some sample)."""

    def col(self, name: str) -> int | None:
        try:
            return self.names.index(name)
        except ValueError:
            return None

    def part(self, rows: npt.NDArray[np.intp], lo: int, hi: int) -> Series:
        """Samples lo..hi (inclusive) of some rows, as a Series of its own."""
        return Series(
            [self.keys[r] for r in rows.tolist()], self.names, self.values[lo : hi + 1][:, rows],
            self.at[lo : hi + 1][:, rows], self.at_error[lo : hi + 1][:, rows], self.missing,
        )  # fmt: skip

    def cols(self, prefix: str, indexes: Sequence[int] | None = None) -> list[int]:
        """Columns of one counter family (`pfc_rx_us`), optionally only some priorities or queues."""
        return [
            i
            for i, n in enumerate(self.names)
            if base(n) == prefix and (indexes is None or index(n) is None or index(n) in indexes)
        ]


def series(keys: Sequence[tuple[str, str]], samples: Sequence[dict[str, DeviceSample]]) -> Series:
    """The planned ports' counters over the samples as one array: one block copy per device and sample."""
    row_of: dict[str, dict[str, int]] = {}
    for i, (dev, port) in enumerate(keys):
        row_of.setdefault(dev, {})[port] = i
    at = np.full((len(samples), len(keys)), np.nan)
    at_error = np.zeros((len(samples), len(keys)))
    missing: dict[str, str] = {}
    names: dict[str, int] = {}
    layouts: dict[tuple[str, ...], list[int]] = {}
    blocks: list[tuple[int, list[int], list[int], CounterTable]] = []
    placed: dict[str, tuple[tuple[str, ...], list[int], list[int]]] = {}
    for k, sample in enumerate(samples):
        for dev, rows in row_of.items():
            got = sample.get(dev)
            if got is None or got.error is not None:
                missing.setdefault(dev, got.error if got is not None and got.error else "not read")
                continue
            planned = list(rows.values())
            at[k, planned] = got.at
            at_error[k, planned] = got.at_error
            table = got.ports
            if not table.ports:
                continue
            cols = layouts.get(table.names)
            if cols is None:
                cols = layouts[table.names] = [names.setdefault(n, len(names)) for n in table.names]
            # Only planned ports are analysed; a device's other ports (loopback, management) are ignored. A
            # device reports the same ports in every sample, so the row mapping is worked out once per layout.
            mapped = placed.get(dev)
            if mapped is None or mapped[0] != table.ports:
                picked = [(i, rows[p]) for i, p in enumerate(table.ports) if p in rows]
                mapped = placed[dev] = (table.ports, [i for i, _ in picked], [r for _, r in picked])
            if mapped[2]:
                blocks.append((k, mapped[1], mapped[2], table))
    values = np.full((len(samples), len(keys), len(names)), np.nan)
    for k, src_rows, dst_rows, table in blocks:
        cols = layouts[table.names]
        src = table.data if len(src_rows) == len(table.ports) else table.data[src_rows]
        values[k][np.ix_(dst_rows, cols)] = src
    return Series(list(keys), list(names), values, at, at_error, missing)


@dataclass(slots=True)
class Deltas:
    """Interval deltas of the counters (gauge columns hold the later level instead) and interval lengths."""

    d: Array
    """[interval, row, col]"""
    dt: Array
    """[interval, row] seconds"""
    resets: npt.NDArray[np.int64]
    """[row] how many counter resets were seen"""


def deltas(s: Series) -> Deltas:
    v = s.values
    if v.shape[0] < 2:
        empty = np.zeros((0, v.shape[1], v.shape[2]))
        return Deltas(empty, np.zeros((0, v.shape[1])), np.zeros(v.shape[1], dtype=np.int64))
    before, after = v[:-1], v[1:]
    d = after - before
    gauge = np.array([is_gauge(n) for n in s.names], dtype=bool)
    with np.errstate(invalid="ignore"):
        down = (d < 0) & ~gauge
        wrapped = down & (before < WRAP32) & (before - after > WRAP32 / 2)
        reset = down & ~wrapped
    # In place: at fleet scale each of these arrays is ~70 MB.
    np.add(d, WRAP32, out=d, where=wrapped)
    np.copyto(d, after, where=reset)
    d[:, :, gauge] = after[:, :, gauge]
    dt = s.at[1:] - s.at[:-1]
    return Deltas(d, dt, reset.any(axis=2).sum(axis=0).astype(np.int64))


def total(dl: Deltas, cols: Sequence[int]) -> Array:
    """Sum over the window and over `cols` per port; NaN where none of the columns was measured."""
    if not cols or dl.d.shape[0] == 0:
        return np.full(dl.d.shape[1], np.nan)
    part = dl.d[:, :, list(cols)]
    measured = ~np.isnan(part).all(axis=(0, 2))
    out = np.nansum(part, axis=(0, 2))
    return np.where(measured, out, np.nan)


def per_column_total(dl: Deltas, col: int) -> Array:
    return total(dl, [col])


def gauge_max(s: Series, cols: Sequence[int]) -> Array:
    if not cols:
        return np.full(s.values.shape[1], np.nan)
    part = s.values[:, :, list(cols)]
    with np.errstate(invalid="ignore"), _quiet():
        out: Array = np.nanmax(part, axis=(0, 2))
    return out


def gauge_min(s: Series, cols: Sequence[int]) -> Array:
    if not cols:
        return np.full(s.values.shape[1], np.nan)
    with _quiet():
        out: Array = np.nanmin(s.values[:, :, list(cols)], axis=(0, 2))
    return out


def gauge_last(s: Series, col: int | None) -> Array:
    if col is None:
        return np.full(s.values.shape[1], np.nan)
    last = s.values[-1, :, col]
    return np.asarray(last, dtype=np.float64)


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence numpy's "All-NaN slice" warning: an unmeasured port is NaN on purpose."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


@dataclass(slots=True)
class Signals:
    """Per-port signals over the window, one array each, aligned with Series.keys (NaN = not measured)."""

    window_s: Array
    tx_bps: Array
    util: Array
    peak_tx_bps: Array
    busy: Array
    overlimit_rate: Array
    pause_share: Array
    """Largest share of the window the port's egress was paused on one lossless priority."""
    pause_prio: Array
    """That priority (NaN without per-priority duration counters)."""
    pause_rx_rate: Array
    pause_tx_rate: Array
    watermark: Array
    lossless_drops: Array
    ecn_marked: Array
    errors: Array
    fec_uncorrectable: Array
    flaps: Array
    up: Array
    rx_power: Array
    temperature: Array
    watchdog: Array
    cnp_sent: Array
    roce_ecn_marked: Array
    tx_packets: Array
    rx_packets: Array
    tx_bytes: Array
    rx_bytes: Array
    ber: Array
    """Pre-FEC bit error ratio over the window (bits corrected / bits received), where both are counted."""
    resets: npt.NDArray[np.int64]


def signals(s: Series, speeds: Array, lossless: Sequence[int]) -> Signals:
    dl = deltas(s)
    window = np.nansum(dl.dt, axis=0) if dl.dt.shape[0] else np.zeros(len(s.keys))
    window = np.where(window > 0, window, np.nan)
    tx_col = s.col("tx_bytes")
    tx = total(dl, [tx_col] if tx_col is not None else [])
    with np.errstate(invalid="ignore", divide="ignore"), _quiet():
        tx_bps = tx * 8 / window
        util = np.where(speeds > 0, tx_bps / speeds, np.nan)
        if tx_col is not None and dl.d.shape[0]:
            rate = dl.d[:, :, tx_col] * 8 / np.where(dl.dt > 0, dl.dt, np.nan)
            peak = np.nanmax(rate, axis=0)
            busy = np.where(dl.d.shape[0] >= 2, np.nanmean(dl.d[:, :, tx_col] > 0, axis=0), np.nan)
        else:
            peak = busy = np.full(len(s.keys), np.nan)
        shares = []
        prios = []
        for p in lossless:
            col = s.col(f"pfc_rx_us:{p}")
            if col is not None:
                shares.append(per_column_total(dl, col) / 1e6 / window)
                prios.append(p)
        if shares:
            stack = np.vstack(shares)
            filled = np.where(np.isnan(stack), -1.0, stack)
            best = np.argmax(filled, axis=0)
            pause_share = np.where(np.isnan(stack).all(axis=0), np.nan, np.nanmax(stack, axis=0))
            pause_prio = np.where(np.isnan(pause_share), np.nan, np.array(prios, dtype=np.float64)[best])
        else:
            pause_share = pause_prio = np.full(len(s.keys), np.nan)
        lossless_q = list(lossless)
        rx_bits = total(dl, s.cols("rx_bits"))
        return Signals(
            window_s=window,
            tx_bps=tx_bps,
            util=util,
            peak_tx_bps=peak,
            busy=busy,
            overlimit_rate=total(dl, s.cols("shaper_overlimits")) / window,
            pause_share=pause_share,
            pause_prio=pause_prio,
            pause_rx_rate=total(dl, s.cols("pfc_rx", lossless_q)) / window,
            pause_tx_rate=total(dl, s.cols("pfc_tx", lossless_q)) / window,
            watermark=gauge_max(s, s.cols("watermark_bytes") + s.cols("pg_watermark_bytes")),
            lossless_drops=total(
                dl, [c for c in s.cols("queue_drops") + s.cols("wred_drops") if index(s.names[c]) in lossless_q]
            ),
            ecn_marked=total(dl, s.cols("ecn_marked")),
            errors=total(dl, s.cols("rx_errors") + s.cols("tx_errors") + s.cols("fcs_errors")),
            fec_uncorrectable=total(dl, s.cols("fec_uncorrectable")),
            flaps=total(dl, s.cols("link_flaps")),
            up=gauge_last(s, s.col("oper_up")),
            rx_power=gauge_min(s, s.cols("rx_power_dbm")),
            temperature=gauge_max(s, s.cols("temperature_c")),
            watchdog=total(dl, s.cols("pfcwd_detected")),
            cnp_sent=total(dl, s.cols("cnp_sent")),
            roce_ecn_marked=total(dl, s.cols("roce_ecn_marked")),
            tx_packets=total(dl, s.cols("tx_packets")),
            rx_packets=total(dl, s.cols("rx_packets")),
            tx_bytes=tx,
            ber=total(dl, s.cols("fec_corrected_bits")) / np.where(rx_bits > 0, rx_bits, np.nan),
            rx_bytes=total(dl, s.cols("rx_bytes")),
            resets=dl.resets,
        )
