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
  diff (1 knob)     `netfab diff` of the intent and its one-knob change (the pull request's summary)
  written (...)     how many files the no-op and the last one-knob rebuild wrote (new inodes)
peak RSS is the largest resident set of the netfab process over the runs (forked render workers share the
plan copy-on-write and are not added); CPU is user + system seconds of the process and its workers, which a
busy machine inflates far less than wall time. Targets for clos3-100k: lint <= 1 s, build <= 5 s, no-op <= 1 s,
peak <= 500 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bytecode import measured_env  # bench/ is a folder of scripts, not a package

REPO = Path(__file__).resolve().parents[1]


def _cmd(checkout: Path) -> tuple[list[str], dict[str, str]]:
    pin = ["taskset", "-c", "0,1"] if shutil.which("taskset") and (os.cpu_count() or 1) > 2 else []
    env = {**measured_env(checkout), "PYTHONPATH": str(checkout), "NO_COLOR": "1"}
    return [*pin, sys.executable, "-m", "netfab.cli.app"], env


_CPU: list[float] = []
"""user + system CPU seconds of every run so far (the process and its forked workers), in run order."""


def _run(checkout: Path, *args: str) -> tuple[float, int, str]:
    """(wall seconds, peak RSS in KB, stderr) of one whole netfab process; its CPU seconds go to _CPU."""
    cmd, env = _cmd(checkout)
    start = time.perf_counter()
    # cwd is the checkout: `python -m` puts the working directory first on sys.path, so run from another tree
    # it would import that tree's netfab whatever PYTHONPATH says.
    proc = subprocess.Popen(
        [*cmd, *args], env=env, cwd=checkout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
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
        # Each empty build gets its own output root and the trees stay until the bench ends: deleting one
        # right before the next build would time ext4's inode allocator, not netfab. Without a journal (this
        # machine kind's root filesystem) it skips every inode deleted in the last minutes (see
        # netfab/render/build.py _write_file): 19,000 files created just after a tree was removed cost 4-8 s of
        # system time. A rebuild replaces (deletes) its old tree, and the rows after this one time that as is.
        empty = []
        for i in range(runs):
            out = work / f"build-{i}"
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
        # A pull request's view of the same change: both intents designed, nothing written.
        a, b = str(_knob(intent, work, 0)), str(_knob(intent, work, 1))
        rows["diff (1 knob)"] = _row([_run(checkout, "diff", a, b, "--format", "json") for _ in range(runs)])
        total = len(before)
        rows["written (no-op)"] = f"{noop_written:,} of {total:,}"
        rows["written (1 knob)"] = f"{written:,} of {total:,}"
    return rows


def _median(row: Row) -> tuple[float, float]:
    times, _, cpu = row
    return statistics.median(times), statistics.median(cpu)


def _pipeline(args: argparse.Namespace, work: Path) -> dict[str, dict[str, float]]:
    """The offline audit (10,155 switches) and deploy engine (10,000 devices) benches, through their --json."""
    out: dict[str, dict[str, float]] = {}
    env = {**os.environ, "PYTHONPATH": str(args.checkout)}
    audit, deploy = work / "audit.json", work / "deploy.json"
    bench_dir = Path(__file__).resolve().parent
    subprocess.run(
        [sys.executable, str(bench_dir / "audit_bench.py"), "--pods", "41", "--no-online", "-n", str(args.runs),
         "--json", str(audit)], env=env, check=False,
    )  # fmt: skip
    if audit.is_file():
        scenarios = json.loads(audit.read_text(encoding="utf-8"))["scenarios"]
        worst = max(scenarios, key=lambda k: scenarios[k]["median_s"])
        out["audit"] = {**scenarios[worst], "devices": json.loads(audit.read_text(encoding="utf-8"))["devices"]}
        out["audit"]["scenario"] = worst
    subprocess.run(
        [sys.executable, str(bench_dir / "nornir_overhead.py"), "--hosts", "10000", "--rtt-ms", "50", "--workers",
         "100", "-n", str(args.runs), "--json", str(deploy)], env=env, check=False,
    )  # fmt: skip
    if deploy.is_file():
        out["deploy"] = json.loads(deploy.read_text(encoding="utf-8"))
    return out


Results = dict[str, dict[str, Row | str]]


def _targets(results: Results, compare: Results, extra: dict[str, dict[str, float]]) -> None:
    """Every issue-17 target beside its figure. 'wall' is judged as the target is written; 'CPU' says whether the
    work fits the budget at all on 2 quiet cores (budget x 1 for single-process work, x 2 for the build, whose
    rendering is split over both cores), which a loaded machine's wall time cannot show."""
    print()
    print("targets (clos3-100k unless said; wall median / CPU median; met? on wall, and on CPU for 2 quiet cores)")
    print(f"{'target':<44} {'wall':>8} {'CPU':>8}  {'budget':<22} {'wall':<5} {'CPU':<5}")

    def line(label: str, wall: float | None, cpu: float | None, budget: str, ok_wall: bool, ok_cpu: bool) -> None:
        w = f"{wall:7.2f}s" if wall is not None else "       -"
        c = f"{cpu:7.2f}s" if cpu is not None else "       -"
        print(f"{label:<44} {w:>8} {c:>8}  {budget:<22} {'yes' if ok_wall else 'NO':<5} {'yes' if ok_cpu else 'NO':<5}")

    big = results.get("clos3-100k")
    if big:
        for key, label, limit, cores in (
            ("lint (cold)", "lint, cold (no lint cache)", 1.0, 1),
            ("lint (cached)", "lint, unchanged intent (lint cache)", 1.0, 1),
            ("build (empty)", "build into an empty directory", 5.0, 2),
            ("rebuild (same)", "rebuild, nothing changed", 1.0, 1),
        ):
            row = big.get(key)
            if isinstance(row, tuple):
                wall, cpu = _median(row)
                line(label, wall, cpu, f"<= {limit:g} s", wall <= limit, cpu <= limit * cores)
        noop, knob = big.get("written (no-op)"), big.get("written (1 knob)")
        if isinstance(noop, str) and isinstance(knob, str):
            print(f"{'rebuild, nothing changed: files written':<44} {noop:>17}  {'0':<22}")
            print(f"{'rebuild, 1 knob: files written':<44} {knob:>17}  {'the 6,684 switch configs':<22}")
        rss = max(r[1] for r in big.values() if isinstance(r, tuple))
        print(f"{'peak RSS (netfab process, any row)':<44} {rss / 1024:>7.0f}MB {'':>8}  {'<= 500 MB':<22} "
              f"{'yes' if rss / 1024 <= 500 else 'NO':<5}")  # fmt: skip
    for name, rows in results.items():
        before = compare.get(name)
        if name == "clos3-100k" or not before:
            continue
        for key in ("lint (cold)", "build (empty)", "rebuild (same)", "rebuild (1 knob)", "diff (1 knob)"):
            now, then = rows.get(key), before.get(key)
            if isinstance(now, tuple) and isinstance(then, tuple):
                (w1, c1), (w0, c0) = _median(now), _median(then)
                budget = f"{w0:.2f} s / {c0:.2f} s CPU"
                line(f"{name} {key} vs --compare", w1, c1, budget, w1 <= w0 * 1.05, c1 <= c0 * 1.05)
    audit = extra.get("audit")
    if audit:
        label = f"offline audit, {int(audit['devices']):,} switches ({audit['scenario']})"
        line(label, audit["median_s"], audit["cpu_s"], "<= 10 s", audit["median_s"] <= 10, audit["cpu_s"] <= 20)
    deploy = extra.get("deploy")
    if deploy:
        ideal = deploy["ideal_s"]
        label = f"deploy engine, {int(deploy['hosts']):,} x 50 ms (x{deploy['ratio']:.2f})"
        # One process of threads: its CPU is bound by one core (the GIL), so it must fit inside 1.2 x ideal.
        line(label, deploy["median_s"], deploy["cpu_s"], f"<= 1.2 x {ideal:.0f} s", deploy["ratio"] <= 1.2,
             deploy["cpu_s"] <= 1.2 * ideal)  # fmt: skip


def _print_rows(intent: str, rows: dict[str, Row | str], tag: str = "") -> None:
    for label, row in rows.items():
        if isinstance(row, str):
            print(f"{tag}{intent:<12} {label:<17} {row}")
            continue
        times, rss, cpu = row
        print(
            f"{tag}{intent:<12} {label:<17} {statistics.median(times):>7.2f}s {min(times):>7.2f}s "
            f"{max(times):>7.2f}s {rss / 1024:>7.0f}MB {statistics.median(cpu):>10.2f}s"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("intents", nargs="*", type=Path)
    parser.add_argument("-n", "--runs", type=int, default=3)
    parser.add_argument("--checkout", type=Path, default=REPO, help="the netfab source tree to run")
    parser.add_argument(
        "--compare", type=Path, help="another source tree (e.g. /work/wt/base): its rows for every intent but 100k"
    )
    parser.add_argument("--pipeline", action="store_true", help="also the 10k-device audit and deploy engine benches")
    args = parser.parse_args()
    intents = args.intents or [REPO / "intent" / "clos3-100k.yaml", REPO / "intent" / "clos3-24k.yaml"]
    load = os.getloadavg()
    print(f"netfab from {args.checkout}; {os.cpu_count()} CPUs, pinned to 2; median of {args.runs} whole-process runs")
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'intent':<12} {'work':<17} {'median':>8} {'min':>8} {'max':>8} {'peak RSS':>9} {'CPU median':>11}")
    results: dict[str, dict[str, Row | str]] = {}
    compare: dict[str, dict[str, Row | str]] = {}
    for intent in intents:
        # Interleaved with the other tree, intent by intent, so both see the same load.
        results[intent.stem] = bench(args.checkout.resolve(), intent.resolve(), args.runs)
        _print_rows(intent.stem, results[intent.stem])
        if args.compare is not None and intent.stem != "clos3-100k":
            other = args.compare.resolve() / "intent" / intent.name
            compare[intent.stem] = bench(args.compare.resolve(), other if other.is_file() else intent, args.runs)
            _print_rows(intent.stem, compare[intent.stem], tag="cmp ")
    extra: dict[str, dict[str, float]] = {}
    if args.pipeline:
        with tempfile.TemporaryDirectory(prefix="scale-pipeline-") as tmp:
            extra = _pipeline(args, Path(tmp))
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    _targets(results, compare, extra)
    return 0


if __name__ == "__main__":
    sys.exit(main())
