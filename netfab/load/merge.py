"""Assemble one IntentSource from the PATH arguments: expand directories, parse each file, merge in order.

The precedence rules are documented in the package docstring (netfab/load/__init__.py); they are implemented
here by `expand_paths` (which files, in which order) and `merge_data` (how two files combine).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netfab.core.findings import Finding, Location, Severity
from netfab.load.yamlsource import DataPath, SourceMap, parse_yaml_file

YAML_SUFFIXES = (".yaml", ".yml")

# Findings that mean "we could not read what you gave us" (exit code 2) rather than "what you wrote is wrong".
UNREADABLE_RULES = frozenset({"YAML000", "LOAD001", "LOAD002", "LOAD003"})


@dataclass
class IntentSource:
    """The merged plain data of all input files, where each value came from, and what went wrong loading it."""

    data: dict[Any, Any]
    source_map: SourceMap
    findings: list[Finding] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    contents: dict[Path, bytes] = field(default_factory=dict)
    """Each file's bytes as read for this very parse: a digest of the intent is taken over these, never over a
    second read, or a file saved in between would be built from one text and recorded as the other."""

    def read_as_parsed(self) -> list[tuple[Path, bytes]] | None:
        """(file, bytes) of every input file as parsed, in order; None when some file was not read."""
        if any(f not in self.contents for f in self.files):
            return None
        return [(f, self.contents[f]) for f in self.files]

    @property
    def unreadable(self) -> bool:
        """True when some input could not be read or parsed at all: the CLI exits 2, not 1."""
        return any(f.rule_id in UNREADABLE_RULES and f.severity is Severity.ERROR for f in self.findings)


def load_intent_source(paths: Sequence[Path]) -> IntentSource:
    files, findings = expand_paths(paths)
    data: dict[Any, Any] = {}
    source_map = SourceMap(default=Location(str(files[0]) if files else str(paths[0]) if paths else "<input>"))
    named: list[tuple[Path, str, Location]] = []
    contents: dict[Path, bytes] = {}
    for file in files:
        parsed = parse_yaml_file(file)
        findings.extend(parsed.findings)
        if parsed.raw is not None:
            contents[file] = parsed.raw
        if parsed.data is None:
            continue
        # A file with its own topology and fabric name is a whole intent; one that only renames the fabric
        # (an override file) is not.
        fabric = parsed.data.get("fabric")
        if "topology" in parsed.data and isinstance(fabric, dict) and isinstance(fabric.get("name"), str):
            named.append((file, fabric["name"], parsed.source_map.locate(("fabric", "name"))))
        if data:
            data, source_map = merge_data(data, source_map, parsed.data, parsed.source_map)
        else:  # the common single-file case: nothing to merge with
            data, source_map = parsed.data, parsed.source_map
    if len({name for _, name, _ in named}) > 1:
        findings.append(_separate_fabrics(named))
    return IntentSource(data, source_map, findings, files, contents)


def _separate_fabrics(named: list[tuple[Path, str, Location]]) -> Finding:
    """LOAD005: merged files that each describe a topology name different fabrics, so they are most likely
    separate intents a directory argument merged by accident (a merged intent is one fabric: the last name wins)."""
    listed = "; ".join(f"{file.name}: {name}" for file, name, _ in named)
    count = len({name for _, name, _ in named})
    winner = named[-1]
    return Finding(
        "LOAD005",
        Severity.WARNING,
        f"these files each describe a topology and name {count} different fabrics ({listed}) and were merged "
        f"into one intent, fabric {winner[1]}",
        winner[2],
        "to check each file as a fabric of its own: netfab lint --each PATH...; to merge them on purpose, set "
        "fabric.name in one file only",
        "fabric.name",
    )


def expand_paths(paths: Sequence[Path]) -> tuple[list[Path], list[Finding]]:
    """Files to load in merge order: arguments in order, a directory's YAML files sorted by name."""
    files: list[Path] = []
    findings: list[Finding] = []

    def unreadable(path: Path, message: str, hint: str) -> None:
        findings.append(Finding("LOAD001", Severity.ERROR, message, Location(str(path)), hint))

    for path in paths:
        try:
            if path.is_dir():
                found = sorted(
                    (p for p in path.iterdir() if _is_intent_file(p)),
                    key=lambda p: p.name,
                )
                if not found:
                    unreadable(path, "directory contains no *.yaml or *.yml files", "point at an intent directory")
                files.extend(found)
            elif path.is_file():
                files.append(path)
            elif path.exists():
                unreadable(path, "not a regular file or directory", "pass a YAML file or a directory of them")
            else:
                unreadable(path, "no such file or directory", "check the path")
        except OSError as exc:
            unreadable(path, f"cannot read: {exc.strerror or type(exc).__name__}", "check the path and permissions")
    return files, findings


def _is_intent_file(path: Path) -> bool:
    # Dotfiles are editor and tool droppings (.#x.yaml, ._x.yaml from macOS), never intent.
    return path.suffix.lower() in YAML_SUFFIXES and not path.name.startswith(".") and path.is_file()


def merge_data(
    base: dict[Any, Any], base_map: SourceMap, over: dict[Any, Any], over_map: SourceMap
) -> tuple[dict[Any, Any], SourceMap]:
    """Deep-merge `over` onto `base`; the source map follows whichever file's value won at every path."""
    out = SourceMap(default=over_map.default)
    merged = _merge(base, over, (), base_map, over_map, out)
    return merged, out


def _merge(base: Any, over: Any, path: DataPath, base_map: SourceMap, over_map: SourceMap, out: SourceMap) -> Any:
    if not (isinstance(base, dict) and isinstance(over, dict)):
        _copy_locations(over, path, over_map, out)  # scalars and lists are replaced whole
        return over
    for src in (base_map, over_map):  # the mapping itself: the later file wins where it has one
        _copy_one(src, path, out)
    result = dict(base)
    for key, value in base.items():
        if key not in over:
            _copy_locations(value, (*path, key), base_map, out)
    for key, value in over.items():
        child = (*path, key)
        if key in base:
            result[key] = _merge(base[key], value, child, base_map, over_map, out)
        else:
            result[key] = value
            _copy_locations(value, child, over_map, out)
    return result


def _copy_locations(value: Any, path: DataPath, src: SourceMap, out: SourceMap) -> None:
    # Walk the data, not the map: cost is the size of the subtree, and stale entries never carry over.
    _copy_one(src, path, out)
    if isinstance(value, dict):
        for key, child in value.items():
            _copy_locations(child, (*path, key), src, out)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            _copy_locations(child, (*path, index), src, out)


def _copy_one(src: SourceMap, path: DataPath, out: SourceMap) -> None:
    pos = src.values.get(path)
    if pos is not None:
        out.values[path] = pos
    key_pos = src.keys.get(path)
    if key_pos is not None:
        out.keys[path] = key_pos
