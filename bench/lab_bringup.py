"""Lab bring-up benchmark: up to all-Established and to ECMP, FRR memory, teardown; median of N runs.

    python3 bench/lab_bringup.py --runs 3 --sizes 2x4,4x16,8x32

Needs root and FRR (see netfab.lab.preflight). Each size is brought up and torn down N times with its own
prefix; the figures are seconds since `up` started (milestones come from LabStatus.timings).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from netfab.lab import LabError, down, preflight, up
from netfab.lab.layout import Layout
from netfab.lab.sample import clos_spec
from netfab.lab.state import LabState


def frr_pss_mib(spec_prefix: str, workdir: Path) -> float:
    """Proportional set size of every FRR daemon of the lab (sshd excluded), in MiB."""
    state = LabState.load(Layout(spec_prefix, workdir).state_file)
    total_kib = 0
    for daemons in state.pids.values():
        for name, pid in daemons.items():
            if name == "sshd":
                continue
            try:
                for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                    if line.startswith("Pss:"):
                        total_kib += int(line.split()[1])
            except OSError:
                pass
    return total_kib / 1024


def one_run(spines: int, leaves: int, hosts: int, run: int, timeout: float) -> dict[str, float]:
    prefix = f"b{os.getpid() % 10000}r{run % 10}"
    subnet = f"172.19.{(os.getpid() + run) % 250}.0/24"
    spec = clos_spec(prefix, spines, leaves, hosts, mgmt_subnet=subnet)
    t0 = time.monotonic()
    try:
        status = up(spec, timeout=timeout)
        wall = time.monotonic() - t0
        pss = frr_pss_mib(prefix, spec.workdir)
    finally:
        t1 = time.monotonic()
        down(spec)
        teardown = time.monotonic() - t1
    return {
        "established": status.timings["established"],
        "ecmp": status.timings["ecmp"],
        "up": wall,
        "pss": pss,
        "down": teardown,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per size; the median is reported")
    parser.add_argument("--sizes", default="2x4,4x16,8x32", help="comma-separated SPINESxLEAVES")
    parser.add_argument("--hosts-per-leaf", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for convergence")
    args = parser.parse_args()
    if missing := preflight():
        print("cannot run the lab benchmark: " + "; ".join(missing), file=sys.stderr)
        return 2
    header = (
        f"{'fabric (spines x leaves x hosts/leaf)':<38} {'switches/netns':>14} {'Established':>12} "
        f"{'ECMP':>8} {'up()':>8} {'FRR PSS':>9} {'teardown':>9}"
    )
    print(f"median of {args.runs} run(s), seconds since up() started")
    print(header)
    print("-" * len(header))
    for size in args.sizes.split(","):
        spines, leaves = (int(x) for x in size.lower().split("x"))
        runs = []
        for r in range(args.runs):
            try:
                runs.append(one_run(spines, leaves, args.hosts_per_leaf, r, args.timeout))
            except LabError as exc:
                print(f"{size}: run {r + 1} failed: {exc}", file=sys.stderr)
                return 1
        med = {k: statistics.median(run[k] for run in runs) for k in runs[0]}
        switches = spines + leaves
        netns = switches + leaves * args.hosts_per_leaf
        print(
            f"{f'{spines} x {leaves} x {args.hosts_per_leaf}':<38} {f'{switches} / {netns}':>14} "
            f"{med['established']:>10.2f} s {med['ecmp']:>6.2f} s {med['up']:>6.2f} s "
            f"{med['pss']:>5.0f} MiB {med['down']:>7.2f} s",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
