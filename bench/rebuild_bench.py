"""Issue 17's "a rebuild after a one-knob change proportional to the devices it changes", as a curve: rebuild
time against the number of devices a change touches, beside `netfab lint` (a rebuild's floor: it must lint
and design the changed intent to know what changed) and a full build.

    python3 bench/rebuild_bench.py [-n 3] [--compare DIR] [INTENT]     # default: intent/clos3-100k.yaml

Each change alternates between two versions of the intent, so every run is a change and every tree it
rebuilds is the previous run's (the usual case):

  comment            a YAML comment: the intent's bytes change, the validated intent does not (since a82faf1
                     the build sees that after linting and restamps the manifest: no design, no render)
  superspine loops   the superspines' loopback pool: 28 switch configs (and the inventory)
  spine loops        the spines' loopback pool: 512 switch configs
  leaf loops         the leaves' loopback pool: 6,144 switch configs
  PFC watchdog       the watchdog's detect time: every switch config (6,684)

Per row: median wall and CPU (user + system of netfab and its workers) of -n whole-process runs pinned to 2
cores, and the files the last run wrote. The fit is wall = fixed + per-device x devices over the rows of
changes that change a device (least squares); "fixed - lint" is what a rebuild of a changed design costs
beyond linting the intent.
--compare DIR runs another source tree (e.g. an export of an older commit) beside it, change by change.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_bench import _CPU, _run  # bench/ is a folder of scripts, not a package

REPO = Path(__file__).resolve().parents[1]
WRITTEN = re.compile(r"\(([\d,]+) files, ([\d,]+) written\)")
CONFIGS = re.compile(r"^\s*([\d,]+) \S+ configs changed", re.M)
"""The build summary's per-role line, e.g. '  6,144 leaf configs changed'."""


@dataclass(frozen=True)
class Change:
    label: str
    old: str
    new: str


CHANGES = (
    Change("comment", "", "# a comment the bench adds\n"),
    Change("superspine loops", "superspine: 10.0.0.0/24", "superspine: 10.0.1.0/24"),
    Change("spine loops", "spine: 10.0.4.0/22", "spine: 10.0.8.0/22"),
    Change("leaf loops", "leaf: 10.0.32.0/19", "leaf: 10.0.64.0/19"),
    Change("PFC watchdog", "detect: 200ms", "detect: 300ms"),
)


@dataclass
class Row:
    wall: list[float]
    cpu: list[float]
    written: int = 0
    devices: int = 0
    """Switch configs the last run changed, from its summary."""

    @property
    def median(self) -> float:
        return statistics.median(self.wall)


def _variant(intent: Path, work: Path, change: Change, which: int) -> Path:
    """The intent (which=0) or its change (1); a change with no `old` appends `new`."""
    text = intent.read_text(encoding="utf-8")
    if change.old not in text:
        raise SystemExit(f"{intent.name}: {change.label!r} needs {change.old!r} in the intent (clos3-100k has it)")
    changed = text.replace(change.old, change.new, 1) if change.old else text + change.new
    out = work / f"{change.label.replace(' ', '-')}-{which}" / intent.name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text if which == 0 else changed, encoding="utf-8")
    return out


def _timed(rows: dict[str, Row], key: str, checkout: Path, *args: str) -> str:
    wall, _, err = _run(checkout, *args)
    row = rows.setdefault(key, Row([], []))
    row.wall.append(wall)
    row.cpu.append(_CPU[-1])
    found = WRITTEN.search(err)
    row.written = int(found.group(2).replace(",", "")) if found else 0
    row.devices = sum(int(n.replace(",", "")) for n in CONFIGS.findall(err))
    return err


def bench(
    checkouts: list[Path], intent: Path, runs: int, changes: tuple[Change, ...] = CHANGES
) -> list[dict[str, Row]]:
    results: list[dict[str, Row]] = [{} for _ in checkouts]
    with tempfile.TemporaryDirectory(prefix="rebuild-bench-") as tmp:
        work = Path(tmp)
        for i in range(runs):
            for n, (rows, checkout) in enumerate(zip(results, checkouts, strict=True)):
                _timed(rows, "lint (cold)", checkout, "lint", "--no-cache", str(intent))
                # Each empty build gets an output root of its own that stays until the bench ends: deleting a
                # tree right before the next build would time ext4's inode allocator (scale_bench.py says why).
                _timed(rows, "build (empty)", checkout, "build", str(intent), "-o", str(work / f"empty-{n}-{i}"), "-q")
        outs = [work / f"rebuilt-{n}" for n in range(len(checkouts))]
        for out, checkout in zip(outs, checkouts, strict=True):
            _run(checkout, "build", str(_variant(intent, work, CHANGES[0], 0)), "-o", str(out), "-q")
        for change in changes:
            # Tree by tree, not run by run: a rebuild deletes files, and on ext4 without a journal (these
            # machines) creating files minutes after a deletion nearby costs extra (build.py _write_file), so
            # interleaved runs would time each other's deletions.
            for rows, out, checkout in zip(results, outs, checkouts, strict=True):
                for i in range(runs):
                    variant = _variant(intent, work, change, (i + 1) % 2)
                    _timed(rows, change.label, checkout, "build", str(variant), "-o", str(out), "-q")
                # The next change starts from the intent as it is.
                _run(checkout, "build", str(_variant(intent, work, change, 0)), "-o", str(out), "-q")
    return results


def _fit(rows: dict[str, Row], changes: tuple[Change, ...]) -> tuple[float, float]:
    changed = [c for c in changes if rows[c.label].devices > 0]
    xs = [rows[c.label].devices for c in changed]
    ys = [rows[c.label].median for c in changed]
    slope, fixed = statistics.linear_regression(xs, ys)
    return fixed, slope


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("intent", nargs="?", type=Path, default=REPO / "intent" / "clos3-100k.yaml")
    parser.add_argument("-n", "--runs", type=int, default=3)
    parser.add_argument("--compare", type=Path, help="another netfab source tree, run change by change beside this one")
    parser.add_argument(
        "--change", action="append", choices=[c.label for c in CHANGES], help="only these changes (repeatable)"
    )
    args = parser.parse_args()
    changes = tuple(c for c in CHANGES if not args.change or c.label in args.change)
    checkouts = [REPO] + ([args.compare.resolve()] if args.compare else [])
    load = os.getloadavg()
    print(f"{args.intent.name}; median of {args.runs} whole-process runs pinned to 2 cores; load {load[0]:.2f}")
    results = bench(checkouts, args.intent.resolve(), args.runs, changes)
    devices = {c.label: results[0][c.label].devices for c in changes}
    names = ["this tree"] + ([str(args.compare)] if args.compare else [])
    header = f"{'work':<18} {'devices':>8} " + " ".join(f"{'wall':>7} {'CPU':>6} {'written':>8}" for _ in names)
    print(header + "   (" + " | ".join(names) + ")")
    for key in ["lint (cold)", "build (empty)", *(c.label for c in changes)]:
        count = f"{devices[key]:,}" if key in devices else ""
        cells = []
        for rows in results:
            row = rows[key]
            cells.append(f"{row.median:>6.2f}s {statistics.median(row.cpu):>5.2f}s {row.written:>8,}")
        print(f"{key:<18} {count:>8} " + " ".join(cells))
    for name, rows in zip(names, results, strict=True):
        if len({rows[c.label].devices for c in changes} - {0}) < 2:
            continue  # no line through one point
        fixed, slope = _fit(rows, changes)
        lint = rows["lint (cold)"].median
        print(
            f"{name}: rebuild = {fixed:.2f} s + {slope * 1000:.3f} ms x devices changed; "
            f"fixed - lint = {fixed - lint:.2f} s; full build {rows['build (empty)'].median:.2f} s"
        )
    load = os.getloadavg()
    print(f"load after {load[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
