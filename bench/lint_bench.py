"""Wall time of `netfab lint` as a whole process, the way CI runs it (startup and imports included).

    python bench/lint_bench.py [-n 15] [--max 1.0] [INTENT ...]

Prints median/min/max per intent and exits 1 when a median exceeds --max seconds (the budget is 1 s for
intent/clos3-24k.yaml on a 2-core box). Uses the `netfab` console script when installed, else
`python -m netfab.cli.app`. To find a slow import: python -X importtime -m netfab.cli.app lint INTENT.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from bytecode import measured_env  # noqa: E402  (bench/ is a folder of scripts, not a package)


def command() -> list[str]:
    script = shutil.which("netfab")
    return [script] if script else [sys.executable, "-m", "netfab.cli.app"]


def measure(intent: Path, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(
            [*command(), "lint", str(intent)], cwd=REPO, capture_output=True, text=True, env=measured_env(REPO)
        )
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            sys.exit(f"netfab lint {intent} exited {proc.returncode}:\n{proc.stderr}")
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("intents", nargs="*", type=Path, default=[REPO / "intent" / "clos3-24k.yaml"])
    parser.add_argument("-n", "--runs", type=int, default=15)
    parser.add_argument("--max", type=float, default=1.0, help="budget for the median, seconds")
    args = parser.parse_args()
    over = False
    print(f"{'intent':<28} {'runs':>4} {'median':>8} {'min':>8} {'max':>8}   ({' '.join(command()[-3:])})")
    for intent in args.intents:
        times = measure(intent, args.runs)
        median = statistics.median(times)
        over |= median > args.max
        print(f"{intent.name:<28} {args.runs:>4} {median:>7.3f}s {min(times):>7.3f}s {max(times):>7.3f}s")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
