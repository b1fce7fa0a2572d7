"""The Nornir layer's overhead: one Deployer wave over emulated hosts, as a whole process.

    python bench/nornir_overhead.py [--hosts 2000] [--rtt-ms 50] [--workers 100] [-n 5] [--max-ratio 1.2]

Each run is a fresh `python bench/nornir_overhead.py --child ...` process, timed from spawn to exit
(interpreter start and imports included). The child builds the inventory with netfab's build_nornir (all
hosts in one platform group, each with its own port), then runs one real Deployer wave of every host at
`--workers` parallelism over SleepDriver, a NAPALM driver whose every call sleeps one RTT and does nothing
else. Post-checks are one getter call (get_interfaces). The child counts the NAPALM calls each device got:

    open, has_pending_commit, get_config, load_replace_candidate, compare_config   (prepare)
    commit_config(revert_in)   get_interfaces (check)   confirm_commit, get_config   close  = 10

ideal = hosts x RTT x calls / workers (every worker busy on a device call all the time, nothing else), and
the ratio measured/ideal is the whole cost of Nornir, netfab's orchestration, the journal (every backup,
diff and state change written to disk) and process start-up. Exits 1 when the median ratio exceeds
--max-ratio.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


# --- the child: one Deployer wave -------------------------------------------------------------------------
def child(hosts: int, rtt: float, workers: int, journal_root: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    from types import SimpleNamespace

    from napalm.base import NetworkDriver

    from netfab.deploy import connection, engine
    from netfab.deploy.credentials import Credentials
    from netfab.deploy.engine import Deployer, DeviceArtifacts
    from netfab.deploy.inventory import build_nornir
    from netfab.deploy.journal import DeviceRecord, Journal, RunRecord
    from netfab.deploy.waves import Wave
    from netfab.verify.checks import CheckResult
    from netfab.verify.results import check_result

    t_import = time.perf_counter()
    calls: dict[str, int] = {}
    lock = threading.Lock()
    base, new = "hostname sw\ninterface Ethernet1\n   mtu 9214\n", "hostname sw\ninterface Ethernet1\n   mtu 9216\n"

    class SleepDriver(NetworkDriver):
        """Every NAPALM call costs one RTT of sleep (the device's and the network's time), nothing else."""

        def __init__(self, hostname: str, username: str, password: str, timeout: int = 60, optional_args=None):  # type: ignore[no-untyped-def]
            self.name, self.running, self.candidate, self.pending = hostname, base, "", False

        def _rtt(self) -> None:
            with lock:
                calls[self.name] = calls.get(self.name, 0) + 1
            time.sleep(rtt)

        def open(self) -> None:
            self._rtt()

        def close(self) -> None:
            self._rtt()

        def has_pending_commit(self) -> bool:
            self._rtt()
            return self.pending

        def get_config(self, retrieve="all", full=False, sanitized=False, format="text"):  # type: ignore[no-untyped-def]
            self._rtt()
            return {"running": self.running, "startup": "", "candidate": ""}

        def load_replace_candidate(self, filename=None, config=None) -> None:  # type: ignore[no-untyped-def]
            self._rtt()
            self.candidate = config

        def compare_config(self) -> str:
            self._rtt()
            return "@@ -3 +3 @@\n-   mtu 9214\n+   mtu 9216\n" if self.candidate != self.running else ""

        def discard_config(self) -> None:
            self._rtt()

        def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
            self._rtt()
            self.running, self.pending = self.candidate, revert_in is not None

        def confirm_commit(self) -> None:
            self._rtt()
            self.pending = False

        def rollback(self) -> None:
            self._rtt()

        def get_interfaces(self) -> dict:
            self._rtt()
            return {"Ethernet1": {"is_up": True, "mtu": 9216}}

    def one_getter_check(dev: Any, conn: Any, plan: Any) -> list[CheckResult]:
        ok = conn.get_interfaces()["Ethernet1"]["mtu"] == 9216
        return [check_result(dev.name, "VERIFY-INTERFACES", "pass" if ok else "fail", "Ethernet1 MTU")]

    connection.resolve_driver = lambda name: SleepDriver  # type: ignore[assignment]
    engine.run_checks = one_getter_check  # type: ignore[assignment]
    names = [f"leaf{i}" for i in range(1, hosts + 1)]
    host_data = {n: {"hostname": n, "port": 20000 + i, "groups": ["platform_sleep"]} for i, n in enumerate(names)}
    groups = {"platform_sleep": {"connection_options": {"netfab_napalm": {"platform": "sleep"}}}}
    nr = build_nornir(host_data, groups, Credentials(username="bench", password="bench-pw"), workers=workers)
    wave = Wave("all", tuple(names), workers, 0)
    record = RunRecord(
        "bench", "fab", ["intent.yaml"], "deploy.yaml", False,
        waves=[{"name": wave.name, "devices": names}], devices={n: DeviceRecord(n, wave.name) for n in names},
    )  # fmt: skip
    journal = Journal(journal_root, record, ("bench-pw",))
    plan = SimpleNamespace(devices={n: SimpleNamespace(name=n) for n in names})
    deployer = Deployer(nr, plan, {n: DeviceArtifacts(config=new) for n in names}, journal, 300, 60)  # type: ignore[arg-type]
    t_setup = time.perf_counter()
    outcome = deployer.run([wave])
    t_wave = time.perf_counter()
    journal.finish("completed" if outcome.ok else "failed", outcome.message)
    if not outcome.ok or len(outcome.changed) != hosts:
        raise SystemExit(f"wave failed: {outcome.message} {list(outcome.failed.items())[:3]}")
    per_device = set(calls.values())
    if len(per_device) != 1:
        raise SystemExit(f"devices got different call counts: {sorted(per_device)}")
    return {
        "calls_per_device": per_device.pop(),
        "import_s": t_import - t0,
        "setup_s": t_setup - t_import,
        "wave_s": t_wave - t_setup,
        "end_s": time.perf_counter() - t_wave,
    }


# --- the parent: whole processes ---------------------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=2000)
    parser.add_argument("--rtt-ms", type=float, default=50.0)
    parser.add_argument("--workers", type=int, default=100)
    parser.add_argument("-n", "--runs", type=int, default=5)
    parser.add_argument("--max-ratio", type=float, default=1.2)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--journal", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, help="also write the medians here (bench/scale_bench.py reads it)")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.hosts, args.rtt_ms / 1000, args.workers, args.journal)))
        return 0
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--hosts", str(args.hosts),
           "--rtt-ms", str(args.rtt_ms), "--workers", str(args.workers)]  # fmt: skip
    runs: list[tuple[float, dict[str, Any]]] = []
    cpu: list[float] = []
    # The journal (~6 files a device) is a real deploy's output, written inside the timed process. Every run's
    # is kept until the bench ends: on ext4 without a journal (these VMs) files created just after others were
    # deleted cost several times the system time (the inode allocator skips recently deleted inodes), so
    # deleting one run's 60,000 files before the next run created its own timed the filesystem, not netfab
    # (as bench/scale_bench.py found for builds).
    with tempfile.TemporaryDirectory(prefix="nf-bench-") as root:
        for n in range(args.runs):
            journal = Path(root) / f"run{n}"
            start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
            proc = subprocess.run([*cmd, "--journal", str(journal)], cwd=REPO, capture_output=True, text=True)
            elapsed = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            if proc.returncode != 0:
                sys.exit(f"child failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
            runs.append((elapsed, json.loads(proc.stdout.strip().splitlines()[-1])))
    calls = runs[0][1]["calls_per_device"]
    ideal = args.hosts * (args.rtt_ms / 1000) * calls / args.workers
    whole = [r[0] for r in runs]
    wave = [r[1]["wave_s"] for r in runs]
    med = statistics.median(whole)
    head = f"{args.hosts} hosts x {args.rtt_ms:g} ms x {calls} NAPALM calls / {args.workers} workers"
    print(f"{head}: ideal {ideal:.2f} s")
    print(f"whole process  median {med:.2f} s  (min {min(whole):.2f}, max {max(whole):.2f}, n={args.runs})"
          f"  ratio {med / ideal:.3f}")  # fmt: skip
    print(f"wave only      median {statistics.median(wave):.2f} s  ratio {statistics.median(wave) / ideal:.3f}")
    for key in ("import_s", "setup_s", "end_s"):
        print(f"  {key:<9} median {statistics.median(r[1][key] for r in runs):.2f} s")
    # The wave is one process of threads: its CPU (one GIL) must stay well under the ideal wall time.
    print(f"CPU (user+sys) median {statistics.median(cpu):.2f} s")
    if args.json:
        summary = {
            "hosts": args.hosts,
            "ideal_s": ideal,
            "median_s": med,
            "ratio": med / ideal,
            "wave_ratio": statistics.median(wave) / ideal,
            "cpu_s": statistics.median(cpu),
            "runs": args.runs,
        }
        args.json.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return 1 if med / ideal > args.max_ratio else 0


if __name__ == "__main__":
    sys.exit(main())
