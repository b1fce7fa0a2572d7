"""Wall time of `netfab analyze` as a whole process (startup, load, lint, design, 10,000 ECMP trials, files).

    python bench/analyze_bench.py [-n 5] [--trials 10000] [--max 30] [--pattern P --job-gpus N] [INTENT ...]

Runs `netfab analyze INTENT --trials N --format json --out TMP` pinned to two CPUs (the project's reference
box), N times per intent, and prints median/min/max wall time, the median CPU time the process used (user +
system: a figure that stays honest when other work shares the machine) and the peak RSS. Exits 1 when a
median exceeds --max seconds. The all-to-all target of issue 15:
`python bench/analyze_bench.py --trials 1000 --pattern alltoall --job-gpus 1024 --max 2 intent/meta-3tier.yaml`.
Runs `python -m netfab.cli.app` from the checkout, so it measures this tree, not an installed copy.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from bytecode import measured_env  # noqa: E402  (bench/ is a folder of scripts, not a package)

CPUS = 2


def command() -> list[str]:
    # `python -m` from the checkout (cwd=REPO) imports this tree; an installed console script may be older.
    return [sys.executable, "-m", "netfab.cli.app"]


def _pin() -> None:
    # Two cores, as the reference machine; a bigger box would flatter the figure.
    available = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, set(available[:CPUS]))


def measure(intent: Path, runs: int, trials: int, extra: list[str]) -> tuple[list[float], list[float], float]:
    walls, cpus, peak = [], [], 0.0
    with tempfile.TemporaryDirectory(prefix="netfab-analyze-bench-") as tmp:
        for _ in range(runs):
            argv = [*command(), "analyze", str(intent), "--trials", str(trials), *extra, "-f", "json", "--out", tmp]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run(
                argv, cwd=REPO, capture_output=True, text=True, preexec_fn=_pin, env=measured_env(REPO)
            )
            walls.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            peak = max(peak, after.ru_maxrss / 1024)  # the largest child so far, in MB
            if proc.returncode not in (0, 1):
                sys.exit(f"netfab analyze {intent} exited {proc.returncode}:\n{proc.stderr}")
    return walls, cpus, peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("intents", nargs="*", type=Path, default=[REPO / "intent" / "clos3-24k.yaml"])
    parser.add_argument("-n", "--runs", type=int, default=5)
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--max", type=float, default=30.0, help="budget for the median wall time, seconds")
    parser.add_argument("--pattern", default=None, help="ring, tree or alltoall (default: analyze's)")
    parser.add_argument("--job-gpus", type=int, default=None)
    args = parser.parse_args()
    extra = [
        *(["--pattern", args.pattern] if args.pattern else []),
        *(["--job-gpus", str(args.job_gpus)] if args.job_gpus else []),
    ]
    over = False
    print(
        f"{'intent':<22} {'trials':>7} {'runs':>4} {'median':>8} {'min':>8} {'max':>8} {'cpu':>8} {'peak':>8}"
        f"   on {CPUS} CPUs"
    )
    for intent in args.intents:
        walls, cpus, peak = measure(intent, args.runs, args.trials, extra)
        median = statistics.median(walls)
        over |= median > args.max
        print(
            f"{intent.name:<22} {args.trials:>7} {args.runs:>4} {median:>7.2f}s {min(walls):>7.2f}s "
            f"{max(walls):>7.2f}s {statistics.median(cpus):>7.2f}s {peak:>6.0f}MB"
        )
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
