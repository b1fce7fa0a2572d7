"""Each vendor schema the matrix checks: which platform's files it reads, the releases it has a model of, and how
one file is judged. `verdicts(cell)` renders a cell once and judges its files with every schema of its platform;
a document already judged against the same model (same text: a later release renders it unchanged) is not
judged again."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import frr_parser
import nvue_schema
import oracle_eos
import oracle_junos
import oracle_matrix as matrix
import oracle_sonic
from oracle_matrix import Cell, Refusal


@dataclass(frozen=True)
class Schema:
    name: str
    platform: str
    suffix: str
    """Which of a device's files it reads ('.json' = SONiC's config_db)."""
    model_of: Callable[[str | None], str]
    """The model a release's files are judged by (a label: '5.18', 'master@086b03b')."""
    judge: Callable[[list[str], str], list[list[str]]]
    """(texts, model) -> each text's problems ([] = valid); a batch, for oracles that cost a process start."""
    missing: Callable[[], str | None]
    """Why the schema cannot run here (its oracle folder is absent), or None."""
    oracle_releases: tuple[str, ...] = ()
    every_example: bool = False
    """Judge clos3-24k and clos3-100k too (oracle_matrix._PENDING): for an oracle whose cost per fabric does not
    grow with its size (pyavd judges each distinct block extract once), so those cells cost only their render."""


def _oracle(sub: str) -> Path | None:
    root = matrix.oracles_dir()
    return root / sub if root is not None and (root / sub).is_dir() else None


def _needs(sub: str) -> Callable[[], str | None]:
    def missing() -> str | None:
        if _oracle(sub) is None:
            return f"no vendor schema folder {sub}/ (../shared/oracles beside the repository, or ${matrix.ORACLES_ENV})"
        return None

    return missing


def _each(judge: Callable[[str, str], list[str]]) -> Callable[[list[str], str], list[list[str]]]:
    return lambda texts, model: [judge(text, model) for text in texts]


def _vtysh_missing() -> str | None:
    return frr_parser.MISSING


def _sonic_judge(text: str, model: str) -> list[str]:
    folder = _oracle("sonic-yang")
    assert folder is not None
    try:
        config_db = json.loads(text)
    except json.JSONDecodeError as exc:
        return [f"not JSON: {exc}"]
    return oracle_sonic.sonic_yang(folder).errors(oracle_sonic.as_deployed(config_db))


def _junos_judge(text: str, model: str) -> list[str]:
    folder = _oracle(f"junos-yang/{model}")
    assert folder is not None
    return oracle_junos.errors(oracle_junos.junos_yang(folder), text)


JUNOS_MODEL = "24.4R1-EVO"


def _frr_model(_release: str | None) -> str:
    return "installed FRR"


def _vtysh_judge(texts: list[str], _model: str) -> list[list[str]]:
    return frr_parser.vtysh_errors_many(texts)


ALL_RELEASES_ENV = "NETFAB_ORACLE_ALL_RELEASES"


def nvue_releases() -> tuple[str, ...]:
    """The NVUE models the matrix judges against: the oldest and newest nvueschema has, and on each side of
    every release the platform record names (where the renderer's shape or capabilities change). Each of the 19
    models costs seconds to import and each release a full render, so all 19 (= 19 renders of every example)
    run only with NETFAB_ORACLE_ALL_RELEASES=1 (tests/oracles/measure.py --all-releases)."""
    versions = nvue_schema.VERSIONS
    if os.environ.get(ALL_RELEASES_ENV) == "1":
        return versions
    chosen = {versions[0], versions[-1]}
    for release in matrix.gate_releases("nvidia_cumulus"):
        if release in versions:
            index = versions.index(release)
            chosen.update(versions[max(index - 1, 0) : index + 1])
    return tuple(v for v in versions if v in chosen)


SCHEMAS: tuple[Schema, ...] = (
    # SONiC publishes one model set (master); every release's config_db is held to it.
    Schema("sonic-yang", "sonic", ".json", lambda _r: "master", _each(_sonic_judge), _needs("sonic-yang")),
    # SONiC's bgp container runs FRR: its frr.conf is held to the installed FRR's parser, as the frr platform's.
    Schema("sonic-frr", "sonic", ".frr.conf", _frr_model, _vtysh_judge, _vtysh_missing),
    Schema(
        "nvue",
        "nvidia_cumulus",
        ".yaml",
        nvue_schema.model_release,
        _each(lambda text, model: nvue_schema.errors(text, model)),
        lambda: None,
        nvue_releases(),
    ),
    # Juniper publishes per release; the oracle holds 24.4R1-EVO (Junos OS Evolved, which QFX5220/5230/5240
    # and PTX run), and every release's set file is held to it.
    Schema(
        "junos-yang",
        "juniper_junos",
        ".set",
        lambda _r: JUNOS_MODEL,
        _each(_junos_judge),
        _needs(f"junos-yang/{JUNOS_MODEL}"),
        (JUNOS_MODEL,),
    ),
    Schema("frr-vtysh", "frr", ".conf", _frr_model, _vtysh_judge, _vtysh_missing),
    # Arista publishes no configuration schema, but its generator (pyavd) has a validated model of the QoS, PFC,
    # ECN and load-balance blocks: each .cfg's blocks are read back into AVD structured config, validated and
    # rendered by pyavd, and compared (oracle_eos.py says what is and is not judged).
    Schema(
        "pyavd",
        "arista_eos",
        ".cfg",
        lambda _r: oracle_eos.model_label(),
        _each(lambda text, _model: oracle_eos.errors(text)),
        oracle_eos.missing,
        every_example=True,
    ),
)


def schema(name: str) -> Schema:
    return next(s for s in SCHEMAS if s.name == name)


@dataclass
class Verdict:
    schema: str
    cell: Cell
    refusal: str | None = None
    documents: int = 0
    problems: dict[str, list[str]] = field(default_factory=dict)
    """path -> problems, for the documents that are not valid."""

    @property
    def valid(self) -> int:
        return self.documents - len(self.problems)

    def all_problems(self) -> list[str]:
        return [p for found in self.problems.values() for p in found]


_JUDGED: dict[tuple[str, str, str], list[str]] = {}
BATCH = 200
"""Files judged per call (vtysh -C takes them in one process)."""


@cache
def verdicts(cell: Cell) -> dict[str, Verdict]:
    """Every schema of the cell's platform, judged over every file the cell renders."""
    mine = [s for s in SCHEMAS if s.platform == cell.platform and s.missing() is None]
    found = {s.name: Verdict(s.name, cell) for s in mine}
    models = {s.name: s.model_of(cell.release) for s in mine}
    pending: dict[str, list[tuple[str, str]]] = {s.name: [] for s in mine}

    def flush(s: Schema) -> None:
        batch = pending[s.name]
        fresh = {matrix.digest(text): text for _, text in batch}
        fresh = {d: t for d, t in fresh.items() if (s.name, models[s.name], d) not in _JUDGED}
        for d, problems in zip(fresh, s.judge(list(fresh.values()), models[s.name]), strict=True):
            _JUDGED[(s.name, models[s.name], d)] = problems
        for path, text in batch:
            problems = _JUDGED[(s.name, models[s.name], matrix.digest(text))]
            found[s.name].documents += 1
            if problems:
                found[s.name].problems[path] = problems
        batch.clear()

    try:
        for path, text in matrix.cell_documents(cell):
            # The longest suffix wins: SONiC's x.frr.conf is not also one of frr's .conf files.
            s = max((s for s in mine if path.endswith(s.suffix)), key=lambda s: len(s.suffix), default=None)
            if s is None:
                continue
            pending[s.name].append((path, text))
            if len(pending[s.name]) >= BATCH:
                flush(s)
        for s in mine:
            flush(s)
    except Refusal as exc:
        for verdict in found.values():
            verdict.refusal = str(exc)
    return found


def cells(s: Schema) -> list[Cell]:
    """Every example x release; the pending (scale) examples as sampled cells unless the schema judges them whole
    (every_example) or NETFAB_ORACLE_INCLUDE_PENDING=1 asks for every device."""
    full = set(matrix.example_intents(s.every_example))
    return [
        Cell(example, s.platform, release, sample=example not in full)
        for example in matrix.example_intents(every=True)
        for release in matrix.releases(s.platform, s.oracle_releases)
    ]
