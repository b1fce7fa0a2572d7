"""Two fabric plans -> the files their builds would differ in, without writing either build.

Each side's device renders only in memory, device by device, and is compared at once (the two builds never
sit in memory whole); large fabrics split the devices over forked workers, as `netfab build` does. A device or
server whose render inputs (netfab.render.inputs: its template context, platform record and netfab's code)
have the same digest on both sides renders the same files, the guarantee a rebuild relies on to reuse them: it
is not rendered at all. A knob only the switches read no longer renders the 2 x 12,288 host scripts of a
100k-GPU diff; every device whose inputs differ is still rendered on both sides, after its digest (~0.18 ms a
leaf, against ~0.28 ms to render it).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from netfab.core import gcfreeze
from netfab.core.digest import code_digest
from netfab.design.plan import DevicePlan, FabricPlan, ServerPlan
from netfab.diff.changes import Explainer
from netfab.platforms import ENV_PATH
from netfab.render.cabling import cabling_csv
from netfab.render.device import (
    device_context,
    device_outputs,
    render_device,
    render_server,
    server_context,
    server_output,
)
from netfab.render.inputs import RenderInputs
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
_Side = tuple[str | None, Callable[[], dict[str, str]]]
_JOB: tuple[FabricPlan, FabricPlan, list[_Unit], Explainer, str] | None = None


def _files(plan: FabricPlan, unit: _Unit, servers: dict[str, ServerPlan], inputs: RenderInputs) -> _Side:
    """One side of `unit`: its input digest (None: absent or not canonical) and how to render its files."""
    kind, name = unit
    if kind == "device":
        dev: DevicePlan | None = plan.devices.get(name)
        if dev is None:
            return None, dict
        context = device_context(dev)
        return inputs.device(dev, context), lambda: render_device(dev, context)
    server = servers.get(name)
    if server is None:
        return None, dict
    made = server_context(server, plan)
    return inputs.server(server, made), lambda: render_server(server, plan, made)


def _outputs(plan: FabricPlan, unit: _Unit, servers: dict[str, ServerPlan]) -> list[str]:
    kind, name = unit
    return (
        [path for path, _ in device_outputs(plan.devices[name])] if kind == "device" else [server_output(servers[name])]
    )


def _compare(a: dict[str, str], b: dict[str, str], explain: Explainer, out: Compared) -> None:
    for rel, text in a.items():
        out.old[rel] = digest_bytes(text.encode("utf-8"))
    for rel, text in b.items():
        out.new[rel] = digest = digest_bytes(text.encode("utf-8"))
        if rel in a and out.old[rel] != digest:
            out.explained[rel] = explain(rel, a[rel], text)


def _slice(bounds: tuple[int, int]) -> Compared:
    assert _JOB is not None
    a, b, units, explain, code = _JOB
    out = Compared()
    inputs = RenderInputs(code)
    a_servers, b_servers = {s.name: s for s in a.servers}, {s.name: s for s in b.servers}
    for unit in units[bounds[0] : bounds[1]]:
        (a_inputs, a_files), (b_inputs, b_files) = (
            _files(a, unit, a_servers, inputs),
            _files(b, unit, b_servers, inputs),
        )
        if a_inputs is not None and a_inputs == b_inputs:
            # Same inputs, same files: both sides get one stand-in digest per file, never rendered.
            for rel in _outputs(b, unit, b_servers):
                out.old[rel] = out.new[rel] = f"inputs:{b_inputs}"
            continue
        _compare(a_files(), b_files(), explain, out)
    return out


def _fabric_files() -> Compared:
    """The fabric-wide files (cabling plan, Nornir inventory) of both sides: ~1 s of CPU at 100k GPUs, so a
    worker compares them beside the devices (as `netfab build` renders them), not the parent before the fork."""
    assert _JOB is not None
    a, b, _, explain, _ = _JOB
    out = Compared()
    _compare(
        {"cabling.csv": cabling_csv(a), **inventory_files(a)},
        {"cabling.csv": cabling_csv(b), **inventory_files(b)},
        explain,
        out,
    )
    return out


def compare_plans(a: FabricPlan, b: FabricPlan, workers: int | None = None) -> Compared:
    global _JOB
    platforms = {d.name: d.platform for p in (a, b) for d in p.devices.values()}
    explain = Explainer(platforms)
    units: list[_Unit] = [("device", n) for n in dict.fromkeys([*a.devices, *b.devices])]
    units += [("server", n) for n in dict.fromkeys([s.name for p in (a, b) for s in p.servers])]
    workers = workers or min(os.cpu_count() or 1, 4)
    # netfab's code and templates, digested once here rather than by every slice (20-35 ms each)
    _JOB = (a, b, units, explain, code_digest(os.environ.get(ENV_PATH, "")))
    try:
        if len(units) < _PARALLEL_THRESHOLD or workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
            parts = [_fabric_files(), _slice((0, len(units)))]
        else:
            chunks = workers * 8
            bounds = [(len(units) * i // chunks, len(units) * (i + 1) // chunks) for i in range(chunks)]
            # As in render.build: keep the forked workers from touching (copying) both plans.
            with gcfreeze.block(), multiprocessing.get_context("fork").Pool(workers) as pool:
                fabric = pool.apply_async(_fabric_files)  # queued first: a worker takes it at once
                devices = list(pool.imap(_slice, bounds))
                parts = [fabric.get(), *devices]  # merged first, as when the parent compared them
    finally:
        _JOB = None
    out = Compared()
    for part in parts:
        out.old.update(part.old)
        out.new.update(part.new)
        out.explained.update(part.explained)
    return out
