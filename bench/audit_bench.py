"""Audit benchmark: a ~2,000-switch EOS fabric audited offline as a whole process, and online over Nornir.

    python bench/audit_bench.py [-n 3] [--max 10] [--delay 0.05] [--online-workers 100] [--keep DIR]

Fabric: intent/clos3-24k.yaml grown to 231 racks per pod (1,848 leaves, 128 spines, 28 superspines = 2,004
EOS switches) with ECN on the RoCE class (DCQCN on), rendered once with `netfab build`. Its configs are then
saved as the "running" configs four ways, each with the same injected drift (ECN Kmax 400 KB on 37 leaves
in pods 2 and 5, MTU 1500 on one port of 3 spines, one superspine missing a BGP neighbor):

  saved     the build's files as they are (CI auditing saved copies): undrifted devices are byte-identical
  printed   every device prints its config its own way (banner comments, every section in reverse order):
            the order-insensitive canonical form decides, no fact extraction for in-sync devices
  defaults  also `no shutdown` under every port (a default line EOS may print): dropped while cleaning,
            so still the canonical path
  facts     instead, every ECN line without its default `weight 0` (a default *value*): canonical forms
            differ on every device, so every device is reduced to facts on both sides - the worst case

Each scenario runs `netfab audit INTENT --from-dir DIR --format json` as a whole process (startup, lint,
design, the intended configs, comparing, writing the audit dir), pinned to 2 cores (taskset) when available;
the median of -n runs is reported and the run fails when the worst scenario's median exceeds --max. The
intended configs are read from the bench's own build tree (CI audits after `netfab build`: netfab.audit.intended
reads a switch's files there when they were rendered from its current inputs); the "rendered" row audits the
saved copies with no build tree (`--build` pointing at an empty directory), so every config is rendered.

Online: the same audit with every device read through a fake NAPALM driver ("netfab_auditbench", registered
for this bench) whose get_config takes --delay seconds, collected by Nornir with --online-workers threads;
reported as collection time and collection + comparison, in-process (the fake driver lives here).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from bytecode import measured_env  # noqa: E402  (bench/ is a folder of scripts, not a package)

RACKS_PER_POD = 231
DRIFT_PODS = (2, 5)


def netfab_cmd() -> list[str]:
    pin = ["taskset", "-c", "0,1"] if shutil.which("taskset") and (os.cpu_count() or 1) >= 2 else []
    return [*pin, sys.executable, "-m", "netfab.cli.app"]


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**measured_env(REPO), "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return subprocess.run([*netfab_cmd(), *args], cwd=cwd, capture_output=True, text=True, env=env)


def write_intent(work: Path, pods: int = 8) -> Path:
    data = yaml.safe_load((REPO / "intent" / "clos3-24k.yaml").read_text())
    topo = data["topology"]
    topo["racks_per_pod"] = RACKS_PER_POD
    if pods != 8:
        # --pods: the same pods, more of them (41 pods = 10,155 switches); the 100k example's larger pools.
        big = yaml.safe_load((REPO / "intent" / "clos3-100k.yaml").read_text())["underlay"]
        topo["pods"] = pods
        topo["superspine"]["ports"] = 16 * pods + 64
        data["underlay"].update({k: big[k] for k in ("loopbacks", "p2p", "hosts")})
        data["underlay"]["loopbacks"]["leaf"] = "10.0.64.0/18"
        data["underlay"]["p2p"]["leaf_spine"] = "10.136.0.0/13"
    topo["spine"]["ports"] = 288
    topo["spine"]["oversubscription"] = f"{RACKS_PER_POD}:28"
    data["nic"]["dcqcn"]["enabled"] = True
    for cls in data["qos"]["classes"]:
        if cls["kind"] == "roce":
            cls["ecn"] = {"kmin": "150KB", "kmax": "1500KB", "pmax": 100}
    path = work / "fabric.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _reverse_sections(text: str) -> str:
    """Top-level stanzas in reverse order, each stanza's own lines kept (a device's printing order)."""
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("!") or line == "end":
            continue
        if not line.startswith(" ") or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    return "\n".join("\n".join(b) + "\n!" for b in reversed(blocks)) + "\nend\n"


def inject(configs: dict[str, str], meta: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The same drift in every scenario; returns a copy."""
    out = dict(configs)
    by_pod = [[n for n, m in sorted(meta.items()) if m["role"] == "leaf" and m.get("pod") == p] for p in DRIFT_PODS]
    leaves = by_pod[0][:19] + by_pod[1][:18]
    for name in leaves:
        out[name] = out[name].replace("maximum-threshold 1500 kbytes", "maximum-threshold 400 kbytes")
    spines = [n for n, m in sorted(meta.items()) if m["role"] == "spine"][:3]
    for name in spines:
        out[name] = out[name].replace("   mtu 9216\n", "   mtu 1500\n", 1)
    superspine = next(n for n, m in sorted(meta.items()) if m["role"] == "superspine")
    neighbor = re.search(r"^   neighbor (\S+) peer group ", out[superspine], re.M)
    assert neighbor is not None
    out[superspine] = "\n".join(
        ln for ln in out[superspine].splitlines() if not ln.startswith(f"   neighbor {neighbor.group(1)} ")
    )
    return out


def scenarios(build: Path, work: Path) -> dict[str, Path]:
    meta = yaml.safe_load((build / "inventory" / "hosts.yaml").read_text())
    meta = {name: host["data"] for name, host in meta.items()}
    configs = {p.stem: p.read_text() for p in (build / "configs").glob("*.cfg")}
    printed = {n: f"! Command: show running-config\n! device: {n} (EOS-4.33.1F)\n" + _reverse_sections(t)
               for n, t in configs.items()}  # fmt: skip
    defaults = {n: t.replace("   mtu 9216\n", "   mtu 9216\n   no shutdown\n") for n, t in printed.items()}
    facts = {n: t.replace(" weight 0\n", "\n") for n, t in printed.items()}
    out: dict[str, Path] = {}
    for label, texts in (("saved", configs), ("printed", printed), ("defaults", defaults), ("facts", facts)):
        directory = work / f"running-{label}"
        directory.mkdir(exist_ok=True)
        for name, text in inject(texts, meta).items():
            (directory / f"{name}.cfg").write_text(text)
        out[label] = directory
    return out


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


CPU: dict[str, list[float]] = {}
"""Per scenario, user + system CPU seconds of each timed netfab process (and its workers)."""


def measure(
    intent: Path, saved: Path, work: Path, runs: int, extra: tuple[str, ...] = ()
) -> tuple[list[float], dict[str, Any]]:
    times, report = [], {}
    cpu = CPU.setdefault(saved.name + "".join(extra), [])
    for _ in range(runs):
        start, cpu0 = time.perf_counter(), _children_cpu()
        args = ["audit", str(intent), "--from-dir", str(saved), "--format", "json", "--output", "r.json", *extra]
        proc = run(args, work)
        times.append(time.perf_counter() - start)
        cpu.append(_children_cpu() - cpu0)
        if proc.returncode != 1:
            sys.exit(f"netfab audit exited {proc.returncode} (expected 1: drift):\n{proc.stderr[-2000:]}")
        report = json.loads((work / "r.json").read_text())
    return times, report


# --- online: a fake NAPALM driver with a fixed per-call latency ------------------------------------------------
def register_fake_driver(saved: Path, delay: float) -> None:
    import types

    from napalm.base.base import NetworkDriver

    class AuditBenchDriver(NetworkDriver):  # type: ignore[misc]
        def __init__(self, hostname: str, username: str, password: str, timeout: int = 60,
                     optional_args: dict[str, Any] | None = None) -> None:  # fmt: skip
            self.name = (optional_args or {})["device"]

        def open(self) -> None: ...

        def close(self) -> None: ...

        def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False,
                       format: str = "text") -> dict[str, str]:  # fmt: skip
            time.sleep(delay)  # one device round trip
            return {"running": (saved / f"{self.name}.cfg").read_text(), "startup": "", "candidate": ""}

    module = types.ModuleType("napalm_netfab_auditbench")
    module.AuditBenchDriver = AuditBenchDriver  # type: ignore[attr-defined]
    sys.modules["napalm_netfab_auditbench"] = module


def online(intent: Path, saved: Path, delay: float, workers: int) -> tuple[float, float, int]:
    from netfab.audit.collect import collect_online
    from netfab.audit.engine import Source, run_audit
    from netfab.audit.rules import AuditRules
    from netfab.cli.pipeline import load_plan
    from netfab.deploy.credentials import Credentials
    from netfab.deploy.inventory import build_nornir

    register_fake_driver(saved, delay)
    plan = load_plan([intent]).plan
    names = list(plan.devices)
    hosts = {
        n: {"hostname": "127.0.0.1", "groups": ["bench"],
            "connection_options": {"netfab_napalm": {"extras": {"optional_args": {"device": n}}}}}
        for n in names
    }  # fmt: skip
    groups = {"bench": {"connection_options": {"netfab_napalm": {"platform": "netfab_auditbench"}}}}
    nr = build_nornir(hosts, groups, Credentials(), workers=workers)
    start = time.perf_counter()
    collected = collect_online(nr, plan, names)
    collect_s = time.perf_counter() - start
    errors = [c.error for c in collected.values() if c.error]
    if errors:
        sys.exit(f"online collection failed: {errors[0]}")
    report = run_audit(plan, names, Source(collected=collected), AuditRules(), "bench")
    return collect_s, time.perf_counter() - start, len(report.drifted)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--runs", type=int, default=3)
    parser.add_argument("--max", type=float, default=10.0, help="budget for the worst median, seconds")
    parser.add_argument("--delay", type=float, default=0.05, help="emulated seconds per device call (online)")
    parser.add_argument("--online-workers", type=int, default=100)
    parser.add_argument("--keep", type=Path, help="work in this directory and keep it")
    parser.add_argument("--pods", type=int, default=8, help="41 = the 10,000-device target of issue 17")
    parser.add_argument("--no-online", action="store_true", help="offline scenarios only")
    parser.add_argument("--json", type=Path, help="also write the offline medians here (bench/scale_bench.py reads it)")
    parser.add_argument(
        "--scenarios",
        default="saved,printed,defaults,facts,rendered",
        help="comma-separated offline rows to run (saved, printed, defaults, facts, rendered)",
    )
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="audit-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        intent = write_intent(work, args.pods)
        built = run(["build", str(intent), "--out", str(work / "build"), "--platform", "arista_eos"], work)
        if built.returncode != 0:
            sys.exit(built.stderr)
        build = work / "build" / "clos3-24k"
        dirs = scenarios(build, work)
        no_build = work / "no-build"
        no_build.mkdir(exist_ok=True)
        rows = {label: (d, ()) for label, d in dirs.items()}
        rows["rendered"] = (dirs["saved"], ("--build", str(no_build)))
        wanted = [r.strip() for r in args.scenarios.split(",") if r.strip()]
        if unknown := [r for r in wanted if r not in rows]:
            sys.exit(f"unknown scenario {unknown[0]!r}; choose from {', '.join(rows)}")
        devices = len(list((build / "configs").glob("*.cfg")))
        print(f"audit of {devices} EOS switches, {args.runs} runs each ({' '.join(netfab_cmd()[:3])})")
        print(f"{'scenario':<10} {'median':>8} {'min':>8} {'max':>8} {'CPU':>8}   drift found")
        worst = 0.0
        summary: dict[str, Any] = {"devices": devices, "runs": args.runs, "scenarios": {}}
        for label in wanted:
            saved, extra = rows[label]
            times, report = measure(intent, saved, work, args.runs, extra)
            median = statistics.median(times)
            worst = max(worst, median)
            # The fleet groups live in the shared envelope's "details" (docs/report.schema.json).
            fleet = report.get("groups") or (report.get("details") or {}).get("groups", [])
            groups = "; ".join(f"{len(g.get('devices', []))} x {g.get('label', g.get('sentence', '?'))}" for g in fleet)
            cpu = statistics.median(CPU[saved.name + "".join(extra)])
            summary["scenarios"][label] = {"median_s": median, "min_s": min(times), "cpu_s": cpu}
            print(f"{label:<10} {median:>7.2f}s {min(times):>7.2f}s {max(times):>7.2f}s {cpu:>7.2f}s   {groups}")
        if args.json:
            args.json.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
        if args.no_online:
            return 1 if worst > args.max else 0
        collect_s, total_s, drifted = online(intent, dirs["printed"], args.delay, args.online_workers)
        print(
            f"online     collect {collect_s:.2f}s, collect + compare {total_s:.2f}s "
            f"({devices} devices x {args.delay * 1000:.0f} ms, {args.online_workers} Nornir workers; "
            f"{drifted} drifted)"
        )
        return 1 if worst > args.max else 0
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
