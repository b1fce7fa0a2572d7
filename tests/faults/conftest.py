"""The fault-injection suite's shared lab and its state probe.

One lab for the whole suite (bring-up is the expensive part): every case starts from, and leaves, the base
config (OLD), which a case proves at its end. A device's position is read on the device itself, never from
netfab's own journal or output:
  FRR     `frr-reload.py --test` of the running config against the OLD / NEW reference (empty = equal)
  kernel  MTU of every port, the nft ECN table without handles, the ECMP hash sysctls (the host script side)
  timer   the driver's device-side revert timer files: pending (armed, live), running, or nothing
A device is "old" or "new" only when FRR and kernel both match the same reference.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from netfab.lab import exec as lab_exec
from netfab.lab import reload_frr, running_config
from tests.e2e.conftest import ROOT, _unique

SWITCHES = ["leaf1", "leaf2", "leaf3", "leaf4", "spine1", "spine2"]
# The change every kill trial deploys: an FRR side (max-paths) and a host-script side (MTU) at once, so a
# device caught between the two halves is visible.
CHANGE = {"underlay": {"max_paths": 16, "mtu": 9000}}
# FRR accepts it, BGP breaks on the leaves (every leaf ASN moves): post-checks fail, the wave rolls back.
BREAKING = {"underlay": {"max_paths": 16, "mtu": 9000, "asn": {"leaf_base": 65300}}}


def _config_body(text: str) -> str:
    lines = text.splitlines()
    start = next((i + 1 for i, line in enumerate(lines) if line.startswith("Current configuration")), 0)
    return "\n".join(lines[start:]) + "\n"


@dataclass
class Position:
    frr: str  # old / new / other
    kernel: str
    timer: str  # pending / running / none

    @property
    def whole(self) -> str:
        return self.frr if self.frr == self.kernel else f"FRR {self.frr}, kernel {self.kernel}"


@dataclass
class FaultLab:
    prefix: str
    subnet: str
    work: Path
    intent: Path
    change: Path
    breaking: Path
    ips: dict[str, str] = field(default_factory=dict)
    old_frr: dict[str, str] = field(default_factory=dict)
    new_frr: dict[str, str] = field(default_factory=dict)
    old_kernel: dict[str, Any] = field(default_factory=dict)
    new_kernel: dict[str, Any] = field(default_factory=dict)

    # --- running netfab ---------------------------------------------------------------------------------------
    def env(self, **extra: str) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith("NETFAB_")}
        return {**base, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "200", **extra}

    def netfab(self, *args: str, timeout: float = 300, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "netfab.cli.app", *args],
            cwd=self.work,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self.env(**env),
        )

    def deploy(self, *intents: Path, extra: tuple[str, ...] = (), **env: str) -> subprocess.CompletedProcess[str]:
        book = self.playbook("fast", "120s", "20s")
        args = ["deploy", *map(str, intents), "--lab", self.prefix, "--playbook", str(book), "--no-diff", *extra]
        return self.netfab(*args, **env)

    def rollback(self, run_id: str, **env: str) -> subprocess.CompletedProcess[str]:
        return self.netfab("rollback", run_id, "--intent", str(self.intent), "--lab", self.prefix, **env)

    def playbook(self, name: str, confirm: str, settle: str) -> Path:
        """A canary pair, then the rest: two waves, so kill points land in the first and a later wave."""
        path = self.work / f"{name}-{confirm}-{settle}.playbook.yaml"
        if not path.exists():
            waves = [
                {"name": "canary", "select": {"name": "leaf[12]"}, "parallelism": 2},
                {"name": "rest", "select": {"name": "*"}, "parallelism": 4},
            ]
            path.write_text(
                yaml.safe_dump({"name": name, "confirm_timeout": confirm, "settle_timeout": settle, "waves": waves})
            )
        return path

    def runs(self) -> list[Path]:
        base = self.work / "runs" / "lab"
        return sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []

    def last_run(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.runs()[-1] / "run.json").read_text())
        return data

    # --- reading the devices ----------------------------------------------------------------------------------
    def frr(self, sw: str) -> str:
        return _config_body(running_config(self.prefix, sw))

    def kernel(self, sw: str) -> Any:
        script = (
            "ip -j link show; echo @@; nft -j list table inet netfab_ecn 2>/dev/null; echo @@; "
            "cat /proc/sys/net/ipv4/fib_multipath_hash_policy /proc/sys/net/ipv6/fib_multipath_hash_policy"
        )
        out = lab_exec(self.prefix, sw, ["sh", "-c", script]).stdout
        links, nft, hashes = ([*out.split("@@"), "", "", ""])[:3]
        mtus = {d["ifname"]: d.get("mtu") for d in json.loads(links) if d["ifname"] != "lo"}
        ecn = re.sub(r'"handle": \d+,?\s*', "", nft.strip())
        return {"mtu": mtus, "ecn": ecn, "hash": hashes.split()}

    def _timer(self, sw: str) -> str:
        wd = Path.home() / ".netfab" / self.ips[sw]
        for name, state in (("revert.fired", "running"), ("revert.pid", "pending")):
            try:
                pid = int((wd / name).read_text().strip())
            except (OSError, ValueError):
                continue
            try:
                if "revert.sh" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                    return state
            except OSError:
                pass
        return "none"

    def _remote_busy(self) -> bool:
        """A command of a dead client (frr-reload, a host script) still running on a switch, or a revert."""
        needle = f".netfab/{self.subnet.rsplit('.', 1)[0]}.".encode()
        me = os.getpid()
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit() and int(proc.name) != me:
                try:
                    if needle in (proc / "cmdline").read_bytes():
                        return True
                except OSError:
                    continue
        return any(self._timer(sw) == "running" for sw in SWITCHES)

    def settle(self, limit: float = 120) -> None:
        deadline = time.monotonic() + limit
        while self._remote_busy():
            assert time.monotonic() < deadline, "the switches never settled after the kill"
            time.sleep(0.3)

    def position(self, sw: str) -> Position:
        running = self.frr(sw)

        def frr_is(ref: dict[str, str]) -> bool:
            # The same text is the same config (cheap); a different text may still be (FRR's order can vary
            # after a reload), which frr-reload's own diff decides.
            return running == ref[sw] or reload_frr(self.prefix, sw, ref[sw], dry_run=True).strip() == ""

        frr = "old" if frr_is(self.old_frr) else "new" if self.new_frr and frr_is(self.new_frr) else "other"
        k = self.kernel(sw)
        kernel = "old" if k == self.old_kernel[sw] else "new" if k == self.new_kernel.get(sw) else "other"
        return Position(frr, kernel, self._timer(sw))

    def positions(self) -> dict[str, Position]:
        with ThreadPoolExecutor(len(SWITCHES)) as pool:
            return dict(zip(SWITCHES, pool.map(self.position, SWITCHES), strict=True))

    def assert_all(self, where: str) -> None:
        got = self.positions()
        bad = {sw: p for sw, p in got.items() if (p.whole, p.timer) != (where, "none")}
        assert not bad, f"expected every switch {where} with no timer armed: {bad}"


@pytest.fixture(scope="session")
def fault_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultLab]:
    prefix, subnet = _unique("f")
    work = tmp_path_factory.mktemp("faults")
    (work / "intent").mkdir()
    intent = work / "intent" / "lab.yaml"
    intent.write_text((ROOT / "intent" / "lab.yaml").read_text())
    change, breaking = work / "change.yaml", work / "breaking.yaml"
    change.write_text(yaml.safe_dump(CHANGE))
    breaking.write_text(yaml.safe_dump(BREAKING))
    lab = FaultLab(prefix, subnet, work, intent, change, breaking)
    up = lab.netfab("lab", "up", str(intent), "--prefix", prefix, "--mgmt-subnet", subnet)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        hosts = yaml.safe_load((Path(f"/var/tmp/netfab-lab/{prefix}") / "inventory" / "hosts.yaml").read_text())
        lab.ips = {sw: hosts[sw]["hostname"] for sw in SWITCHES}
        lab.old_frr = {sw: lab.frr(sw) for sw in SWITCHES}
        lab.old_kernel = {sw: lab.kernel(sw) for sw in SWITCHES}
        # NEW: what a clean deploy of the change leaves; then back to OLD with netfab rollback, which must
        # restore the kernel side too (RELIABILITY_TRIAL.md F1-B).
        res = lab.deploy(intent, change)
        assert res.returncode == 0, res.stderr
        lab.new_frr = {sw: lab.frr(sw) for sw in SWITCHES}
        lab.new_kernel = {sw: lab.kernel(sw) for sw in SWITCHES}
        assert all(lab.new_kernel[sw] != lab.old_kernel[sw] for sw in SWITCHES), "the change must touch the kernel"
        rb = lab.rollback(lab.last_run()["run_id"])
        assert rb.returncode == 0, rb.stderr
        lab.assert_all("old")
        yield lab
    finally:
        down = lab.netfab("lab", "down", "--prefix", prefix)
        for ip in lab.ips.values():  # the driver work dirs (RELIABILITY_TRIAL.md N10)
            subprocess.run(["rm", "-rf", str(Path.home() / ".netfab" / ip)], check=False)
        assert down.returncode == 0, down.stdout + down.stderr
