"""`netfab build`: render a fabric plan into build/<fabric>/ (configs, host scripts, cabling, inventory).

Rendering is CPU-bound and the plan is read-only, so large fabrics are rendered by forked workers that
share the plan copy-on-write and write straight into the staging tree; the tree is swapped in at the end.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path

from netfab.core import gcfreeze
from netfab.core.digest import code_digest
from netfab.core.events import Advance
from netfab.core.fs import OutputError, output_error
from netfab.core.validate import InputError
from netfab.design.plan import DevicePlan, FabricPlan, HostEnv, ServerPlan
from netfab.platforms import ENV_PATH
from netfab.render.cabling import links_csv
from netfab.render.device import (
    device_context,
    device_outputs,
    render_device,
    render_host_env,
    render_server,
    server_context,
    server_output,
)
from netfab.render.inputs import RenderInputs
from netfab.render.inventory import dump_inventory, inventory_data
from netfab.render.manifest import MANIFEST, FileRecord, Manifest, digest_bytes, manifest_at, read_manifest
from netfab.render.preseed import prune
from netfab.render.writer import AtomicTree, relative_key, safe_relpath, writing_back

_PARALLEL_THRESHOLD = 200  # below this, forking costs more than it saves


class DuplicateOutput(InputError):
    """Two files of one build have one name (exit 2): a server named like a server profile's mlxconfig script,
    say. One would silently replace the other, and where the first was a hard link to the previous build's
    file, writing the second would write through it into the live tree; so the build stops, writing neither."""

    def __init__(self, key: str) -> None:
        super().__init__(
            f"two files of this build are both named {key}",
            "rename the device, server or server profile whose files share that name",
        )
        self.key = key

    def __reduce__(self) -> tuple[type[DuplicateOutput], tuple[str]]:
        return DuplicateOutput, (self.key,)  # raised in a render worker, re-raised in the parent


@dataclass
class BuildResult:
    out_dir: Path
    devices: list[str] = field(default_factory=list)
    servers: list[str] = field(default_factory=list)
    files: int = 0
    written: list[str] = field(default_factory=list)
    """Files whose bytes (or inode) are new in this build; every other file is the previous build's inode."""
    reused: int = 0
    """Files not rendered at all: rendered by the previous build from the very inputs this one has."""
    explained: dict[str, object] = field(default_factory=dict)
    previous: Manifest | None = None
    manifest: Manifest | None = None


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
_JOB: tuple[FabricPlan, list[DevicePlan], list[ServerPlan], _StagingWriter] | None = None


def _render_fabric_files() -> _SliceResult:
    assert _JOB is not None
    plan, _, _, template = _JOB
    tree = template.fresh()
    tree.fabric(plan)
    return tree.result()


def _worker_start(mask: set[signal.Signals]) -> None:
    """A render worker ignores Ctrl-C, which the terminal sends to every process of the build. The parent alone
    answers it, terminating the pool: a worker that took it died holding the pool's queue lock or left the
    pool forking a replacement, and the parent's terminate() then waited for ever (3 of ~30 interrupts in a
    fault trial). `mask` is the parent's signal mask from before it blocked Ctrl-C around the fork."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _render_slice(bounds: tuple[int, int, int, int]) -> _SliceResult:
    assert _JOB is not None
    plan, devices, servers, template = _JOB
    tree = template.fresh()
    d0, d1, s0, s1 = bounds
    # Rendering leaves no cyclic garbage (measured: 0 objects after 2,100 renders), yet the collector's passes
    # over every render's short-lived objects were ~10 % of a worker's CPU. Off while the slice renders, and one
    # collection after it, so a template that ever did make cycles costs one slice of memory, never a leak.
    # That collection is of the youngest generation only: with the collector off nothing was promoted, so every
    # object the slice made is still there, and a full one walked the earlier slices' records and the digest
    # memo again each time (5-50 ms a slice at 100k GPUs, growing with the slices done; 0 objects found).
    gc.disable()
    try:
        for dev in devices[d0:d1]:
            tree.switch(dev)
        for server in servers[s0:s1]:
            tree.server(server, plan)
    finally:
        gc.enable()
        gc.collect(0)
    return tree.result()


Explain = Callable[[str, str, str], object]
"""(relative path, previous text, new text) -> what changed in it, computed where the texts are (in the
render workers); whatever it returns must pickle. The build never interprets it (netfab.diff does)."""


@dataclass(slots=True)
class _SliceResult:
    records: dict[str, FileRecord]
    written: list[str]
    explained: dict[str, object]
    reused: int


class _StagingWriter:
    """Writes one build's files into the staging tree, keeping the previous tree's inode for every file whose
    bytes did not change (a hard link), so an unchanged file is never rewritten and a rebuild writes only what
    changed. A switch or server whose input digest (netfab.render.inputs) is the one the previous manifest
    recorded with its files is not rendered at all; any other is rendered and its text compared by digest
    against the previous manifest. The previous file is trusted only while its inode, size and mtime are what
    that manifest recorded."""

    def __init__(
        self,
        staging: Path,
        inputs: RenderInputs,
        seeded: bool = False,
        previous: Manifest | None = None,
        previous_root: Path | None = None,
        explain: Explain | None = None,
    ) -> None:
        self.staging = staging
        # Files are named by joining strings: Path objects for ~19,000 files cost more than the joins.
        self._staging = str(staging)
        self._previous_root = None if previous_root is None else str(previous_root)
        self.inputs = inputs
        self.seeded = seeded
        self.previous = previous
        self.previous_root = previous_root
        self.explain = explain
        self.count = 0
        self.records: dict[str, FileRecord] = {}
        self.written: list[str] = []
        self.explained: dict[str, object] = {}
        self.reused = 0

    def fresh(self) -> _StagingWriter:
        return _StagingWriter(self.staging, self.inputs, self.seeded, self.previous, self.previous_root, self.explain)

    def result(self) -> _SliceResult:
        return _SliceResult(self.records, self.written, self.explained, self.reused)

    def switch(self, dev: DevicePlan) -> None:
        context = device_context(dev)
        inputs = self.inputs.device(dev, context)
        if not self._reuse([path for path, _ in device_outputs(dev)], inputs):
            self.write_all(render_device(dev, context), inputs)

    def server(self, server: ServerPlan, plan: FabricPlan) -> None:
        context = server_context(server, plan)
        inputs = self.inputs.server(server, context)
        if not self._reuse([server_output(server)], inputs):
            self.write_all(render_server(server, plan, context), inputs)

    def fabric(self, plan: FabricPlan) -> None:
        """The fabric-wide files: the cabling plan and the Nornir inventory (a worker renders them alongside
        the devices). The inventory is digested over its documents before they are dumped and reused like a
        switch's files when that did not change. The cabling plan is always written out and kept by its bytes
        (an unchanged one is still the previous inode): at 100k GPUs a canonical digest of its 210,944 cables
        cost 0.33 s, more than writing the CSV (~0.15 s quiet) and digesting its 21 MB (0.02 s)."""
        self.write_all({"cabling.csv": links_csv(plan.links)})
        documents = inventory_data(plan)
        inventory = self.inputs.fabric("inventory", documents)
        if not self._reuse(list(documents), inventory):
            self.write_all(dump_inventory(documents), inventory)

    def _reuse(self, paths: list[str], inputs: str | None) -> bool:
        """Take every one of `paths` from the previous tree, unrendered, when the previous build rendered them
        from exactly `inputs` and each is still on disk as it wrote it; else take none."""
        if inputs is None or self.previous is None or self.previous_root is None:
            return False
        kept: list[tuple[str, FileRecord]] = []
        for path in paths:
            key = relative_key(path)
            record = self._previous(key, lambda r: r.inputs == inputs)
            if record is None:
                return False
            kept.append((key, record))
        for key, record in kept:
            if key in self.records:
                raise DuplicateOutput(key)
            if not self.seeded:  # a seeded tree already holds this very inode
                _link(f"{self._previous_root}/{key}", f"{self._staging}/{key}", key)
            self.records[key] = record
        self.count += len(kept)
        self.reused += len(kept)
        return True

    def _unchanged(self, rel: str, digest: str) -> FileRecord | None:
        return self._previous(rel, lambda r: r.digest == digest)

    def _previous(self, rel: str, wanted: Callable[[FileRecord], bool]) -> FileRecord | None:
        """The previous manifest's record of `rel` when it is `wanted` and the file is on disk as recorded: in a
        seeded tree the staging tree's own link (the very file the new tree will hold), else the previous tree's."""
        if self.previous is None or self._previous_root is None:
            return None
        record = self.previous.files.get(rel)
        if record is None or not wanted(record):
            return None
        try:
            st = os.stat(f"{self._staging if self.seeded else self._previous_root}/{rel}")
        except OSError:
            return None
        return record if record.matches(st) else None

    def write_all(self, files: dict[str, str], inputs: str | None = None) -> None:
        """Write `files`, rendered from `inputs` (their input digest, recorded with each; None: not known)."""
        for relpath, text in files.items():
            key = relative_key(relpath)
            path = f"{self._staging}/{key}"
            # newline-free bytes: templates' own line endings stay byte-identical across runs and platforms.
            if key in self.records:
                raise DuplicateOutput(key)
            data = text.encode("utf-8")
            digest = digest_bytes(data)
            self.count += 1
            kept = self._unchanged(key, digest)
            if kept is not None:
                if not self.seeded:  # a seeded tree already holds this very inode
                    assert self.previous_root is not None
                    _link(f"{self._previous_root}/{key}", path, key)
                self.records[key] = kept if kept.inputs == inputs else replace(kept, inputs=inputs)
                continue
            if self.seeded:
                # A seeded tree shares inodes with the previous build (hard links): replace, never write through.
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
            try:
                # Never into a file already there: in a tree not seeded, that is another of this build's files
                # (another worker's, whose records this one cannot see), possibly a link to the live tree's.
                st = _write_file(path, data)
            except FileExistsError:
                raise DuplicateOutput(key) from None
            self.records[key] = FileRecord(digest, st.st_size, st.st_mtime_ns, st.st_ino, inputs)
            self.written.append(key)
            if self.explain is not None and self.previous is not None and key in self.previous.files:
                assert self.previous_root is not None
                try:
                    before = (self.previous_root / key).read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                self.explained[key] = self.explain(key, before, text)


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def _link(previous: str, staged: str, key: str) -> None:
    """The previous build's file into the staging tree; a name already taken there is a second file of this
    build with that name (DuplicateOutput)."""
    try:
        os.link(previous, staged)
    except FileExistsError:
        raise DuplicateOutput(key) from None


def _write_file(path: str, data: bytes) -> os.stat_result:
    """Create `path` holding `data` and return its stat. Four syscalls (open, write, fstat, close) where open()
    makes seven (its buffered file also stats, seeks and asks whether it is a terminal): ~19,000 files at 100k
    GPUs. The mode is open()'s (0o666 less the umask). The file must not exist (O_EXCL): a staging tree is fresh,
    and a seeded one has the previous build's link removed first.

    Most of a build's system time is the open(O_CREAT) itself on ext4 without a journal (as on these VMs):
    its inode allocator checks every free inode it meets for a deletion in the last 1-6 minutes and skips
    those, so creating files in a block group where a previous tree was just deleted costs 100-400 us each
    (perf: recently_deleted, find_get_block_common, find_inode_bit). Nothing here deletes before creating."""
    fd = os.open(path, _CREATE, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        return os.fstat(fd)
    finally:
        os.close(fd)


def build(
    plan: FabricPlan,
    out_root: Path,
    selection: BuildSelection = BuildSelection(),
    progress: Advance | None = None,
    workers: int | None = None,
    inputs: str | None = None,
    explain: Explain | None = None,
    seeded: AtomicTree | None = None,
    model: str | None = None,
    code: str | None = None,
) -> BuildResult:
    """Render and atomically write build/<fabric>/. Raises (and leaves the old tree) on any failure.

    `inputs` is the build's inputs digest (netfab.render.manifest.inputs_digest), recorded in the manifest so
    the next build with the same inputs can skip (up_to_date); only a full build records it, and with it
    `model` (netfab.render.manifest.model_digest: the next build of the same validated intent skips too).
    Files whose bytes did not change keep their inode; `explain` is called on every file that did (see
    Explain). `seeded` is a staging tree for this plan's target already holding the previous build's files
    (netfab.render.preseed); the build takes it over, swapping it in or removing it. `code` is the code digest
    (netfab.render.manifest.code_digest) the caller took before anything was rendered, recorded with every
    file: a caller building several trees passes the one it took once, so no tree can record the code of a
    template saved after the process compiled the one it rendered with (taken here when None)."""
    # The plan (~10^6 objects at 100k GPUs) lives through the whole build: freeze it out of the cyclic GC, or
    # every full collection the build's allocations trigger walks it (measured at clos3-24k: 195 collections,
    # 0.47 s of a one-knob rebuild), and forked workers would copy-on-write touch its pages doing the same.
    # A caller that froze its heap for good keeps it frozen (netfab.core.gcfreeze).
    try:
        with gcfreeze.block():
            return _build(plan, out_root, selection, progress, workers, inputs, explain, seeded, model, code)
    except BaseException:
        if seeded is not None:  # failed before its tree was taken over (else already removed or swapped in)
            seeded.abort()
        raise


def _build(
    plan: FabricPlan,
    out_root: Path,
    selection: BuildSelection,
    progress: Advance | None,
    workers: int | None,
    inputs: str | None,
    explain: Explain | None,
    seeded: AtomicTree | None,
    model: str | None,
    code: str | None,
) -> BuildResult:
    target = out_root / safe_relpath(plan.name).name
    devices = [d for d in plan.devices.values() if selection.wants_device(d)]
    # OOB ports are BMCs, configured by the BMC, not by a script on the server's OS.
    servers = [s for s in plan.servers if selection.wants_server(s)] if plan.kind != "oob" else []
    result = BuildResult(out_dir=target.resolve(), devices=[d.name for d in devices], servers=[s.name for s in servers])
    if seeded is not None and (selection.partial or seeded.target != AtomicTree.target_of(target)):
        seeded.abort()  # seeded for a full build of this very tree, or of no use
        seeded = None
    with seeded or AtomicTree(target) as tree:
        # A partial build reads the manifest of the very tree it copies (_seed); a full one reads it here.
        # (read_manifest is None for a tree not there: its open fails.)
        previous = result.previous = _seed(tree) if selection.partial else read_manifest(tree.target)
        (tree.staging / "configs").mkdir(exist_ok=True)
        (tree.staging / "hosts").mkdir(exist_ok=True)
        (tree.staging / "inventory").mkdir(exist_ok=True)
        inputs_of = RenderInputs(code if code is not None else code_digest(os.environ.get(ENV_PATH, "")))
        writer = _StagingWriter(
            tree.staging, inputs_of, selection.partial or seeded is not None, previous, tree.target, explain
        )
        try:
            host_env = plan.host_env if selection.platform in (None, "host") else []
            slices = _render_all(plan, devices, servers, writer, workers, progress, host_env)
        except OutputError:
            raise
        except OSError as exc:
            # A full disk or a vanished staging dir is the operator's to fix (exit 2), in the parent as in a worker.
            raise output_error(Path(exc.filename) if exc.filename else tree.staging, exc) from None
        records: dict[str, FileRecord] = {}
        if selection.partial and previous is not None:
            # Files this build did not regenerate are the previous build's, hard-linked by the seeding.
            records.update(previous.files)
        made: dict[str, FileRecord] = {}
        for part in slices:
            # Each writer sees only its own records: a name two of them wrote is found here, before the swap.
            clash = made.keys() & part.records.keys()
            if clash:
                raise DuplicateOutput(min(clash))
            made.update(part.records)
            records.update(part.records)
            result.written.extend(part.written)
            result.explained.update(part.explained)
            result.reused += part.reused
        result.files = sum(len(part.records) for part in slices)
        if seeded is not None:
            prune(tree.staging, set(records))
        full = not selection.partial and inputs is not None
        manifest = Manifest(inputs if full else None, records, model if full else None)
        result.manifest = manifest
        tree.write(MANIFEST, manifest.to_json())
    return result


class TreeChanged(InputError):
    """The build tree changed while a --platform/--limit build copied it (exit 2): another build swapped it."""

    def __init__(self, target: Path) -> None:
        super().__init__(
            f"{target} changed while this build copied it", "another build is writing it: run again once it is done"
        )


_SEED_TRIES = 3


def _seed(tree: AtomicTree) -> Manifest | None:
    """Start a partial build's staging tree from the current tree, and return that tree's manifest.

    The copy goes by path, so a full build that swapped its own tree in meanwhile made it part one tree and part
    the other, under the manifest read before (seen in a fault trial: 75 server scripts of one build, 117 of the
    next, digests that matched neither). So the tree is held open while its manifest is read and it is copied:
    when the path still names that very directory afterwards, everything came from it (a build never swaps a
    replaced tree back, and the open descriptor keeps its inode from being reused). Else copy again."""
    for _ in range(_SEED_TRIES):
        try:
            held = os.open(tree.target, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            tree.seed_from_target()  # no tree (or not one to read): nothing to copy, nothing to check
            return None
        try:
            manifest = manifest_at(held)
            tree.seed_from_target()
            st = os.fstat(held)
            try:
                now = os.stat(tree.target, follow_symlinks=False)
            except FileNotFoundError:  # between another build's two renames: copy again
                continue
        finally:
            os.close(held)
        if (st.st_dev, st.st_ino) == (now.st_dev, now.st_ino):
            return manifest
    raise TreeChanged(tree.target)


def _render_all(
    plan: FabricPlan,
    devices: list[DevicePlan],
    servers: list[ServerPlan],
    writer: _StagingWriter,
    workers: int | None,
    progress: Advance | None,
    host_env: list[HostEnv],
) -> list[_SliceResult]:
    for env in host_env:  # one file set per server profile: a handful, never worth a worker
        writer.write_all(render_host_env(env, plan))
    workers = workers or min(os.cpu_count() or 1, 4)
    total = len(devices) + len(servers)
    if total < _PARALLEL_THRESHOLD or workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        writer.fabric(plan)
        for dev in devices:
            writer.switch(dev)
            if progress:
                progress(1)
        for server in servers:
            writer.server(server, plan)
            if progress:
                progress(1)
        return [writer.result()]
    return [writer.result(), *_render_parallel(plan, devices, servers, writer, workers, progress)]


def _render_parallel(
    plan: FabricPlan,
    devices: list[DevicePlan],
    servers: list[ServerPlan],
    writer: _StagingWriter,
    workers: int,
    progress: Advance | None,
) -> list[_SliceResult]:
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
    _JOB = (plan, devices, servers, writer)  # the plan is frozen out of the cyclic GC by build()
    try:
        ctx = multiprocessing.get_context("fork")
        out: list[_SliceResult] = []
        # Ctrl-C held back until every worker ignores it (_worker_start), then delivered to the parent.
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            pool = ctx.Pool(workers, initializer=_worker_start, initargs=(mask,))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        # The workers write ~230 MB at 100k GPUs: written back while they render, not all at commit.
        with pool, writing_back(writer.staging):
            try:
                fabric_files = pool.apply_async(_render_fabric_files)  # queued first: a worker takes it at once
                for b, part in zip(bounds, pool.imap(_render_slice, bounds), strict=True):
                    out.append(part)
                    if progress:
                        progress((b[1] - b[0]) + (b[3] - b[2]))
                out.append(fabric_files.get())
            except OutputError:
                raise
            except OSError as exc:
                # A worker's OSError comes back as a plain OSError (an OutputError would not survive pickling).
                raise output_error(Path(exc.filename) if exc.filename else writer.staging, exc) from None
        return out
    finally:
        _JOB = None
