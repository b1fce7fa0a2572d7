"""The issue-17 targets as one table: lint, full build, no-op rebuild, one-knob rebuild, peak memory; whole
processes, median of -n runs, pinned to 2 cores (taskset) when there are more.

    python3 bench/scale_bench.py [-n 3] [--checkout DIR] [INTENT ...]      # default: clos3-100k, clos3-24k

--checkout runs another source tree's netfab (PYTHONPATH=DIR), e.g. an export of an older commit
(`git archive 5f2aa23 | tar -x -C /tmp/today`), so "before" and "after" print side by side from one command.

Rows:
  lint (cold)       `netfab lint --no-cache INTENT` (with the plan rules, as CI runs it on a changed intent)
  lint (cached)     `netfab lint INTENT` again, unchanged: answered from the lint cache (a private one)
  build (empty)     `netfab build` into an empty output root
  rebuild (same)    `netfab build` again, nothing changed (target: <= 1 s, and nothing written)
  rebuild (1 knob)  `netfab build` after the PFC watchdog's detect time changed (every switch config changes,
                    no host script does), alternating between two values so every run is a change
  files written     how many files the last one-knob rebuild wrote (new inodes), and the no-op rebuild's
peak RSS is the largest resident set of the netfab process over the runs (forked render workers share the
plan copy-on-write and are not added); CPU is user + system seconds of the process and its workers, which a
busy machine inflates far less than wall time. Targets for clos3-100k: lint <= 1 s, build <= 5 s, no-op <= 1 s,
peak <= 500 MB.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _cmd(checkout: Path) -> tuple[list[str], dict[str, str]]:
    pin = ["taskset", "-c", "0,1"] if shutil.which("taskset") and (os.cpu_count() or 1) > 2 else []
    env = {**os.environ, "PYTHONPATH": str(checkout), "NO_COLOR": "1"}
    return [*pin, sys.executable, "-m", "netfab.cli.app"], env


_CPU: list[float] = []
"""user + system CPU seconds of every run so far (the process and its forked workers), in run order."""


def _run(checkout: Path, *args: str) -> tuple[float, int, str]:
    """(wall seconds, peak RSS in KB, stderr) of one whole netfab process; its CPU seconds go to _CPU."""
    cmd, env = _cmd(checkout)
    start = time.perf_counter()
    proc = subprocess.Popen([*cmd, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    err = proc.stderr.read()
    # wait4, not wait: its rusage is this one process's (taskset execs netfab in place), so ru_maxrss is its peak.
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - start
    # Includes the render workers netfab reaped. On a loaded machine CPU seconds move far less than wall time.
    _CPU.append(usage.ru_utime + usage.ru_stime)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"netfab {' '.join(args)} exited {proc.returncode}:\n{err[-2000:]}")
    return elapsed, usage.ru_maxrss, err


def _knob(intent: Path, work: Path, which: int) -> Path:
    text = intent.read_text(encoding="utf-8")
    detect = "detect: 200ms"
    if detect not in text:
        raise SystemExit(f"{intent.name}: the bench's knob ({detect!r}) is not in it")
    out = work / f"knob{which}" / intent.name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text if which == 0 else text.replace(detect, "detect: 300ms"), encoding="utf-8")
    return out


def _fresh_inodes(tree: Path, before: dict[str, int]) -> int:
    return sum(1 for p in tree.rglob("*") if p.is_file() and before.get(str(p)) != p.stat().st_ino)


def _inodes(tree: Path) -> dict[str, int]:
    return {str(p): p.stat().st_ino for p in tree.rglob("*") if p.is_file()}


Row = tuple[list[float], int, list[float]]


def _row(results: list[tuple[float, int, str]]) -> Row:
    return [t for t, _, _ in results], max(r for _, r, _ in results), _CPU[-len(results) :]


def bench(checkout: Path, intent: Path, runs: int) -> dict[str, Row | str]:
    rows: dict[str, Row | str] = {}
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as tmp:
        work = Path(tmp)
        cached = (checkout / "netfab" / "cli" / "lint_cache.py").is_file()  # older trees have no lint cache
        no_cache = ["--no-cache"] if cached else []
        cold = [_run(checkout, "lint", *no_cache, str(intent)) for _ in range(runs)]
        rows["lint (cold)"] = _row(cold)
        if cached:
            os.environ["NETFAB_CACHE_DIR"] = str(work / "lint-cache")
            _run(checkout, "lint", str(intent))  # fills the cache
            rows["lint (cached)"] = _row([_run(checkout, "lint", str(intent)) for _ in range(runs)])
        out = work / "build"
        empty = []
        for _ in range(runs):
            shutil.rmtree(out, ignore_errors=True)
            empty.append(_run(checkout, "build", str(intent), "-o", str(out), "-q"))
        rows["build (empty)"] = _row(empty)
        tree = next(p for p in out.iterdir() if p.is_dir())
        same = []
        before = _inodes(tree)
        for _ in range(runs):
            same.append(_run(checkout, "build", str(intent), "-o", str(out), "-q"))
        noop_written = _fresh_inodes(tree, before)
        rows["rebuild (same)"] = _row(same)
        knob = []
        written = 0
        for i in range(runs):
            before = _inodes(tree)
            knob.append(_run(checkout, "build", str(_knob(intent, work, (i + 1) % 2)), "-o", str(out), "-q"))
            written = _fresh_inodes(tree, before)
        rows["rebuild (1 knob)"] = _row(knob)
        total = len(before)
        rows["files written"] = f"no-op: {noop_written:,} of {total:,}; 1 knob: {written:,} of {total:,}"
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("intents", nargs="*", type=Path)
    parser.add_argument("-n", "--runs", type=int, default=3)
    parser.add_argument("--checkout", type=Path, default=REPO, help="the netfab source tree to run")
    args = parser.parse_args()
    intents = args.intents or [REPO / "intent" / "clos3-100k.yaml", REPO / "intent" / "clos3-24k.yaml"]
    load = os.getloadavg()
    print(f"netfab from {args.checkout}; {os.cpu_count()} CPUs, pinned to 2; median of {args.runs} whole-process runs")
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'intent':<12} {'work':<17} {'median':>8} {'min':>8} {'max':>8} {'peak RSS':>9} {'CPU median':>11}")
    for intent in intents:
        for label, row in bench(args.checkout.resolve(), intent.resolve(), args.runs).items():
            if isinstance(row, str):
                print(f"{intent.stem:<12} {label:<17} {row}")
                continue
            times, rss, cpu = row
            print(
                f"{intent.stem:<12} {label:<17} {statistics.median(times):>7.2f}s {min(times):>7.2f}s "
                f"{max(times):>7.2f}s {rss / 1024:>7.0f}MB {statistics.median(cpu):>10.2f}s"
            )
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
