"""`netfab build`: render a fabric plan into build/<fabric>/ (configs, host scripts, cabling, inventory).

Rendering is CPU-bound and the plan is read-only, so large fabrics are rendered by forked workers that
share the plan copy-on-write and write straight into the staging tree; the tree is swapped in at the end.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from netfab.core.events import Advance
from netfab.core.fs import OutputError, output_error
from netfab.design.plan import DevicePlan, FabricPlan, ServerPlan
from netfab.render.cabling import cabling_csv
from netfab.render.device import render_device, render_server
from netfab.render.inventory import inventory_files
from netfab.render.writer import AtomicTree, safe_relpath

_PARALLEL_THRESHOLD = 200  # below this, forking costs more than it saves


@dataclass
class BuildResult:
    out_dir: Path
    devices: list[str] = field(default_factory=list)
    servers: list[str] = field(default_factory=list)
    files: int = 0


@dataclass(frozen=True)
class BuildSelection:
    platform: str | None = None
    """Only switches of this platform ('host' = only GPU server scripts)."""
    device_glob: str | None = None

    @property
    def partial(self) -> bool:
        return self.platform is not None or self.device_glob is not None

    def wants_device(self, dev: DevicePlan) -> bool:
        if self.platform is not None and dev.platform != self.platform:
            return False
        return self.device_glob is None or fnmatchcase(dev.name, self.device_glob)

    def wants_server(self, server: ServerPlan) -> bool:
        if self.platform is not None and self.platform != "host":
            return False
        return self.device_glob is None or fnmatchcase(server.name, self.device_glob)


# Set in the parent before forking; workers read it copy-on-write.
_JOB: tuple[FabricPlan, list[DevicePlan], list[ServerPlan], Path, bool] | None = None


def _render_slice(bounds: tuple[int, int, int, int]) -> int:
    assert _JOB is not None
    plan, devices, servers, staging, seeded = _JOB
    tree = _StagingWriter(staging, seeded)
    d0, d1, s0, s1 = bounds
    for dev in devices[d0:d1]:
        tree.write_all(render_device(dev))
    for server in servers[s0:s1]:
        tree.write_all(render_server(server, plan))
    return tree.count


class _StagingWriter:
    def __init__(self, staging: Path, seeded: bool = False) -> None:
        self.staging = staging
        self.seeded = seeded
        self.count = 0

    def write_all(self, files: dict[str, str]) -> None:
        for relpath, text in files.items():
            rel = safe_relpath(relpath)
            path = self.staging.joinpath(*rel.parts)
            if self.seeded:
                # A seeded tree shares inodes with the previous build (hard links): replace, never write through.
                path.unlink(missing_ok=True)
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            self.count += 1


def build(
    plan: FabricPlan,
    out_root: Path,
    selection: BuildSelection = BuildSelection(),
    progress: Advance | None = None,
    workers: int | None = None,
) -> BuildResult:
    """Render and atomically write build/<fabric>/. Raises (and leaves the old tree) on any failure."""

    target = out_root / safe_relpath(plan.name).name
    devices = [d for d in plan.devices.values() if selection.wants_device(d)]
    servers = [s for s in plan.servers if selection.wants_server(s)]
    result = BuildResult(out_dir=target.resolve(), devices=[d.name for d in devices], servers=[s.name for s in servers])
    with AtomicTree(target) as tree:
        if selection.partial:
            tree.seed_from_target()
        (tree.staging / "configs").mkdir(exist_ok=True)
        (tree.staging / "hosts").mkdir(exist_ok=True)
        tree.write("cabling.csv", cabling_csv(plan))
        tree.write_many(inventory_files(plan).items())
        result.files = 4
        workers = workers or min(os.cpu_count() or 1, 4)
        total = len(devices) + len(servers)
        if total < _PARALLEL_THRESHOLD or workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
            writer = _StagingWriter(tree.staging, selection.partial)
            for dev in devices:
                writer.write_all(render_device(dev))
                if progress:
                    progress(1)
            for server in servers:
                writer.write_all(render_server(server, plan))
                if progress:
                    progress(1)
            result.files += writer.count
        else:
            result.files += _render_parallel(plan, devices, servers, tree.staging, workers, progress, selection.partial)
    return result


def _render_parallel(
    plan: FabricPlan,
    devices: list[DevicePlan],
    servers: list[ServerPlan],
    staging: Path,
    workers: int,
    progress: Advance | None,
    seeded: bool,
) -> int:
    global _JOB
    chunks = workers * 8  # small chunks keep the progress bar moving and the workers balanced
    bounds = []
    for i in range(chunks):
        bounds.append(
            (
                len(devices) * i // chunks,
                len(devices) * (i + 1) // chunks,
                len(servers) * i // chunks,
                len(servers) * (i + 1) // chunks,
            )
        )
    _JOB = (plan, devices, servers, staging, seeded)
    # Freeze the plan out of the cyclic GC: forked workers would otherwise walk (and so copy-on-write touch)
    # the whole ~10^5-object heap on their first collection.
    gc.freeze()
    try:
        ctx = multiprocessing.get_context("fork")
        count = 0
        with ctx.Pool(workers) as pool:
            try:
                for b, n in zip(bounds, pool.imap(_render_slice, bounds), strict=True):
                    count += n
                    if progress:
                        progress((b[1] - b[0]) + (b[3] - b[2]))
            except OutputError:
                raise
            except OSError as exc:
                # A worker's OSError comes back as a plain OSError (an OutputError would not survive pickling):
                # a full disk or a vanished staging dir is the operator's to fix, exit 2 like the serial writer.
                raise output_error(Path(exc.filename) if exc.filename else staging, exc) from None
        return count
    finally:
        _JOB = None
        gc.unfreeze()
