"""Whole-process wall and CPU seconds of `netfab sot push` (first push of a fresh fabric, then the idempotent
second push) and `netfab sot pull` of a 10,464-interface fabric (tests/sot/intents/bench-10k.yaml: 432
devices, 5,120 cables, 5,344 addresses) against a real NetBox.

    python bench/sot_bench.py [-n 3] [--requests 4] [--push-max 60] [--pull-max 30] [--netbox URL]
                              [--intent PATH]

Without --netbox it brings up the test NetBox (tests/sot/netbox_server.py: PyPI NetBox 4.7 in a Python 3.12
venv, PostgreSQL + Redis on loopback) and stops it afterwards; with --netbox it uses that one, the token from
NETFAB_NETBOX_TOKEN. Each run pushes the fabric under a new name (a new site, its own address pools), so
every first push starts from nothing. Each command is the CLI as a user runs it (load, lint, design, push),
timed as a child process: wall, and its user+sys CPU. When the bench started the NetBox it also reports the
server's CPU (gunicorn workers, PostgreSQL, Redis: the processes under the pids it started), since on one
2-core machine the server's CPU is the floor of the wall time. Prints each run, the medians and the load
average; exits 1 when a median is over budget or a second push changes anything or a pull finds a difference.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

INTENT = REPO / "tests" / "sot" / "intents" / "bench-10k.yaml"


def _tree_cpu(roots: list[int]) -> float:
    """user+sys seconds of the processes at and under `roots` (by parent pid), reaped children included."""
    parent: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        parent[int(entry)] = int(fields[1])
        # utime + stime, and cutime + cstime: the children it has reaped (PostgreSQL's backends exit with
        # their connection), whose CPU would otherwise vanish from the tree between two readings.
        ticks[int(entry)] = sum(int(f) for f in fields[11:15])
    wanted = set(roots)
    grew = True
    while grew:
        more = {pid for pid, ppid in parent.items() if ppid in wanted and pid not in wanted}
        wanted |= more
        grew = bool(more)
    return sum(ticks.get(pid, 0) for pid in wanted) / os.sysconf("SC_CLK_TCK")


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _cli(args: list[str], token: str) -> tuple[float, float, dict[str, object]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETFAB_")}
    env.update(PYTHONPATH=str(REPO), NETFAB_NETBOX_TOKEN=token)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "netfab.cli.app", *args, "-f", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
        check=False,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        raise SystemExit(f"netfab {' '.join(args[:2])} failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, cpu, json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("-n", "--runs", type=int, default=3)
    parser.add_argument("--requests", type=int, default=4, help="parallel requests (netfab sot --requests)")
    parser.add_argument("--server-workers", type=int, default=3, help="gunicorn workers of the test NetBox")
    parser.add_argument("--push-max", type=float, default=60.0)
    parser.add_argument("--pull-max", type=float, default=30.0)
    parser.add_argument("--netbox", help="an existing NetBox (token from NETFAB_NETBOX_TOKEN)")
    parser.add_argument(
        "--server-pid",
        type=int,
        action="append",
        default=[],
        help="with --netbox: a pid of that NetBox's processes (gunicorn master, postgres, redis), repeatable, "
        "so the server's CPU is reported too",
    )
    parser.add_argument("--intent", type=Path, default=INTENT, help="the fabric to push (default: bench-10k)")
    args = parser.parse_args()

    from netfab.sot.client import token_from_env
    from tests.sot.fabrics import relocated

    server = None
    server_pids: list[int] = list(args.server_pid)
    if args.netbox:
        url, token = args.netbox, token_from_env()
    else:
        from tests.sot.netbox_server import start

        began = time.monotonic()
        server = start(workers=args.server_workers)
        url, token = server.url, server.token
        server_pids = server.pids
        shown = ", ".join(f"{k} {v:.1f}" for k, v in sorted(server.timings.items()))
        print(f"test NetBox up in {time.monotonic() - began:.1f} s ({shown})", flush=True)
    steps = ("push", "second push", "pull")
    walls: dict[str, list[float]] = {s: [] for s in steps}
    failed = False
    try:
        scratch = Path(tempfile.mkdtemp(prefix="sot-bench-"))
        for run in range(1, args.runs + 1):
            # Its own name (site) and pools per run: NetBox's address table is global.
            name = f"sot-bench-{os.getpid()}-{run}"
            path = relocated(args.intent, name, 10 + 2 * run, scratch, mgmt_prefixlen=23)
            common = [str(path), "--netbox", url, "--requests", str(args.requests)]
            parts: list[str] = []
            for step, cmd in zip(
                steps,
                (["sot", "push", *common], ["sot", "push", *common], ["sot", "pull", *common, "--out", str(scratch)]),
                strict=True,
            ):
                server_cpu = _tree_cpu(server_pids)
                wall, cpu, report = _cli(cmd, token)
                server_cpu = _tree_cpu(server_pids) - server_cpu
                walls[step].append(wall)
                details = report["details"]
                assert isinstance(details, dict)
                if step == "push":
                    what = f"{details['changes']} objects written"
                elif step == "second push":
                    what = f"{details['changes']} changes"
                    failed |= details["changes"] != 0
                else:
                    what = f"{len(report['findings'])} differences"  # type: ignore[arg-type]
                    failed |= bool(report["findings"])
                parts.append(
                    f"{step} {wall:.1f} s wall, {cpu:.1f} s CPU"
                    + (f", server {server_cpu:.1f} s CPU" if server_pids else "")
                    + f" ({what}; load {_load()})"
                )
            print(f"run {run}: " + "; ".join(parts), flush=True)
    finally:
        if server is not None:
            server.stop()
    med = {s: statistics.median(v) for s, v in walls.items()}
    print(
        f"median of {args.runs}: push {med['push']:.1f} s (budget {args.push_max:.0f}), second push "
        f"{med['second push']:.1f} s, pull {med['pull']:.1f} s (budget {args.pull_max:.0f}); load {_load()}"
    )
    if failed:
        print("FAIL: a second push changed something or a pull found differences")
    over = med["push"] > args.push_max or med["second push"] > args.push_max or med["pull"] > args.pull_max
    return 1 if failed or over else 0


if __name__ == "__main__":
    sys.exit(main())
