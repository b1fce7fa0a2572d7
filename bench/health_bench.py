"""Wall time and peak memory of one `netfab health` report over an emulated fleet, and of one lab poll.

    python bench/health_bench.py [-n 3] [--switches 10000] [--ports 64] [--delay 0.05] [--max 60] [--max-mb 2048]
    python bench/health_bench.py --lab PREFIX [-n 3]        # one poll of a running lab (`netfab lab up`)

Fleet: every switch answers the frr platform record's health commands with outputs shaped like the recordings
in tests/health/recordings/frr/ (64 ports each), after a fake 50 ms round trip; one switch in a thousand has a
shaped port. One report = two samples of every switch, the analysis and the findings + JSON details (the
OpenMetrics exposition of every port is timed and shown apart), in a child process pinned to two CPUs: the
figures are its whole-process wall time, user+sys CPU seconds and peak RSS. Prints the median of the runs with
the load average beside it, and exits 1 when the median exceeds --max seconds or the peak exceeds --max-mb.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CPUS = 2


def _ip_link(ports: int, k: int) -> str:
    links = [
        {"ifname": f"swp{p}", "operstate": "UP", "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "mtu": 9216,
         "qdisc": "noqueue", "stats64": {
             "rx": {"bytes": 10**9 * k + p, "packets": 10**5 * k, "errors": 0, "dropped": 0, "over_errors": 0,
                    "multicast": 0, "length_errors": 0, "crc_errors": 0, "frame_errors": 0, "fifo_errors": 0,
                    "missed_errors": 0},
             "tx": {"bytes": 10**9 * k + p, "packets": 10**5 * k, "errors": 0, "dropped": 0, "carrier_errors": 0,
                    "collisions": 0, "aborted_errors": 0, "fifo_errors": 0, "window_errors": 0,
                    "heartbeat_errors": 0, "carrier_changes": 2}}}
        for p in range(1, ports + 1)
    ]  # fmt: skip
    return json.dumps(links)


def _tc(ports: int, k: int, shaped: int | None) -> str:
    return json.dumps(
        [
            {"kind": "tbf" if p == shaped else "noqueue", "handle": "1:", "dev": f"swp{p}", "root": True,
             "bytes": 10**9 * k, "packets": 10**5 * k, "drops": 0, "overlimits": 5000 * k if p == shaped else 0,
             "requeues": 0, "backlog": 0, "qlen": 0}
            for p in range(1, ports + 1)
        ]
    )  # fmt: skip


def fleet_run(
    switches: int, ports: int, delay: float, workers: int, with_openmetrics: bool = False
) -> dict[str, float]:
    """One report over the emulated fleet (run in the child process)."""
    from netfab.health.analysis import analyse
    from netfab.health.collect import Target, collect, commands_for
    from netfab.health.fleet import Fleet
    from netfab.health.model import PortMeta
    from netfab.health.openmetrics import exposition
    from netfab.health.report import details, to_findings
    from netfab.platforms import namespace_lab_platform

    t0, c0 = time.monotonic(), time.process_time()
    health = namespace_lab_platform().health
    assert health is not None
    names = [f"sw{i:05d}" for i in range(switches)]
    leaves = switches * 2 // 3
    metas: dict[tuple[str, str], PortMeta] = {}
    targets = []
    port_names = [f"swp{p}" for p in range(1, ports + 1)]
    for i, name in enumerate(names):
        leaf = i < leaves
        for p, port in enumerate(port_names, start=1):
            down = p <= ports // 2
            tier = "host" if leaf and down else "leaf_spine"
            direction = ("host" if down else "fabric_up") if leaf else "fabric_down"
            metas[(name, port)] = PortMeta(name, port, "leaf" if leaf else "spine", tier, direction,
                                           f"peer{i}-{p}", "eth0", 4e11, (i % 8) + 1 if leaf else None,
                                           i // 512, None)  # fmt: skip
        targets.append(Target(name, commands_for(health, [(p, "") for p in port_names])))
    fleet = Fleet(metas, targets, [], leaves * ports // 2, (3,), True)
    shaped = {names[i]: 5 for i in range(0, switches, 1000)}
    texts = {
        (k, s): [_ip_link(ports, k), _tc(ports, k, s), json.dumps({"nftables": []})] for k in (0, 1) for s in (None, 5)
    }
    t1, c1 = time.monotonic(), time.process_time()

    class FakeDriver:
        def __init__(self, k: int) -> None:
            self.k = k

        def run(self, target: Target) -> list[str]:
            time.sleep(delay)  # the device's round trip
            return texts[(self.k, shaped.get(target.device))]

    samples = [collect(targets, FakeDriver(k), workers) for k in (0, 1)]
    t2, c2 = time.monotonic(), time.process_time()
    report = analyse(fleet, samples)
    t3, c3 = time.monotonic(), time.process_time()
    findings = to_findings(report)
    json.dumps(details(report), default=str)
    t4, c4 = time.monotonic(), time.process_time()
    # The OpenMetrics exposition of every port (14 series each) is timed apart (--openmetrics): at fleet scale
    # it is what a scraper pulls, not part of the report an operator waits for, and it holds ~9 M lines.
    if with_openmetrics:
        exposition(report)
    t5 = time.monotonic()
    found = sorted((p.meta.device, p.meta.port) for p in report.slow_links)
    assert found == sorted((d, "swp5") for d in shaped), found[:5]
    return {"setup_s": t1 - t0, "collect_s": t2 - t1, "analyse_s": t3 - t2, "render_s": t4 - t3,
            "report_s": t4 - t1, "openmetrics_s": t5 - t4, "findings": len(findings), "ports": len(metas),
            "cpu": {"setup_s": c1 - c0, "collect_s": c2 - c1, "analyse_s": c3 - c2, "render_s": c4 - c3}}  # fmt: skip


def lab_poll(prefix: str, runs: int) -> list[float]:
    from netfab.health.collect import collect
    from netfab.health.fleet import fleet_of
    from netfab.health.lab import LabDriver
    from tests.analyze_lab.labcheck_helpers import lab_plan

    fleet = fleet_of(lab_plan())
    driver = LabDriver(prefix)
    try:
        collect(fleet.targets, driver)
        times = []
        for _ in range(runs):
            started = time.monotonic()
            sample = collect(fleet.targets, driver)
            times.append(time.monotonic() - started)
            bad = {d: s.error for d, s in sample.items() if s.error}
            assert not bad, bad
    finally:
        driver.close()
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--switches", type=int, default=10_000)
    ap.add_argument("--ports", type=int, default=64)
    ap.add_argument("--delay", type=float, default=0.05)
    ap.add_argument("--workers", type=int, default=256)
    ap.add_argument("--max", type=float, default=60.0)
    ap.add_argument("--max-mb", type=float, default=2048.0)
    ap.add_argument("--lab", metavar="PREFIX")
    ap.add_argument("--openmetrics", action="store_true", help="also render the exposition of every port")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(fleet_run(args.switches, args.ports, args.delay, args.workers, args.openmetrics)))
        return 0
    if args.lab:
        times = lab_poll(args.lab, args.n)
        print(f"lab poll ({args.lab}, 10 devices): median {statistics.median(times):.3f} s "
              f"(runs {', '.join(f'{t:.3f}' for t in times)}); load average {os.getloadavg()[0]:.2f}")  # fmt: skip
        return 0 if statistics.median(times) <= 1.0 else 1
    walls, cpus, peaks, parts = [], [], [], []
    for _ in range(args.n):
        argv = [sys.executable, __file__, "--child", "--switches", str(args.switches), "--ports", str(args.ports),
                "--delay", str(args.delay), "--workers", str(args.workers)]  # fmt: skip
        argv += ["--openmetrics"] if args.openmetrics else []
        started = time.monotonic()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run(argv, capture_output=True, text=True, preexec_fn=_pin, check=False)
        walls.append(time.monotonic() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr)
            return 2
        peaks.append(after.ru_maxrss / 1024)
        parts.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    med = statistics.median(walls)
    stage_cpu = ", ".join(f"{k[:-2]} {statistics.median(p['cpu'][k] for p in parts):.1f}" for k in parts[0]["cpu"])
    report = statistics.median(p["report_s"] for p in parts)
    print(
        f"health report, {args.switches} switches x {args.ports} ports ({parts[0]['ports']} ports), "
        f"{args.delay * 1000:.0f} ms per device: process median {med:.1f} s (runs "
        f"{', '.join(f'{w:.1f}' for w in walls)}; CPU {statistics.median(cpus):.1f} s), report median "
        f"{report:.1f} s (collect "
        f"{statistics.median(p['collect_s'] for p in parts):.1f} + analyse "
        f"{statistics.median(p['analyse_s'] for p in parts):.1f} + render "
        f"{statistics.median(p['render_s'] for p in parts):.1f}; OpenMetrics of every port "
        f"{statistics.median(p['openmetrics_s'] for p in parts):.1f} more); CPU per stage "
        f"{stage_cpu} s; "
        f"peak RSS {max(peaks):.0f} MB; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    return 0 if med <= args.max and max(peaks) <= args.max_mb else 1


def _pin() -> None:
    # Two cores, as the reference machine; a bigger box would flatter the figure.
    available = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, set(available[:CPUS]))


if __name__ == "__main__":
    sys.exit(main())
