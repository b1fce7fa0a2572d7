"""Parse one YAML file into plain Python data plus a source map, reporting YAML hazards as findings.

We compose the node graph with PyYAML (C loader when built) and construct values ourselves instead of calling
``safe_load``: only the nodes carry line/column marks, the raw text and the quoting style, and those are what
we need both to point errors at the user's line and to spot YAML 1.1 traps (``on`` read as ``true``, ``0755``
read as octal 493) that a constructed value no longer shows. Nothing in here raises for bad input: every problem
becomes a Finding with a location.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from netfab.core.findings import Finding, Location, Severity

# The C loader is ~10x faster at composing; its marks are identical. It is optional in PyYAML builds.
_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

DataPath = tuple[str | int, ...]  # keys and list indices from the root; keys are whatever YAML made of them
Position = tuple[str, int, int]  # (file, 1-based line, 1-based column): a Location is only built when asked for

# Every YAML file netfab reads (intents, playbooks, inventories, audit runbooks) goes through this module, so
# these caps hold for all of them. An intent is written by hand: a few thousand nodes. The caps only exist so
# that an alias bomb ("billion laughs"), a pathological nesting or a runaway file is a finding instead of a
# hang, gigabytes of memory, or a crash.
MAX_NODES = 200_000
"""Values after alias expansion. A generated inventory of ~1,700 switches has ~37,000."""
MAX_DEPTH = 100
MAX_BYTES = 64 * 1024 * 1024
"""A 50 MB intent (comments, one huge string) still loads in under a second; more is not a hand-written file."""

_YAML = "tag:yaml.org,2002:"
_STR, _BOOL, _INT, _FLOAT, _MERGE = (_YAML + t for t in ("str", "bool", "int", "float", "merge"))

# YAML 1.1 boolean words. YAML 1.2 (and most non-Python tools) only knows true/false in three spellings.
_BOOL_WORDS = frozenset({"yes", "no", "on", "off", "y", "n", "true", "false"})
_BOOL_OK = frozenset({"true", "false", "True", "False", "TRUE", "FALSE"})
_BOOL_START = frozenset("yYnNoOtTfF")
_SCALAR_TAGS = ("null", "bool", "int", "float", "binary", "timestamp")
_SCALAR_CONSTRUCTORS = {_YAML + t: SafeConstructor.yaml_constructors[_YAML + t] for t in _SCALAR_TAGS}
_SEQUENCE_TAGS = ("seq", "omap", "pairs")
_MAPPING_TAGS = ("map", "set")
_LEADING_ZERO = re.compile(r"[-+]?0[0-9_]+")
# libyaml counts NEL and the Unicode line/paragraph separators as line breaks; our line numbers must agree.
_LINE_BREAK = re.compile("\r\n|[\n\r\x85\u2028\u2029]")


def dotted(path: Iterable[Any]) -> str:
    """``("qos", "classes", 1, "dscp")`` -> ``qos.classes[1].dscp``: how users name a field."""
    out = ""
    for part in path:
        if isinstance(part, int) and not isinstance(part, bool):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


@dataclass
class SourceMap:
    """Where each value (and each mapping key) of the loaded data is written, by data path.

    Positions are stored as plain tuples: building a frozen Location for each of thousands of nodes was a
    third of the load time, and only the few that end up in a finding are ever needed.
    """

    values: dict[DataPath, Position] = field(default_factory=dict)
    keys: dict[DataPath, Position] = field(default_factory=dict)
    default: Location = field(default_factory=lambda: Location("<input>"))

    def locate(self, path: DataPath) -> Location:
        """The node at `path`, or its nearest existing ancestor (a missing field is reported at its parent)."""
        path = tuple(path)
        for end in range(len(path), -1, -1):
            pos = self.values.get(path[:end])
            if pos is not None:
                return Location(*pos)
        return self.default

    def key_location(self, path: DataPath) -> Location | None:
        """Where the mapping key that holds `path` is written, if `path` is a mapping entry we loaded."""
        pos = self.keys.get(tuple(path))
        return Location(*pos) if pos is not None else None


@dataclass
class ParsedFile:
    """One file's contribution. `data` is None when the file is empty or could not be read as a mapping."""

    file: Path
    data: dict[Any, Any] | None
    source_map: SourceMap
    findings: list[Finding]
    raw: bytes | None = None
    """The bytes read (parse_yaml_file), so what is digested is what was parsed, not a later read."""


def parse_yaml_file(path: Path, kind: str = "intent") -> ParsedFile:
    """`kind` names the document in hints (intent, playbook, inventory, audit runbook)."""
    name = str(path)
    try:
        raw = _read_bounded(path)
    except _NotRegular:
        hint = f"pass a regular {kind} file"
        return _failed(path, _finding("LOAD001", "not a regular file", Location(name), hint))
    except _TooLarge:
        msg = f"file is larger than {MAX_BYTES // (1024 * 1024)} MiB"
        return _failed(path, _finding("LOAD003", msg, Location(name), f"is this really a {kind} file?"))
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return _failed(path, _finding("LOAD001", f"cannot read file: {reason}", Location(name), "check the path"))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start].decode("utf-8", "replace")
        line, column = _position(before, len(before))
        msg = f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        return _failed(path, _finding("LOAD001", msg, Location(name, line, column), "save the file as UTF-8"))
    parsed = parse_yaml_text(text, path, kind)
    parsed.raw = raw
    return parsed


class _NotRegular(Exception):
    pass


class _TooLarge(Exception):
    pass


def _read_bounded(path: Path) -> bytes:
    # Opened non-blocking so a FIFO named as a playbook cannot hang us before fstat tells us what it is;
    # reading one byte past the cap is how a file that grows while we read is still caught.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _NotRegular
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_BYTES:
        raise _TooLarge
    return raw


def parse_yaml_text(text: str, path: Path, kind: str = "intent") -> ParsedFile:
    """A netfab document (intent, playbook, inventory, audit runbook): its top level must be a mapping."""
    value = _parse_value(text, path, kind)
    if value.root is None:
        return ParsedFile(path, None, value.source_map, value.findings)
    data = value.data
    if not isinstance(data, dict):
        shape = "a list" if isinstance(data, list) else f"a single {type(data).__name__} value"
        hint = (
            "an intent file is a mapping of top-level keys (fabric:, topology:, qos: ...)"
            if kind == "intent"
            else f"a {kind} file is a mapping of top-level keys"
        )
        value.findings.append(_finding("LOAD002", f"top level is {shape}, not a mapping", value.root, hint))
        data = None
    return ParsedFile(path, data, value.source_map, value.findings)


def parse_yaml_value(text: str, path: Path, kind: str) -> tuple[Any, list[Finding]]:
    """YAML that is data of any top-level shape (an NVUE config saved from a device), under the same caps.

    Returns the value (None when empty or unreadable) and the findings; hazards such as YAML 1.1 booleans are
    findings, the value keeps what YAML 1.1 (and so the device) makes of them.
    """
    value = _parse_value(text, path, kind)
    return value.data, value.findings


@dataclass
class _Value:
    data: Any
    source_map: SourceMap
    findings: list[Finding]
    root: Location | None = None
    """Where the top-level node is; None when nothing was built (empty, unreadable, over a cap)."""


def _parse_value(text: str, path: Path, kind: str) -> _Value:
    name = str(path)

    def failed(finding: Finding) -> _Value:
        return _Value(None, SourceMap(default=Location(name)), [finding])

    if len(text) > MAX_BYTES:  # characters, not bytes, here: close enough for a guard against runaway input
        msg = f"document is larger than {MAX_BYTES // (1024 * 1024)} MiB"
        return failed(_finding("LOAD003", msg, Location(name), f"is this really a {kind} file?"))
    deep = _too_deep(text)
    if deep is not None:
        loc = Location(name, deep[0] + 1, deep[1] + 1)
        return failed(_finding("LOAD003", f"nesting deeper than {MAX_DEPTH} levels", loc, _CAP_HINT))
    try:
        root = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        findings = [_syntax_finding(exc, text, name), *_tab_findings(text, name, set())]
        return _Value(None, SourceMap(default=Location(name)), findings)
    except RecursionError:  # only the pure-Python composer recurses
        return failed(_finding("LOAD003", "YAML nesting is too deep", Location(name), _CAP_HINT))
    if root is None:
        hint = f"an empty file contributes nothing to the {kind}"
        return failed(_finding("LOAD004", "file is empty", Location(name), hint, Severity.INFO))
    builder = _Builder(name, "\t" in text)
    try:
        data = builder.build(root)
    except _CapExceeded as exc:
        return failed(_finding("LOAD003", exc.message, builder.location(exc.node), _CAP_HINT))
    findings = builder.findings + _tab_findings(text, name, builder.multiline_scalar_lines)
    return _Value(data, builder.source_map, findings, builder.location(root))


_CAP_HINT = f"netfab accepts at most {MAX_NODES} values and {MAX_DEPTH} nesting levels; check anchors/aliases"
_COLLECTION_START = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
# libyaml's composer is known to survive 20,000 levels (the trial); well below that, composing is safe.
_COMPOSE_SAFE_DEPTH = 2_000


def _too_deep(text: str) -> tuple[int, int] | None:
    """Where (0-based line, column) the document first nests deeper than MAX_DEPTH, when composing could crash.

    libyaml's parser is a state machine, but its composer (and PyYAML's) recurses once per nesting level: a
    60 KB file of 30,000 nested brackets overflows the C stack (SIGSEGV) before any check on the composed
    nodes could run. So, before composing, an upper bound on the depth: flow levels need a bracket each,
    block levels need indentation (at most two levels per column: a sequence may sit at its key's indent).
    Only when the bound is high do we walk the parser's events; they arrive lazily, so a hostile document
    is refused after reading MAX_DEPTH levels of it. Ordinary files never pay for the walk.
    """
    longest = max(map(len, text.splitlines()), default=0)
    if text.count("[") + text.count("{") + 2 * longest + 2 <= _COMPOSE_SAFE_DEPTH:
        return None
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_LOADER):
            if isinstance(event, _COLLECTION_START):
                depth += 1
                mark = event.start_mark
                if depth > MAX_DEPTH and mark is not None:  # parser events always carry marks
                    return mark.line, mark.column
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        pass  # reported by compose, at the same position; up to there the nesting was within the cap
    return None


class _CapExceeded(Exception):
    def __init__(self, message: str, node: Node) -> None:
        super().__init__(message)
        self.message = message
        self.node = node


class _Builder:
    """Constructs plain values from a node graph, recording locations and hazards on the way."""

    def __init__(self, file: str, track_multiline: bool) -> None:
        self.file = file
        self.source_map = SourceMap(default=Location(file))
        self.findings: list[Finding] = []
        self.multiline_scalar_lines: set[int] = set()  # 0-based lines inside multi-line scalars (tabs are content)
        self._track_multiline = track_multiline  # only worth the cost when the text has tabs at all
        self._count = 0
        self._active: set[int] = set()  # ids of collection nodes being built: an alias back to one is a cycle
        self._constructor = SafeConstructor()
        self._reported: set[tuple[str, Location, str]] = set()  # aliases would repeat construction findings

    def location(self, node: Node) -> Location:
        return Location(*self._position(node))

    def _position(self, node: Node) -> Position:
        mark = node.start_mark
        return (self.file, mark.line + 1, mark.column + 1)

    def build(self, root: Node) -> Any:
        value = self._value(root, (), 0)
        self.source_map.default = self.location(root)
        return value

    def _value(self, node: Node, path: DataPath, depth: int) -> Any:
        self._count += 1
        if self._count > MAX_NODES:
            raise _CapExceeded(f"more than {MAX_NODES} values (alias explosion?)", node)
        if depth > MAX_DEPTH:
            raise _CapExceeded(f"nesting deeper than {MAX_DEPTH} levels", node)
        self.source_map.values[path] = self._position(node)
        if isinstance(node, ScalarNode):
            return self._scalar(node, path, is_key=False)
        if id(node) in self._active:
            raise _CapExceeded("an alias refers to a node that contains it (recursive structure)", node)
        self._check_tag(node, _SEQUENCE_TAGS if isinstance(node, SequenceNode) else _MAPPING_TAGS, path)
        self._active.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                return [self._value(child, (*path, i), depth + 1) for i, child in enumerate(node.value)]
            assert isinstance(node, MappingNode)
            return self._mapping(node, path, depth)
        finally:
            self._active.discard(id(node))

    def _mapping(self, node: MappingNode, path: DataPath, depth: int) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        merges: list[Node] = []
        explicit: list[tuple[ScalarNode, Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                merges.append(value_node)
            elif isinstance(key_node, ScalarNode):
                explicit.append((key_node, value_node))
            else:
                hint = "use a plain string key"
                self._add("YAML000", "complex (non-scalar) mapping keys are not supported", key_node, path, hint)
        # Merge keys (<<: *anchor): explicit keys win over merged ones, earlier merge sources over later ones.
        for source in self._merge_sources(merges, path):
            merged = self._value(source, path, depth + 1)
            for key, value in merged.items():
                result.setdefault(key, value)
        self.source_map.values[path] = self._position(node)  # merging recorded the anchor's position here
        keys = self.source_map.keys
        seen: dict[Any, Position] = {}
        for key_node, value_node in explicit:
            key = self._scalar(key_node, path, is_key=True)
            key_path = (*path, key)
            key_pos = self._position(key_node)
            if key in seen:
                msg = f"duplicate key '{key}' (YAML keeps only the last value)"
                hint = "remove one of the two entries or merge them"
                self._add("YAML001", msg, key_node, key_path, hint, related=Location(*seen[key]))
            seen[key] = key_pos
            keys[key_path] = key_pos
            result[key] = self._value(value_node, key_path, depth + 1)
        return result

    def _merge_sources(self, merges: list[Node], path: DataPath) -> list[MappingNode]:
        sources: list[MappingNode] = []
        for value in merges:
            candidates = value.value if isinstance(value, SequenceNode) else [value]
            for candidate in candidates:
                if isinstance(candidate, MappingNode):
                    sources.append(candidate)
                else:
                    msg = "a merge key (<<) needs a mapping or a list of mappings"
                    self._add("YAML000", msg, candidate, path, "write `<<: *anchor` where the anchor names a mapping")
        return sources

    def _scalar(self, node: ScalarNode, path: DataPath, is_key: bool) -> Any:
        raw, tag = node.value, node.tag
        # Plain scalars only: quoting is how a user says "this is a string". Cheap filter first: this runs
        # for every scalar, and almost none are hazards.
        if not node.style and raw:
            first = raw[0]
            if (first in _BOOL_START and len(raw) <= 5) or first in "0+-" or (":" in raw and first.isdigit()):
                self._check_plain(node, raw, tag, (*path, raw) if is_key else path, is_key)
        if self._track_multiline:
            start, end = node.start_mark, node.end_mark
            if end.line > start.line:  # a block scalar ends at column 0 of the line after its content
                self.multiline_scalar_lines.update(range(start.line + 1, end.line + (1 if end.column else 0)))
        if tag == _STR:
            return raw
        if tag == _INT and raw.isdigit() and (raw[0] != "0" or raw == "0"):
            return int(raw)  # the common case (ports, ASNs, MTUs), without PyYAML's sign/base/underscore logic
        if is_key and tag == _BOOL and raw not in _BOOL_OK:
            return raw  # `on:` as a key is meant as the word; YAML002 already flags it, don't cascade
        if tag in (_INT, _FLOAT) and ":" in raw:
            # YAML 1.1 base-60 (1:1 -> 61, 7:1 -> 421): nobody writing an intent means that. Keep the text, as
            # YAML 1.2 does, so the ratio reads as written; YAML003 still says to quote it for other tools.
            return raw
        constructor = _SCALAR_CONSTRUCTORS.get(tag)
        if constructor is None:
            self._check_tag(node, (), path)  # reports the unsupported tag
            return raw
        try:
            return constructor(self._constructor, node)
        except Exception as exc:
            # PyYAML's constructors trust the resolver: 2024-13-45 matches the timestamp pattern (ValueError),
            # an explicit `!!int ''` hits an IndexError. Any failure here is bad input, never a netfab bug.
            hint = "quote the value if it is meant as a string"
            self._add("YAML000", f"cannot read value {raw!r} as {tag.removeprefix(_YAML)}: {exc}", node, path, hint)
            return raw

    def _check_tag(self, node: Node, allowed: tuple[str, ...], path: DataPath) -> bool:
        if node.tag.startswith(_YAML) and node.tag.removeprefix(_YAML) in allowed:
            return True
        hint = "remove the tag; netfab reads plain YAML data only"
        self._add("YAML000", f"unsupported tag {node.tag!r} here", node, path, hint)
        return False

    def _check_plain(self, node: ScalarNode, raw: str, tag: str, path: DataPath, is_key: bool) -> None:
        if len(raw) <= 5 and raw.lower() in _BOOL_WORDS and raw not in _BOOL_OK:
            if is_key and tag != _BOOL:
                return  # keys like `y:` stay strings in every parser that matters to netfab
            if is_key:
                msg = f"key '{raw}' is a boolean in YAML 1.1; netfab keeps it as a string, other tools may not"
            elif tag == _BOOL:
                msg = f"'{raw}' is read as a boolean (YAML 1.1); YAML 1.2 tools read it as a string"
            else:
                msg = f"'{raw}' is a boolean in YAML 1.1 but a string here and in YAML 1.2"
            self._add("YAML002", msg, node, path, f"quote it ('{raw}') or use true/false")
        elif raw[0] in "0123456789+-":
            if _LEADING_ZERO.fullmatch(raw):
                value = self._int11(node) if tag == _INT else None
                if tag == _INT and value is None:
                    return  # `!!int 09` is no number at all: reading the value reports it (YAML000)
                read = f"octal {value}" if value is not None else "a string"
                msg = f"'{raw}' has a leading zero: read as {read} here (YAML 1.1), as decimal in YAML 1.2"
                hint = f"drop the leading zero, or quote it ('{raw}') if it is an identifier"
                self._add("YAML003", msg, node, path, hint)
            elif ":" in raw and tag in (_INT, _FLOAT):
                sexagesimal = self._int11(node) if tag == _INT else None
                if tag == _INT and sexagesimal is None:
                    # `!!int 1:30a` is no number in either YAML; the value is kept as text, so say so here.
                    msg = f"cannot read value {raw!r} as int: not a number in YAML 1.1 or 1.2"
                    self._add("YAML000", msg, node, path, "quote the value if it is meant as a string")
                    return
                read = f"the number {sexagesimal}" if sexagesimal is not None else "a base-60 number"
                msg = (
                    f"unquoted {raw} is {read} in YAML 1.1 (base 60), not a ratio; netfab reads it as the "
                    f"text '{raw}' as YAML 1.2 does, other YAML 1.1 tools will not"
                )
                self._add("YAML003", msg, node, path, f"quote it: '{raw}'")

    def _int11(self, node: ScalarNode) -> int | None:
        """What a YAML 1.1 loader reads an `!!int` scalar as, or None where it cannot read one (PyYAML raises
        ValueError for `!!int 09` or `!!int 1:30a`, which hypothesis found)."""
        try:
            value: int = self._constructor.construct_yaml_int(node)
        except ValueError:
            return None
        return value

    def _add(
        self, rule: str, message: str, node: Node, path: DataPath, hint: str, related: Location | None = None
    ) -> None:
        loc = self.location(node)
        if (rule, loc, message) not in self._reported:
            self._reported.add((rule, loc, message))
            self.findings.append(_finding(rule, message, loc, hint, path=dotted(path), related=related))


def _tab_findings(text: str, file: str, skip_lines: set[int]) -> list[Finding]:
    """YAML forbids tabs in indentation; editors hide them, so point at the exact character."""
    if "\t" not in text:
        return []
    findings = []
    for index, line in enumerate(_LINE_BREAK.split(text)):
        body = line.lstrip(" \t")
        tab = line.find("\t", 0, len(line) - len(body))
        if tab < 0 or not body or body.startswith("#") or index in skip_lines:
            continue
        hint = "indent with spaces only (set your editor to expand tabs)"
        loc = Location(file, index + 1, tab + 1)
        findings.append(_finding("YAML004", "tab character used for indentation", loc, hint))
    return findings


def _syntax_finding(exc: yaml.YAMLError, text: str, file: str) -> Finding:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        loc = Location(file, mark.line + 1, mark.column + 1) if mark else Location(file)
        problem = exc.problem or exc.context or "invalid YAML"
        related: tuple[Location, ...] = ()
        hint = "check indentation, quoting and brackets at this position"
        if exc.context and exc.context_mark is not None and exc.problem_mark is not None:
            ctx = exc.context_mark
            related = (Location(file, ctx.line + 1, ctx.column + 1),)
            hint += f" ({exc.context} started at line {ctx.line + 1}, column {ctx.column + 1})"
        return Finding("YAML000", Severity.ERROR, f"YAML syntax error: {problem}", loc, hint, related=related)
    if isinstance(exc, yaml.reader.ReaderError):
        line, column = _position(text, exc.position)
        msg = f"unacceptable character #x{exc.character:04x}: {exc.reason}"
        hint = "remove the control character (is this a binary file?)"
        return Finding("YAML000", Severity.ERROR, msg, Location(file, line, column), hint)
    return Finding("YAML000", Severity.ERROR, f"cannot parse YAML: {exc}", Location(file), "check the file's syntax")


def _position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset, counting line breaks as libyaml does."""
    before = text[:offset]
    breaks = list(_LINE_BREAK.finditer(before))
    if not breaks:
        return 1, offset + 1
    return len(breaks) + 1, offset - breaks[-1].end() + 1


def _finding(
    rule: str,
    message: str,
    location: Location,
    hint: str,
    severity: Severity = Severity.ERROR,
    path: str = "",
    related: Location | None = None,
) -> Finding:
    return Finding(rule, severity, message, location, hint, path, (related,) if related else ())


def _failed(path: Path, finding: Finding) -> ParsedFile:
    return ParsedFile(path, None, SourceMap(default=Location(str(path))), [finding])
