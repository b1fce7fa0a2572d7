"""The fleet audit: every device through audit_device, in forked workers when the fleet is large.

Collection (I/O) happens first: offline inside the workers (each reads its own saved files), online in the
parent over Nornir's threads. The CPU part - the intended config (read from a current build tree
where it provably is the rendering, netfab.audit.intended, else rendered), cleaning both sides, facts,
remediation - runs in `fork` workers that share the plan copy-on-write (the garbage collector is frozen first
so it does not touch, and so copy, the parent's objects), with templates compiled before the fork.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from dataclasses import dataclass
from pathlib import Path

from netfab.audit.collect import read_saved
from netfab.audit.device import audit_device
from netfab.audit.group import group_drifts
from netfab.audit.intended import BuiltConfigs, intended_files
from netfab.audit.model import AuditReport, Collected, DeviceAudit, DeviceMeta
from netfab.audit.rules import AuditRules
from netfab.core import gcfreeze
from netfab.core.events import Advance
from netfab.design.plan import DevicePlan, FabricPlan

PARALLEL_THRESHOLD = 64  # below this, forking costs more than it saves


@dataclass(frozen=True)
class Source:
    """Where running state comes from: a saved-config directory, or what was collected online."""

    saved_dir: Path | None = None
    collected: dict[str, Collected] | None = None
    secrets: tuple[str, ...] = ()

    def get(self, dev: DevicePlan) -> Collected:
        if self.saved_dir is not None:
            return read_saved(self.saved_dir, dev, self.secrets)
        assert self.collected is not None
        return self.collected.get(dev.name) or Collected(dev.name, error="not collected")


_JOB: tuple[list[DevicePlan], Source, AuditRules, BuiltConfigs | None] | None = None  # read copy-on-write


def _audit_slice(bounds: tuple[int, int]) -> list[DeviceAudit]:
    assert _JOB is not None
    devices, source, rules, built = _JOB
    return [audit_device(dev, source.get(dev), rules, built) for dev in devices[bounds[0] : bounds[1]]]


def audit_devices(
    devices: list[DevicePlan],
    source: Source,
    rules: AuditRules,
    workers: int | None = None,
    progress: Advance | None = None,
    built: BuiltConfigs | None = None,
) -> list[DeviceAudit]:
    """`built`: a build tree whose files stand in for rendering where they provably are its output."""
    global _JOB
    workers = workers or min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1, 8)
    if len(devices) < PARALLEL_THRESHOLD or workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        out = []
        for dev in devices:
            out.append(audit_device(dev, source.get(dev), rules, built))
            if progress:
                progress(1)
        return out
    for platform in {d.platform for d in devices}:  # compile each platform's templates once, before the fork
        intended_files(next(d for d in devices if d.platform == platform), built)
    chunks = workers * 8
    bounds = [(len(devices) * i // chunks, len(devices) * (i + 1) // chunks) for i in range(chunks)]
    _JOB = (devices, source, rules, built)
    try:
        # The CLI freezes the plan for the whole run: then it stays so (netfab.core.gcfreeze).
        with gcfreeze.block(), multiprocessing.get_context("fork").Pool(workers) as pool:
            results: list[DeviceAudit] = []
            for b, part in zip(bounds, pool.imap(_audit_slice, bounds), strict=True):
                results.extend(part)
                if progress:
                    progress(b[1] - b[0])
        return results
    finally:
        _JOB = None


def device_meta(plan: FabricPlan) -> dict[str, DeviceMeta]:
    return {d.name: DeviceMeta(d.name, d.role, d.platform, d.rail, d.pod, d.plane, d.su) for d in plan.devices.values()}


def run_audit(
    plan: FabricPlan,
    names: list[str],
    source: Source,
    rules: AuditRules,
    description: str,
    workers: int | None = None,
    progress: Advance | None = None,
    built: BuiltConfigs | None = None,
) -> AuditReport:
    started = time.perf_counter()
    devices = [plan.devices[n] for n in names]
    audits = audit_devices(devices, source, rules, workers, progress, built)
    return AuditReport(
        fabric=plan.name,
        source=description,
        devices=audits,
        meta=device_meta(plan),
        groups=group_drifts(audits),
        seconds=time.perf_counter() - started,
    )
