"""Deploy + verify on the namespace lab, as whole processes: `netfab deploy` of a change, then `netfab verify`.

    python bench/deploy_lab_bench.py [-n 5] [--intent intent/lab.yaml] [--confirm-timeout 120]

Brings the lab up once (`netfab lab up INTENT --prefix <unique> --mgmt-subnet <unique>`), then N times:
deploy a real change (underlay max_paths flips between 16 and 32, so every run changes every switch and
goes through the default staged playbook: backup, diff, commit with the device-side timer, post-checks
until BGP is back, confirm), then verify the whole fabric. Each command is timed from spawn to exit.
Prints the median (and min/max) of each, then tears the lab down, also on failure. Needs root and FRR.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def netfab(work: Path, *args: str, timeout: float = 600) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "COLUMNS": "200"}
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "netfab.cli.app", *args]
    proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=timeout, env=env)
    return time.perf_counter() - start, proc


def unique() -> tuple[str, str]:
    """A lab prefix and management /24 no other run on this machine uses (pid-derived, like the e2e tests,
    but in 172.20-23/16 so the two never collide)."""
    pid = os.getpid()
    return f"bd{pid % 100000}", str(ipaddress.IPv4Network(f"172.{20 + (pid // 250) % 4}.{pid % 250}.0/24"))


def summary(name: str, times: list[float]) -> str:
    med = statistics.median(times)
    return f"{name:<16} median {med:6.2f} s   min {min(times):6.2f}   max {max(times):6.2f}   (n={len(times)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--runs", type=int, default=5)
    parser.add_argument("--intent", type=Path, default=REPO / "intent" / "lab.yaml")
    parser.add_argument("--confirm-timeout", type=int, default=120)
    parser.add_argument("--keep-work", action="store_true", help="keep the work dir (journals, build)")
    args = parser.parse_args()
    prefix, subnet = unique()
    work = Path(tempfile.mkdtemp(prefix="nf-deploy-bench-"))
    intent = work / "intent.yaml"
    shutil.copy(args.intent, intent)
    up_s, up = netfab(work, "lab", "up", str(intent), "--prefix", prefix, "--mgmt-subnet", subnet)
    deploys: list[float] = []
    verifies: list[float] = []
    try:
        if up.returncode != 0:
            print(f"netfab lab up failed ({up.returncode}):\n{up.stdout}{up.stderr}", file=sys.stderr)
            return 2
        print(f"lab {prefix} ({subnet}) up in {up_s:.1f} s; {args.runs} deploy+verify runs")
        for i in range(args.runs):
            change = work / f"change{i}.yaml"
            change.write_text(f"underlay:\n  max_paths: {16 if i % 2 == 0 else 32}\n")
            d_s, dep = netfab(
                work, "deploy", str(intent), str(change), "--lab", prefix,
                "--confirm-timeout", str(args.confirm_timeout), "--no-diff",
            )  # fmt: skip
            (work / f"deploy{i}.log").write_text(dep.stdout + dep.stderr)  # kept with --keep-work
            if dep.returncode != 0:
                print(f"run {i}: netfab deploy exited {dep.returncode}:\n{dep.stderr[-3000:]}", file=sys.stderr)
                return 1
            v_s, ver = netfab(work, "verify", str(intent), str(change), "--lab", prefix)
            if ver.returncode != 0:
                print(f"run {i}: netfab verify exited {ver.returncode}:\n{ver.stdout[-3000:]}", file=sys.stderr)
                return 1
            deploys.append(d_s)
            verifies.append(v_s)
            last = dep.stderr.strip().splitlines()[-1] if dep.stderr.strip() else ""
            print(f"  run {i}: deploy {d_s:6.2f} s, verify {v_s:5.2f} s   [{last}]")
        print(summary("netfab deploy", deploys))
        print(summary("netfab verify", verifies))
        print(summary("deploy+verify", [d + v for d, v in zip(deploys, verifies, strict=True)]))
        return 0
    finally:
        down_s, down = netfab(work, "lab", "down", "--prefix", prefix)
        print(f"lab {prefix} down in {down_s:.1f} s" + ("" if down.returncode == 0 else f" (FAILED: {down.stderr})"))
        if not args.keep_work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
