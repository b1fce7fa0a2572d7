"""Finding the tail: which ports are slow but up, where PFC storms start and how they spread, and the rest of
the RoCE health checks, from the window's signals and the peer scores.

Slow-but-up is decided on time-integral signals only (NEXT_WAVE.md §B.3: in a barrier workload every link moves
the same bytes per step, so byte rates cannot tell the slow one): shaper overlimits, the share of time the port
was paused, queue watermarks, and, with at least three intervals, busy time against peak rate (busy for longer
than its peers at a lower peak = draining slowly). A port is named when one of them is an outlier against its
peers (robust score >= 3.5 above a floor worth a look) or past a level that is bad on its own.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np
import numpy.typing as npt

from netfab.health.fleet import Fleet
from netfab.health.model import DeviceSample, PortMeta
from netfab.health.scoring import Z_OUTLIER, peer_groups, quantiles, robust_scores
from netfab.health.signals import Array, Series, Signals, deltas, series, signals, total


@dataclass(frozen=True, slots=True)
class SlowSignal:
    name: str
    label: str
    floor: float
    """Peer-scale floor: less than this is never worth a look."""
    bad: float
    """At or above this the port is slow whatever its peers do."""
    unit: str


SLOW_SIGNALS = (
    SlowSignal("overlimit_rate", "shaper overlimits", 1.0, 10.0, "/s"),
    SlowSignal("pause_share", "time paused by PFC", 0.005, 0.05, ""),
    SlowSignal("watermark", "queue watermark", 16_384.0, float("inf"), " B"),
)
STORM_PAUSE_RATE = 1_000.0
"""PFC frames per second received on one lossless priority that make a storm (a quanta-65535 pause at 100G
lasts ~0.34 ms: 1,000/s holds a port ~a third of the time)."""
STORM_PAUSE_SHARE = 0.2
LINK_SKEW_PACKETS = 16.0
"""Packets either end may count apart whatever the timing (a frame on the wire at the read)."""
LINK_SKEW_SHARE = 0.001
"""Share of the sent packets the ends may disagree by: counters read a few instructions apart."""
LINK_BYTES_PER_PACKET = 8.0
"""Bytes per packet the ends may count differently (FCS, an 802.1Q tag: NOSes differ on what a byte is)."""
JOB_SIZES = (8, 64, 512, 4096)
BER_FLOOR = 1e-9
"""Pre-FEC BER below which nothing is worth a look (the peer scale's floor)."""
BER_RATIO = 10.0
"""A port's pre-FEC BER this many times its peers' median (and a robust outlier) is named."""


FIELDS = ("util", "tx_bps", "peak_tx_bps", "busy", "overlimit_rate", "pause_share", "pause_rx_rate",
          "pause_tx_rate", "watermark", "ecn_marked", "errors", "lossless_drops", "rx_power")  # fmt: skip


@dataclass(slots=True)
class PortHealth:
    """One port's window, for the report, the exposition and the picture (values are read from the window's
    signal arrays when asked for: a 640,000-port fleet does not need 640,000 dicts up front)."""

    meta: PortMeta
    signals: Signals
    row: int
    score: float
    slow_by: str = ""

    @property
    def values(self) -> dict[str, float]:
        return {f: float(getattr(self.signals, f)[self.row]) for f in FIELDS}

    def as_dict(self) -> dict[str, object]:
        m = self.meta
        return {
            "device": m.device,
            "port": m.port,
            "peer": f"{m.peer_device} {m.peer_port}",
            "tier": m.tier,
            "role": m.role,
            "rail": m.rail,
            "pod": m.pod,
            "plane": m.plane,
            "score": _round(self.score),
            "slow_by": self.slow_by,
            **{k: _round(v) for k, v in sorted(self.values.items())},
        }


def _round(v: float) -> float | None:
    return None if v is None or math.isnan(v) else round(v, 6)


class PortList(Sequence[PortHealth]):
    """Every planned port's PortHealth, made when asked for: a 640,000-port fleet is mostly healthy, and the
    report reads only its tail (slow links, top scores) and the ports with an issue."""

    __slots__ = ("metas", "scores", "signals", "slow_by")

    def __init__(self, metas: list[PortMeta], sig: Signals | None, scores: list[float], slow_by: list[str]) -> None:
        self.metas = metas
        self.signals = sig
        self.scores = scores
        self.slow_by = slow_by

    @classmethod
    def empty(cls) -> PortList:
        return cls([], None, [], [])

    def __len__(self) -> int:
        return len(self.metas)

    @overload
    def __getitem__(self, i: int) -> PortHealth: ...
    @overload
    def __getitem__(self, i: slice) -> list[PortHealth]: ...
    def __getitem__(self, i: int | slice) -> PortHealth | list[PortHealth]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        assert self.signals is not None
        return PortHealth(self.metas[i], self.signals, i, self.scores[i], self.slow_by[i])

    def __iter__(self) -> Iterator[PortHealth]:
        return (self[i] for i in range(len(self)))

    def slow(self) -> list[PortHealth]:
        return [self[i] for i, why in enumerate(self.slow_by) if why]

    def top(self, k: int) -> list[PortHealth]:
        """The k highest scores (ties by device, port), without sorting the whole fleet."""
        if k <= 0 or not self.metas:
            return []
        scores = np.asarray(self.scores, dtype=np.float64)
        if len(scores) > k:
            cut = np.partition(scores, len(scores) - k)[len(scores) - k]
            rows = np.flatnonzero(scores >= cut).tolist()
        else:
            rows = list(range(len(scores)))
        rows.sort(key=lambda i: (-self.scores[i], self.metas[i].device, self.metas[i].port))
        return [self[i] for i in rows[:k]]


@dataclass(slots=True)
class Storm:
    priority: int | None
    ports: list[PortMeta]
    root: PortMeta | None
    spread: list[str]
    """Devices the pauses reached, nearest the root first."""


@dataclass(slots=True)
class Issue:
    """One port with one problem: becomes one Finding (rule, port, what was measured)."""

    rule: str
    meta: PortMeta
    message: str
    actual: object = None
    expected: object = None
    group: str = ""
    """Fleet grouping key beyond the rule (a priority, a signal)."""


@dataclass(slots=True)
class HealthReport:
    samples: int
    window_s: float
    devices: list[str]
    unreadable: dict[str, str]
    ports: PortList
    issues: list[Issue] = field(default_factory=list)
    storms: list[Storm] = field(default_factory=list)
    tiers: dict[str, dict[str, dict[str, float | None]]] = field(default_factory=dict)
    straggler: dict[str, object] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def slow_links(self) -> list[PortHealth]:
        return self.ports.slow()


def analyse(fleet: Fleet, samples: Sequence[dict[str, DeviceSample]], job_gpus: int | None = None) -> HealthReport:
    keys = sorted(fleet.ports)
    metas = [fleet.ports[k] for k in keys]
    s = series(keys, samples)
    speeds = np.array([m.speed_bps for m in metas], dtype=np.float64)
    sig = signals(s, speeds, fleet.lossless)
    groups = peer_groups(metas)
    devices = sorted({t.device for t in fleet.targets})
    report = HealthReport(
        len(samples),
        float(np.nanmax(sig.window_s)) if np.isfinite(sig.window_s).any() else 0.0,
        devices,
        dict(sorted(s.missing.items())),
        PortList.empty(),
    )
    report.notes += fleet.notes
    if len(samples) < 2:
        report.notes.append("one sample: no rates (give --samples 2 or more); only levels and link state are judged")
    scores: dict[str, Array] = {}
    medians: dict[str, Array] = {}
    for sg in SLOW_SIGNALS:
        scores[sg.name], medians[sg.name] = robust_scores(getattr(sig, sg.name), groups, sg.floor)
    busy_med = robust_scores(sig.busy, groups, 0.05)[1]
    peak_med = robust_scores(sig.peak_tx_bps, groups, 1.0)[1]
    stacked = np.vstack([scores[sg.name] for sg in SLOW_SIGNALS]) if keys else np.zeros((1, 0))
    combined = np.nanmax(np.where(np.isnan(stacked), -np.inf, stacked), axis=0)
    combined = np.where(np.isfinite(combined), combined, 0.0)
    slow_by = _slow_by(sig, scores, busy_med, peak_med, s.values.shape[0])
    report.ports = PortList(metas, sig, combined.tolist(), slow_by)
    _port_issues(report, fleet, sig, metas, s.missing, groups)
    _link_cross_check(report, s, sig, metas, keys)
    report.storms = _storms(fleet, sig, metas)
    report.tiers = _tiers(metas, sig, combined)
    report.straggler = _straggler(report, fleet, job_gpus)
    resets = int(sig.resets.sum())
    if resets:
        report.notes.append(f"{resets} counter resets during the window (deltas counted from zero after each)")
    return report


def _slow_by(sig: Signals, scores: dict[str, Array], busy_med: Array, peak_med: Array, k: int) -> list[str]:
    """Per port, the signal that makes it slow ('' when none), in SLOW_SIGNALS order; a down port is not slow."""
    out = np.full(len(sig.up), "", dtype=object)
    with np.errstate(invalid="ignore"):
        undecided = ~((sig.up != 1.0) & ~np.isnan(sig.up))
        for sg in SLOW_SIGNALS:
            x = getattr(sig, sg.name)
            hit = undecided & (x >= sg.floor) & ((x >= sg.bad) | (scores[sg.name] >= Z_OUTLIER))
            out[hit] = sg.name
            undecided &= ~hit
        # Busy longer than its peers at a lower peak: the link drains slowly (needs >= 3 intervals to mean much).
        if k >= 4:
            hit = undecided & (busy_med > 0) & (peak_med > 0) & (sig.busy > 2 * busy_med)
            hit &= sig.peak_tx_bps < 0.5 * peak_med
            out[hit] = "busy_low_peak"
    result: list[str] = out.tolist()
    return result


def _fmt(v: float, unit: str = "") -> str:
    if unit == "":
        return f"{v:.1%}"
    return f"{v:,.0f}{unit}"


def _port_issues(
    report: HealthReport, fleet: Fleet, sig: Signals, metas: list[PortMeta], missing: dict[str, str], groups: list[int]
) -> None:
    labels = {sg.name: sg for sg in SLOW_SIGNALS}
    host = np.array([m.role == "host" for m in metas], dtype=bool)
    slow = np.array(report.ports.slow_by, dtype=object) != ""
    with np.errstate(invalid="ignore"):
        congested = (sig.pause_share > 0.005) | (sig.pause_rx_rate > 0) | (sig.watermark > 16_384)
        ecn = (sig.ecn_marked > 0) if not fleet.dcqcn else (congested & (sig.ecn_marked == 0))
        ecn |= host & (sig.roce_ecn_marked > 0) & (sig.cnp_sent == 0)
        worth = slow | (sig.up == 0) | (sig.errors > 0) | (sig.fec_uncorrectable > 0) | (sig.flaps > 0)
        worth |= (sig.lossless_drops > 0) | (sig.watchdog > 0) | ecn
    # Only the ports with something to say are looked at one by one: a fleet is mostly healthy.
    for i in np.flatnonzero(worth).tolist():
        ph, m = report.ports[i], metas[i]
        if m.device in missing:
            continue
        if ph.slow_by:
            if ph.slow_by == "busy_low_peak":
                what = (f"busy {sig.busy[i]:.0%} of the window at a peak of {sig.peak_tx_bps[i] / 1e6:,.0f} Mbit/s, "
                        "longer and slower than its peers")  # fmt: skip
            else:
                sg = labels[ph.slow_by]
                level = _fmt(float(getattr(sig, sg.name)[i]), sg.unit)
                what = f"{sg.label} {level} (score {ph.score:.1f} against its peers)"
            clean = (sig.errors[i] == 0 or np.isnan(sig.errors[i])) and sig.up[i] != 0
            tail = "; the link is up and error-free" if clean else ""
            report.issues.append(
                Issue("HEALTH-SLOW-LINK", m, f"{m.port} -> {m.peer_device} {m.peer_port}: slow: {what}{tail}",
                      actual=ph.values, group=ph.slow_by)
            )  # fmt: skip
        if sig.up[i] == 0:
            report.issues.append(Issue("HEALTH-LINK-DOWN", m, f"{m.port} -> {m.peer_device} {m.peer_port} is down"))
        if sig.errors[i] > 0 or sig.fec_uncorrectable[i] > 0:
            errs = int(np.nan_to_num(sig.errors[i])) + int(np.nan_to_num(sig.fec_uncorrectable[i]))
            report.issues.append(
                Issue(
                    "HEALTH-ERRORS", m, f"{m.port}: {errs:,} errors/uncorrectable FEC blocks in the window", actual=errs
                )
            )
        if sig.flaps[i] > 0:
            report.issues.append(Issue("HEALTH-FLAP", m, f"{m.port}: link flapped {int(sig.flaps[i])} times"))
        if sig.lossless_drops[i] > 0:
            report.issues.append(
                Issue("HEALTH-LOSSLESS-DROP", m, f"{m.port}: {int(sig.lossless_drops[i]):,} drops on lossless queues "
                      f"{', '.join(map(str, fleet.lossless))}", actual=int(sig.lossless_drops[i]))
            )  # fmt: skip
        if sig.watchdog[i] > 0:
            report.issues.append(
                Issue("HEALTH-PFCWD", m, f"{m.port}: the PFC watchdog detected {int(sig.watchdog[i])} storms/deadlocks")
            )
        congested = (sig.pause_share[i] > 0.005) or (sig.pause_rx_rate[i] > 0) or (sig.watermark[i] > 16_384)
        if not fleet.dcqcn and sig.ecn_marked[i] > 0:
            report.issues.append(
                Issue("HEALTH-ECN", m, f"{m.port}: {int(sig.ecn_marked[i]):,} ECN marks while the intent runs without "
                      "DCQCN (nothing reacts to them)", group="marks without DCQCN")
            )  # fmt: skip
        elif fleet.dcqcn and congested and sig.ecn_marked[i] == 0:
            report.issues.append(
                Issue("HEALTH-ECN", m, f"{m.port}: congested (pauses or a deep queue) but no ECN marks while "
                      "DCQCN is on", group="no marks with DCQCN")
            )  # fmt: skip
        elif m.role == "host" and sig.roce_ecn_marked[i] > 0 and sig.cnp_sent[i] == 0:
            report.issues.append(
                Issue("HEALTH-ECN", m, f"{m.port}: {int(sig.roce_ecn_marked[i]):,} CE-marked RoCE packets received but "
                      "no CNP sent (DCQCN's notification point is off)", group="marks without CNPs")
            )  # fmt: skip
    _optics(report, sig, metas, missing, groups)


def _link_cross_check(
    report: HealthReport, s: Series, sig: Signals, metas: list[PortMeta], keys: list[tuple[str, str]]
) -> None:
    """One end's tx against the other end's rx, packets and bytes, over the window: what left one end and never
    arrived was lost on the link (an optic, a cable) or miscounted (the counter bugs NEXT_WAVE.md §A.1 lists).

    The ends are read at different instants, so the allowance is the link's rate times how far apart the reads
    were (start and end of the window, each read's own uncertainty), plus LINK_SKEW_* for what no timing
    explains. Ports whose peer is not planned or not measured are not judged.

    The rate is the window's average, and collective traffic is not average: it comes in steps (the lab's are
    512 KiB each, a whole step inside a few ms), so one or two steps can fall between two reads that the
    average says carry half of one. That shows at one read instant only, while a link that loses keeps
    losing: with three samples or more a gap is named only when it also holds without the window's first
    sample and without its last, so no single instant's reads decide it."""
    if s.values.shape[0] < 2 or not keys:
        return
    row = {k: i for i, k in enumerate(keys)}
    peer = np.array([row.get((m.peer_device, m.peer_port), -1) for m in metas], dtype=np.int64)
    has_peer = peer >= 0
    p = np.where(has_peer, peer, 0)
    last = s.values.shape[0] - 1
    skews = _read_skew(s, p)
    measures = (
        ("packets", "tx_packets", "rx_packets", sig.tx_packets, sig.rx_packets, LINK_SKEW_PACKETS, 0.0),
        ("bytes", "tx_bytes", "rx_bytes", sig.tx_bytes, sig.rx_bytes, LINK_SKEW_PACKETS * 9216, LINK_BYTES_PER_PACKET),
    )
    for what, sent_name, got_name, sent, got, floor, per_packet in measures:
        gap, allowed = _gap_and_allowance(s, p, sent, got[p], sig.tx_packets, sig.window_s, floor, per_packet)
        bad = has_peer & np.isfinite(gap) & np.isfinite(allowed) & (np.abs(gap) > allowed)
        rows = np.flatnonzero(bad)
        if last >= 2 and rows.size:
            rows = _holds_without_ends(s, peer, rows, gap[rows], sent_name, got_name, floor, per_packet)
        for i in rows.tolist():
            m = metas[i]
            if m.device in s.missing or m.peer_device in s.missing:
                continue
            lost = gap[i] > 0
            share = abs(gap[i]) / sent[i] if sent[i] > 0 else math.inf
            how = (
                f"{gap[i]:,.0f} ({share:.2%}) lost on the way"
                if lost
                else f"{-gap[i]:,.0f} more than were sent (a counter defect on one end)"
            )
            report.issues.append(
                Issue(
                    "HEALTH-TX-RX",
                    m,
                    f"{m.port} -> {m.peer_device} {m.peer_port}: sent {sent[i]:,.0f} {what}, the peer received "
                    f"{got[p[i]]:,.0f}: {how}",
                    actual={"sent": float(sent[i]), "peer_received": float(got[p[i]])},
                    expected=f"within {allowed[i]:,.0f} {what} (read skew {skews[i] * 1000:.1f} ms)",
                    group=f"{what} {'lost' if lost else 'overcounted'}",
                )
            )


def _holds_without_ends(
    s: Series,
    peer: npt.NDArray[np.int64],
    rows: npt.NDArray[np.intp],
    gap: Array,
    sent_name: str,
    got_name: str,
    floor: float,
    per_packet: float,
) -> npt.NDArray[np.intp]:
    """The `rows` whose gap (`gap`, over the whole window) keeps its sign and stays beyond the allowance both
    without the window's first sample and without its last. Only these rows and their peers are re-read: at
    fleet scale that is a few."""
    last = s.values.shape[0] - 1
    both = np.unique(np.concatenate([rows, peer[rows]]))
    local = np.searchsorted(both, rows)
    local_peer = np.arange(len(both))  # a row kept only as a peer is not judged: its own row will do
    local_peer[local] = np.searchsorted(both, peer[rows])
    for lo, hi in ((0, last - 1), (1, last)):
        part = s.part(both, lo, hi)
        dl = deltas(part)
        part_gap, part_allowed = _gap_and_allowance(
            part, local_peer, total(dl, part.cols(sent_name)), total(dl, part.cols(got_name))[local_peer],
            total(dl, part.cols("tx_packets")), np.nansum(dl.dt, axis=0), floor, per_packet,
        )  # fmt: skip
        g, a = part_gap[local], part_allowed[local]
        keep = np.isfinite(g) & (np.abs(g) > a) & (np.sign(g) == np.sign(gap))
        rows, local, gap = rows[keep], local[keep], gap[keep]
    return rows


def _read_skew(s: Series, p: npt.NDArray[np.intp]) -> Array:
    """How far apart each port's and its peer's (row p) reads may have been at the first and the last sample,
    summed: the instants' difference and both reads' own uncertainty (seconds)."""
    first, last, err_first, err_last = s.at[0], s.at[-1], s.at_error[0], s.at_error[-1]
    skew: Array = np.abs(first - first[p]) + np.abs(last - last[p]) + err_first + err_first[p] + err_last + err_last[p]
    return skew


def _gap_and_allowance(
    s: Series,
    p: npt.NDArray[np.intp],
    sent: Array,
    received: Array,
    packets: Array,
    window_s: Array,
    floor: float,
    per_packet: float,
) -> tuple[Array, Array]:
    """sent - received per row of `s` over its samples, and what read timing and counting allow it to be."""
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = sent / window_s
        allowed: Array = floor + LINK_SKEW_SHARE * sent + per_packet * np.nan_to_num(packets) + rate * _read_skew(s, p)
        return sent - received, allowed


def _optics(
    report: HealthReport, sig: Signals, metas: list[PortMeta], missing: dict[str, str], groups: list[int]
) -> None:
    low, med = robust_scores(-sig.rx_power, groups, 0.5)
    hot, tmed = robust_scores(sig.temperature, groups, 2.0)
    # Pre-FEC BER against the peers, not a fixed limit: what a healthy link reads depends on its PAM4 lane
    # rate and FEC; a port ten times its peers' is an optic or cable degrading while the FEC still hides it.
    noisy, bmed = robust_scores(sig.ber, groups, BER_FLOOR)
    with np.errstate(invalid="ignore"):
        worth = (low >= Z_OUTLIER) | (hot >= Z_OUTLIER) | (noisy >= Z_OUTLIER)
    for i in np.flatnonzero(worth).tolist():
        m = metas[i]
        if m.device in missing:
            continue
        if low[i] >= Z_OUTLIER and (-med[i]) - sig.rx_power[i] >= 2.0:
            report.issues.append(
                Issue("HEALTH-OPTICS", m, f"{m.port}: receive power {sig.rx_power[i]:.1f} dBm, "
                      f"{(-med[i]) - sig.rx_power[i]:.1f} dB below its peers", group="rx power")
            )  # fmt: skip
        if noisy[i] >= Z_OUTLIER and sig.ber[i] >= BER_RATIO * max(float(bmed[i]), BER_FLOOR):
            times = sig.ber[i] / max(float(bmed[i]), BER_FLOOR)
            report.issues.append(
                Issue("HEALTH-OPTICS", m, f"{m.port}: pre-FEC BER {sig.ber[i]:.1e}, {times:,.0f}x its peers' "
                      f"{bmed[i]:.1e}", actual=float(sig.ber[i]), group="pre-FEC BER")
            )  # fmt: skip
        if hot[i] >= Z_OUTLIER and sig.temperature[i] - tmed[i] >= 10:
            report.issues.append(
                Issue("HEALTH-OPTICS", m, f"{m.port}: optics at {sig.temperature[i]:.0f} C, "
                      f"{sig.temperature[i] - tmed[i]:.0f} C above its peers", group="temperature")
            )  # fmt: skip


def _storms(fleet: Fleet, sig: Signals, metas: list[PortMeta]) -> list[Storm]:
    """Ports paused hard, per priority, and where the pauses start.

    A paused port is held by its peer (the pauser). The storm's origin is a pauser that no switch pauses: a NIC
    (a slow receiver; the root is the switch port facing it) or a switch paused only by NICs (the root is its
    port a NIC pauses). From the root the pauses spread upstream, device by device (`spread`)."""
    with np.errstate(invalid="ignore"):
        hard = (sig.pause_rx_rate >= STORM_PAUSE_RATE) | (sig.pause_share >= STORM_PAUSE_SHARE)
    paused: list[int] = np.flatnonzero(hard).tolist()
    by_prio: dict[int | None, list[int]] = {}
    for i in paused:
        p = sig.pause_prio[i]
        by_prio.setdefault(None if math.isnan(p) else int(p), []).append(i)
    storms = []
    for prio, rows in sorted(by_prio.items(), key=lambda kv: -1 if kv[0] is None else kv[0]):
        role = {m.device: m.role for m in metas}
        held_by: dict[str, set[str]] = {}  # device -> the devices pausing it
        for i in rows:
            held_by.setdefault(metas[i].device, set()).add(metas[i].peer_device)
        pausers = {d for ds in held_by.values() for d in ds}

        origins = sorted(d for d in pausers if not _paused_by_switch(d, held_by, role))
        root: PortMeta | None = None
        switch_origins = [d for d in origins if role.get(d, "host") != "host" and d in held_by]
        nic_origins = [d for d in origins if role.get(d, "host") == "host"]
        if switch_origins:
            dev = switch_origins[0]
            root = next(metas[i] for i in rows if metas[i].device == dev)
        elif nic_origins:
            root = next((metas[i] for i in rows if metas[i].peer_device == nic_origins[0]), None)
        spread: list[str] = []
        if root is not None:
            frontier = [root.device]
            while frontier:
                dev = frontier.pop(0)
                if dev in spread:
                    continue
                spread.append(dev)
                frontier += sorted(d for d, ds in held_by.items() if dev in ds and d not in spread)
        storms.append(Storm(prio, [metas[i] for i in rows], root, spread))
    return storms


def _paused_by_switch(dev: str, held_by: dict[str, set[str]], role: dict[str, str]) -> bool:
    return any(role.get(x, "host") != "host" for x in held_by.get(dev, ()))


def _tiers(metas: list[PortMeta], sig: Signals, combined: Array) -> dict[str, dict[str, dict[str, float | None]]]:
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    tiers = np.array([m.tier for m in metas])
    for tier in sorted(set(tiers.tolist())):
        rows = tiers == tier
        out[tier] = {
            "score": quantiles(combined[rows]),
            "util": quantiles(sig.util[rows]),
            "peak_tx_bps": quantiles(sig.peak_tx_bps[rows]),
            "pause_share": quantiles(sig.pause_share[rows]),
            "overlimit_rate": quantiles(sig.overlimit_rate[rows]),
            "watermark": quantiles(sig.watermark[rows]),
        }
    return out


def _straggler(report: HealthReport, fleet: Fleet, job_gpus: int | None) -> dict[str, object]:
    """P(a job's step is slow) = 1-(1-p)^N: p is the measured share of slow GPU access links, N the job's GPUs
    (each GPU's collective crosses its own access link)."""
    ports = report.ports
    access = [i for i, m in enumerate(ports.metas) if m.tier == "host" and m.role != "host"]
    if not access:
        return {}
    slow = sum(1 for i in access if ports.slow_by[i])
    p = slow / len(access)
    sizes = sorted({n for n in (*JOB_SIZES, fleet.gpus, job_gpus or 0) if n > 0})
    return {
        "access_links": len(access),
        "slow_access_links": slow,
        "p_link": round(p, 6),
        "p_slow_step": {str(n): round(1 - (1 - p) ** n, 6) for n in sizes},
    }
