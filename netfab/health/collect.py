"""Collecting counters: which commands each device runs (its platform record's health sources), one round trip
per device per sample through a Driver, every output parsed into netfab's counter vocabulary.

A Driver is whatever reaches the devices: SSH to the lab's switches plus the lab's host namespaces
(netfab.health.lab), saved outputs in a directory (FromDir), or recordings behind a delay (the benchmark's fake
fleet). Devices are read in parallel; a device that cannot be read, or whose output a parser refuses, becomes a
DeviceSample with an error (the report says so; the rest of the fleet is still analysed).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Protocol

import yaml

from netfab.health.model import CounterTable, DeviceSample, PortCounters
from netfab.health.parsers import ParseError, Parser, resolve
from netfab.platforms.model import Health, HealthSource

SEPARATOR = "=====netfab-health-output====="
"""Printed between the outputs of one device's commands when a driver runs them in one session."""


class CollectError(Exception):
    """A device could not be read at all (unreachable, authentication, timeout)."""


@dataclass(frozen=True, slots=True)
class Command:
    """One command for one device: a source, expanded for one port when the source is per port."""

    source: HealthSource
    text: str
    port: str = ""

    @property
    def key(self) -> str:
        """The command's name in saved samples: <source id>[.<port>] (ports may carry '/': replaced)."""
        return self.source.id + (f".{self.port.replace('/', '_')}" if self.port else "")


@dataclass(frozen=True, slots=True)
class Target:
    """A device to read: its name, the commands to run, and what the commands expand over."""

    device: str
    commands: tuple[Command, ...]
    kind: str = "switch"
    """switch or host (servers are reached differently in the lab)."""


class Driver(Protocol):
    def run(self, target: Target) -> list[str]:
        """Every command's output, in order; raise CollectError when the device cannot be read."""
        ...


@cache
def host_health() -> Health:
    """The GPU servers' sources (netfab/health/host_sources.yaml)."""
    raw = yaml.safe_load(Path(__file__).with_name("host_sources.yaml").read_text(encoding="utf-8"))
    return Health.model_validate(raw)


def commands_for(health: Health, ports: Sequence[tuple[str, str]]) -> tuple[Command, ...]:
    """The commands of `health` for a device whose ports are `ports` ((name, rdma device) pairs)."""
    out: list[Command] = []
    for src in health.sources:
        if "{port}" in src.command or "{rdma}" in src.command:
            out += [Command(src, src.command.format(port=p, rdma=r or p), p) for p, r in ports]
        else:
            out.append(Command(src, src.command))
    return tuple(out)


@cache
def _parser(dotted: str) -> Parser:
    return resolve(dotted)


def parse_outputs(target: Target, outputs: Sequence[str], at: float) -> DeviceSample:
    """One device's outputs -> a DeviceSample (its error names the command a parser refused)."""
    sample = DeviceSample(target.device, at)
    notes = []
    tables: list[CounterTable] = []
    loose: dict[str, PortCounters] = {}  # per-port dict outputs, merged in order until a table comes
    for cmd, text in zip(target.commands, outputs, strict=True):
        try:
            parsed = _parser(cmd.source.parser)(text, cmd.port)
        except ParseError as exc:
            if cmd.source.optional:
                notes.append(f"{cmd.text}: {exc}")
                continue
            sample.error = f"`{cmd.text}`: {exc}"
            return sample
        if isinstance(parsed, CounterTable):
            if loose:
                tables.append(CounterTable.from_dicts(loose))
                loose = {}
            tables.append(parsed)
            continue
        for port, counters in parsed.items():
            loose.setdefault(port, {}).update(counters)
    if loose:
        tables.append(CounterTable.from_dicts(loose))
    sample.ports = CounterTable.merge(tables)
    return sample


def collect(
    targets: Sequence[Target], driver: Driver, workers: int = 64, on_device: Callable[[str], None] | None = None
) -> dict[str, DeviceSample]:
    """One sample of every target: `workers` devices are read at once (their round trips overlap), and the
    outputs are parsed here, in the calling thread, as they arrive.

    Parsing is CPU work under the GIL: done in the reading threads, hundreds of threads would fight for it (at
    a 10,000-switch fleet that cost ~40 % more CPU, most of it in the kernel); one parser thread keeps the reads
    overlapped and the CPU spent on parsing alone."""

    def read(target: Target) -> tuple[float, float, list[str] | CollectError]:
        started = time.monotonic()
        try:
            outputs: list[str] | CollectError = driver.run(target)
        except CollectError as exc:
            outputs = exc
        return started, time.monotonic(), outputs

    out: dict[str, DeviceSample] = {}
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(targets)))) as pool:
        futures = {pool.submit(read, t): t for t in targets}
        for future in as_completed(futures):
            target = futures[future]
            started, done, outputs = future.result()
            if isinstance(outputs, CollectError):
                out[target.device] = DeviceSample(target.device, started, error=str(outputs))
                continue
            # The counters were read somewhere between the request and the answer: the middle is the best guess.
            sample = out[target.device] = parse_outputs(target, outputs, (started + done) / 2)
            sample.at_error = (done - started) / 2
            if on_device is not None:
                on_device(target.device)
    return {t.device: out[t.device] for t in targets}


@dataclass(slots=True)
class FromDir:
    """Saved outputs: DIR/<sample>/<device>/<command key>.txt, DIR/<sample>/at.json = {device: seconds}.

    `netfab health --save DIR` writes this layout; `--from-dir DIR` replays it (every sample in order).
    """

    root: Path
    sample: int = 0
    times: dict[str, float] = field(default_factory=dict)
    errors: dict[str, float] = field(default_factory=dict)
    """DIR/<sample>/at_error.json (half each read's round trip); older saves have none: 0."""

    def samples(self) -> list[int]:
        return sorted(int(p.name) for p in self.root.iterdir() if p.is_dir() and p.name.isdigit())

    def use(self, sample: int) -> None:
        import json

        self.sample = sample
        at = self.root / str(sample) / "at.json"
        try:
            self.times = {str(k): float(v) for k, v in json.loads(at.read_text(encoding="utf-8")).items()}
        except (OSError, ValueError, AttributeError) as exc:
            raise CollectError(f"{at}: {exc}") from exc
        spread = at.with_name("at_error.json")
        try:
            raw = json.loads(spread.read_text(encoding="utf-8")) if spread.exists() else {}
            self.errors = {str(k): float(v) for k, v in raw.items()}
        except (OSError, ValueError, AttributeError) as exc:
            raise CollectError(f"{spread}: {exc}") from exc

    def run(self, target: Target) -> list[str]:
        base = self.root / str(self.sample) / target.device
        out = []
        for cmd in target.commands:
            path = base / f"{cmd.key}.txt"
            try:
                out.append(path.read_text(encoding="utf-8"))
            except OSError as exc:
                if not cmd.source.optional:
                    raise CollectError(f"no saved output {path}") from exc
                out.append("")
        return out


def collect_saved(targets: Sequence[Target], source: FromDir) -> list[dict[str, DeviceSample]]:
    """Every saved sample; each device's time is the one recorded beside its outputs."""
    out = []
    for k in source.samples():
        source.use(k)
        sample = {}
        for t in targets:
            try:
                outputs = source.run(t)
            except CollectError as exc:
                sample[t.device] = DeviceSample(t.device, 0.0, error=str(exc))
                continue
            sample[t.device] = parse_outputs(t, outputs, source.times.get(t.device, float(k)))
            sample[t.device].at_error = source.errors.get(t.device, 0.0)
        out.append(sample)
    return out


class Recorder:
    """Wraps a driver and keeps every output, so a live run can be saved for --from-dir (and for bug reports)."""

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self.outputs: dict[str, list[str]] = {}

    def run(self, target: Target) -> list[str]:
        out = self.driver.run(target)
        self.outputs[target.device] = out
        return out


def save_sample(
    root: Path, sample: int, targets: Mapping[str, Target], recorder: Recorder, taken: Mapping[str, DeviceSample]
) -> None:
    """The recorded outputs of one sample, with the read times `taken` (collect's) holds: the very times the
    live analysis used, so a replay of the save gives the same report. (Times of the recorder's own, a few
    instructions inside collect's, once differed from them by enough on a loaded machine to move a score in
    its third decimal.)"""
    import json

    from netfab.core.fs import atomic_write_text

    base = root / str(sample)
    times, errors = {}, {}
    for device, outputs in recorder.outputs.items():
        times[device], errors[device] = taken[device].at, taken[device].at_error
        for cmd, text in zip(targets[device].commands, outputs, strict=True):
            atomic_write_text(base / device / f"{cmd.key}.txt", text)
    atomic_write_text(base / "at.json", json.dumps(times, indent=1, sort_keys=True) + "\n")
    atomic_write_text(base / "at_error.json", json.dumps(errors, indent=1, sort_keys=True) + "\n")
    recorder.outputs.clear()
