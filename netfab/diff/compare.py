"""Two fabric plans -> the files their builds would differ in, without writing either build.

Each side's device renders only in memory, device by device, and is compared at once (the two builds never
sit in memory whole); large fabrics split the devices over forked workers, as `netfab build` does.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from dataclasses import dataclass, field

from netfab.design.plan import DevicePlan, FabricPlan, ServerPlan
from netfab.diff.changes import Explainer
from netfab.render.cabling import cabling_csv
from netfab.render.device import render_device, render_server
from netfab.render.inventory import inventory_files
from netfab.render.manifest import digest_bytes

_PARALLEL_THRESHOLD = 200


@dataclass
class Compared:
    old: dict[str, str] = field(default_factory=dict)
    """file -> digest, for the first plan's build."""
    new: dict[str, str] = field(default_factory=dict)
    explained: dict[str, object] = field(default_factory=dict)


_Unit = tuple[str, str]  # ("device" | "server", name)
_JOB: tuple[FabricPlan, FabricPlan, list[_Unit], Explainer] | None = None


def _files(plan: FabricPlan, unit: _Unit, servers: dict[str, ServerPlan]) -> dict[str, str]:
    kind, name = unit
    if kind == "device":
        dev: DevicePlan | None = plan.devices.get(name)
        return render_device(dev) if dev is not None else {}
    server = servers.get(name)
    return render_server(server, plan) if server is not None else {}


def _compare(a: dict[str, str], b: dict[str, str], explain: Explainer, out: Compared) -> None:
    for rel, text in a.items():
        out.old[rel] = digest_bytes(text.encode("utf-8"))
    for rel, text in b.items():
        out.new[rel] = digest = digest_bytes(text.encode("utf-8"))
        if rel in a and out.old[rel] != digest:
            out.explained[rel] = explain(rel, a[rel], text)


def _slice(bounds: tuple[int, int]) -> Compared:
    assert _JOB is not None
    a, b, units, explain = _JOB
    out = Compared()
    a_servers, b_servers = {s.name: s for s in a.servers}, {s.name: s for s in b.servers}
    for unit in units[bounds[0] : bounds[1]]:
        _compare(_files(a, unit, a_servers), _files(b, unit, b_servers), explain, out)
    return out


def compare_plans(a: FabricPlan, b: FabricPlan, workers: int | None = None) -> Compared:
    global _JOB
    platforms = {d.name: d.platform for p in (a, b) for d in p.devices.values()}
    explain = Explainer(platforms)
    out = Compared()
    _compare(
        {"cabling.csv": cabling_csv(a), **inventory_files(a)},
        {"cabling.csv": cabling_csv(b), **inventory_files(b)},
        explain,
        out,
    )
    units: list[_Unit] = [("device", n) for n in dict.fromkeys([*a.devices, *b.devices])]
    units += [("server", n) for n in dict.fromkeys([s.name for p in (a, b) for s in p.servers])]
    workers = workers or min(os.cpu_count() or 1, 4)
    _JOB = (a, b, units, explain)
    try:
        if len(units) < _PARALLEL_THRESHOLD or workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
            parts = [_slice((0, len(units)))]
        else:
            chunks = workers * 8
            bounds = [(len(units) * i // chunks, len(units) * (i + 1) // chunks) for i in range(chunks)]
            gc.freeze()  # as in render.build: keep the forked workers from touching (copying) both plans
            try:
                with multiprocessing.get_context("fork").Pool(workers) as pool:
                    parts = list(pool.imap(_slice, bounds))
            finally:
                gc.unfreeze()
    finally:
        _JOB = None
    for part in parts:
        out.old.update(part.old)
        out.new.update(part.new)
        out.explained.update(part.explained)
    return out
