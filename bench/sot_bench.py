"""Wall time of `sot push` (first push of a fresh fabric, then the idempotent second push) and `sot pull` of a
10,464-interface fabric (tests/sot/intents/bench-10k.yaml: 432 devices, 5,120 cables, 5,360 addresses)
against a real NetBox.

    python bench/sot_bench.py [-n 3] [--workers 4] [--push-max 60] [--pull-max 30] [--netbox URL]

Without --netbox it brings up the test NetBox (tests/sot/netbox_server.py: PyPI NetBox 4.7 in a Python 3.12
venv, PostgreSQL + Redis on loopback) and stops it afterwards; with --netbox it uses that one, the token from
NETFAB_NETBOX_TOKEN. Each run pushes the fabric under a new name (a new site), so every first push starts
from nothing. Prints each run, the medians and the load average, and exits 1 when a median is over budget.
Timed in-process from the loaded plan (the CLI adds its load/lint/design, about 1 s here, shown apart).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

INTENT = REPO / "tests" / "sot" / "intents" / "bench-10k.yaml"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=4, help="parallel requests (netfab sot --workers)")
    parser.add_argument("--server-workers", type=int, default=3, help="gunicorn workers of the test NetBox")
    parser.add_argument("--push-max", type=float, default=60.0)
    parser.add_argument("--pull-max", type=float, default=30.0)
    parser.add_argument("--netbox", help="an existing NetBox (token from NETFAB_NETBOX_TOKEN)")
    args = parser.parse_args()

    from netfab.cli.pipeline import load_plan
    from netfab.sot.client import NetBox, Options, token_from_env
    from netfab.sot.desired import desired_state
    from netfab.sot.pull import compare, read_as_built
    from netfab.sot.push import push
    from tests.sot.fabrics import relocated

    server = None
    if args.netbox:
        url, token = args.netbox, token_from_env()
    else:
        from tests.sot.netbox_server import start

        began = time.monotonic()
        server = start(workers=args.server_workers)
        url, token = server.url, server.token
        shown = ", ".join(f"{k} {v:.1f}" for k, v in sorted(server.timings.items()))
        print(f"test NetBox up in {time.monotonic() - began:.1f} s ({shown})", flush=True)
    pushes: list[float] = []
    again: list[float] = []
    pulls: list[float] = []
    try:
        scratch = Path(tempfile.mkdtemp(prefix="sot-bench-"))
        for run in range(1, args.runs + 1):
            # Its own name (site) and pools per run: NetBox's address table is global.
            path = relocated(INTENT, f"sot-10k-{os.getpid()}-{run}", 10 + 2 * run, scratch, mgmt_prefixlen=23)
            t0 = time.perf_counter()
            loaded = load_plan([path])
            desired = desired_state(loaded.intent, loaded.plan)
            prepare = time.perf_counter() - t0
            path.unlink()
            interfaces = len(desired.of("interface"))
            with NetBox(Options(url=url, token=token, workers=args.workers)) as nb:
                t0 = time.perf_counter()
                first = push(nb, desired)
                pushes.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                second = push(nb, desired)
                again.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                result = compare(loaded.plan, desired, read_as_built(nb, desired.site))
                pulls.append(time.perf_counter() - t0)
            slowest = sorted(first.seconds.items(), key=lambda kv: -kv[1])[:4]
            print(
                f"run {run}: {interfaces} interfaces, {len(first.changes)} objects written; push {pushes[-1]:.1f} s "
                f"(slowest kinds: {', '.join(f'{k} {v:.1f}' for k, v in slowest)}), second push {again[-1]:.1f} s "
                f"({len(second.changes)} changes), pull {pulls[-1]:.1f} s ({len(result.differences)} differences); "
                f"plan {prepare:.1f} s; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
                flush=True,
            )
            if second.changes or result.differences:
                print("FAIL: the second push changed something or the pull found differences", flush=True)
                return 1
    finally:
        if server is not None:
            server.stop()
    push_med, again_med, pull_med = (statistics.median(x) for x in (pushes, again, pulls))
    print(
        f"median of {args.runs}: push {push_med:.1f} s (budget {args.push_max:.0f}), second push {again_med:.1f} s, "
        f"pull {pull_med:.1f} s (budget {args.pull_max:.0f}); load average "
        + " ".join(f"{x:.2f}" for x in os.getloadavg())
    )
    return 0 if push_med <= args.push_max and pull_med <= args.pull_max else 1


if __name__ == "__main__":
    sys.exit(main())
