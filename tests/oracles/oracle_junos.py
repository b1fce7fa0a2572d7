"""Junos `set` lines walked through Juniper's own configuration YANG (Juniper/yang, 24.4R1-EVO, the
conf-with-extensions modules), parsed with pyang and resolved lazily (only the hierarchy netfab writes is ever
expanded: the full model is ~10 MB of YANG).

How a set line maps onto the model (Juniper's CLI mapping, carried by the modules' extensions):
- every keyword is a container, list, leaf or leaf-list of the node reached so far (choice/case are transparent,
  `uses` expands its grouping, each module's `augment /jc:configuration` adds its top-level hierarchy);
- a list consumes its key value(s) after its keyword; a list or leaf marked `junos:cli-feature "nokeyword"` has
  no keyword: the token is its key or its value (`set interfaces et-0/0/0 ...` is list `interface`, keyless);
- a leaf's value is checked against its type: enumerations, integer ranges, string length, YANG patterns and
  `junos:posix-pattern`, unions (any member), typedefs (followed across modules); `empty` takes no value and
  leaf-lists take one value or `[ a b ... ]`;
- after a leaf, further tokens continue at the same level (`set ... fill-level 8 drop-probability 0`).

`KNOWN_GAPS` lists what the published EVO model lacks but Juniper's own QFX5240 validated designs configure;
such lines are counted as exceptions, not judged.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from pyang import context, repository
from pyang.statements import Statement

EXT = "junos-common-ddl-extensions"
DATA = frozenset({"container", "list", "leaf", "leaf-list"})
TRANSPARENT = frozenset({"choice", "case"})

# Juniper's QFX5240-64OD validated designs (github Juniper/jvd, aiml_multitenancy_backend) use these; the 24.4R1-EVO
# published model has none of them (oracles/junos-yang/README.md). A matching line is an exception, not a verdict.
KNOWN_GAPS: tuple[re.Pattern[str], ...] = (
    re.compile(r"^class-of-service shared-buffer( |$)"),
    re.compile(r"^class-of-service dedicated-buffer( |$)"),
    re.compile(r"^chassis fpc \S+ traffic-manager buffer-monitor-enable$"),
)


@dataclass
class Node:
    """A schema node with its defining module (for prefix and typedef lookup)."""

    stmt: Statement
    module: str
    _children: dict[str, Node] | None = field(default=None, repr=False)
    _nokeyword: list[Node] | None = field(default=None, repr=False)

    @property
    def kind(self) -> str:
        return str(self.stmt.keyword)

    @property
    def name(self) -> str:
        return str(self.stmt.arg)


class JunosYang:
    def __init__(self, folder: Path) -> None:
        repo = repository.FileRepository(str(folder), use_env=False)
        ctx = context.Context(repo)
        self.modules: dict[str, Statement] = {}
        for path in sorted(folder.glob("*.yang")):
            module = ctx.add_module(str(path), path.read_text(encoding="utf-8"))
            if module is None:
                raise ValueError(f"pyang cannot parse {path}")
            self.modules[str(module.arg)] = module
        self.prefixes: dict[str, dict[str, str]] = {}
        self.groupings: dict[str, dict[str, Statement]] = {}
        self.typedefs: dict[str, dict[str, Statement]] = {}
        for name, module in self.modules.items():
            own = str(module.search_one("prefix").arg)
            imports = {str(i.search_one("prefix").arg): str(i.arg) for i in module.search("import")}
            self.prefixes[name] = {own: name, **imports}
            self.groupings[name] = {str(g.arg): g for g in module.search("grouping")}
            self.typedefs[name] = {str(t.arg): t for t in module.search("typedef")}
        root_module = self.modules["junos-conf-root"]
        configuration = root_module.search_one("container", "configuration")
        self.root = Node(configuration, "junos-conf-root")
        extra: list[tuple[Statement, str]] = []
        for name, module in self.modules.items():
            for augment in module.search("augment"):
                if augment.arg == "/jc:configuration":
                    extra.extend((s, name) for s in augment.substmts)
        self.root_extra = extra
        self._lines: dict[str, str | None] = {}

    # --- the schema tree -------------------------------------------------------------------------------------

    def _resolve(self, module: str, ref: str, table: dict[str, dict[str, Statement]]) -> tuple[Statement, str]:
        prefix, _, local = ref.rpartition(":")
        target = self.prefixes[module].get(prefix, module) if prefix else module
        found = table[target].get(local)
        if found is None:
            raise KeyError(f"{ref} not found from {module}")
        return found, target

    def _expand(self, stmts: list[tuple[Statement, str]], out: list[Node]) -> None:
        for stmt, module in stmts:
            kw = stmt.keyword
            if kw in DATA:
                out.append(Node(stmt, module))
            elif kw in TRANSPARENT:
                self._expand([(s, module) for s in stmt.substmts], out)
            elif kw == "uses":
                grouping, owner = self._resolve(module, str(stmt.arg), self.groupings)
                self._expand([(s, owner) for s in grouping.substmts], out)

    def children(self, node: Node) -> tuple[dict[str, Node], list[Node]]:
        if node._children is None:
            stmts = [(s, node.module) for s in node.stmt.substmts]
            if node is self.root:
                stmts += self.root_extra
            found: list[Node] = []
            self._expand(stmts, found)
            node._children = {}
            node._nokeyword = []
            for child in found:
                if _nokeyword(child.stmt) and child.kind in ("list", "leaf", "leaf-list"):
                    node._nokeyword.append(child)
                else:
                    node._children.setdefault(child.name, child)
        assert node._nokeyword is not None
        return node._children, node._nokeyword

    def keys(self, node: Node) -> list[Node]:
        names = str(node.stmt.search_one("key").arg).split()
        kids, nokey = self.children(node)
        by_name = {**{n.name: n for n in nokey}, **kids}
        return [by_name[n] for n in names]

    # --- values ----------------------------------------------------------------------------------------------

    def accepts(self, leaf: Node, value: str) -> bool:
        return self._type_accepts(leaf.stmt.search_one("type"), leaf.module, value, depth=0)

    def _type_accepts(self, type_stmt: Statement | None, module: str, value: str, depth: int) -> bool:
        if type_stmt is None or depth > 20:
            return True
        name = str(type_stmt.arg)
        if not _restrictions_accept(type_stmt, value):
            return False
        if name == "union":
            return any(self._type_accepts(t, module, value, depth + 1) for t in type_stmt.search("type"))
        if name == "enumeration":
            return value in {str(e.arg) for e in type_stmt.search("enum")}
        if name in _INTEGER:
            return _integer_accepts(name, type_stmt, value)
        if name == "boolean":
            return value in ("true", "false")
        if name == "decimal64":
            return re.fullmatch(r"-?\d+(\.\d+)?", value) is not None
        if name == "empty":
            return False
        if name in ("string", "binary", "bits", "leafref", "identityref", "instance-identifier"):
            return True
        typedef, owner = self._resolve(module, name, self.typedefs)
        return self._type_accepts(typedef.search_one("type"), owner, value, depth + 1)

    def is_empty(self, leaf: Node) -> bool:
        return _type_name(leaf.stmt) == "empty"

    # --- set lines -------------------------------------------------------------------------------------------

    def line_error(self, line: str) -> str | None:
        """None when the model has this `set` line, else why not."""
        if line in self._lines:
            return self._lines[line]
        error = self._line_error(line)
        self._lines[line] = error
        return error

    def _line_error(self, line: str) -> str | None:
        try:
            tokens = shlex.split(line)
        except ValueError as exc:
            return f"unreadable: {exc}"
        if not tokens or tokens[0] != "set":
            return "not a set line"
        return self._walk(self.root, tokens, 1, "")

    def _walk(self, node: Node, tokens: list[str], i: int, path: str) -> str | None:
        if i == len(tokens):
            return None
        token = tokens[i]
        kids, nokey = self.children(node)
        child = kids.get(token)
        if child is not None:
            return self._enter(child, tokens, i + 1, f"{path} {token}", node)
        deeper: str | None = None
        for candidate in nokey:
            if candidate.kind == "list":
                key = self.keys(candidate)[0]
                if _nokeyword(key.stmt) and self.accepts(key, token):
                    error = self._enter_list_entry(candidate, tokens, i, path)
                    if error is None:
                        return None
                    deeper = deeper or error
            elif self.accepts(candidate, token):
                return self._walk(node, tokens, i + 1, f"{path} {token}")
        return deeper or f"'{token}' is not a statement under '{path.strip() or 'configuration'}'"

    def _enter(self, child: Node, tokens: list[str], i: int, path: str, parent: Node) -> str | None:
        if child.kind == "container":
            return self._walk(child, tokens, i, path)
        if child.kind == "list":
            return self._enter_list_entry(child, tokens, i, path)
        if child.kind == "leaf":
            if self.is_empty(child):
                return self._walk(parent, tokens, i, path)
            if i == len(tokens):
                return f"'{path.strip()}' needs a value"
            if not self.accepts(child, tokens[i]):
                return f"'{path.strip()}': value {tokens[i]!r} does not match the model's type"
            return self._walk(parent, tokens, i + 1, path)
        # leaf-list: one value, or [ a b ... ]
        if i == len(tokens):
            return f"'{path.strip()}' needs a value"
        values = [tokens[i]]
        end = i + 1
        if tokens[i] == "[":
            try:
                close = tokens.index("]", i)
            except ValueError:
                return f"'{path.strip()}': unclosed ["
            values, end = tokens[i + 1 : close], close + 1
        bad = [v for v in values if not self.accepts(child, v)]
        if bad:
            return f"'{path.strip()}': value(s) {bad} do not match the model's type"
        return self._walk(parent, tokens, end, path)

    def _enter_list_entry(self, lst: Node, tokens: list[str], i: int, path: str) -> str | None:
        """A key leaf marked nokeyword is a bare value; any other key is written `<name> <value>`."""
        start = i
        for key in self.keys(lst):
            if not _nokeyword(key.stmt):
                if i < len(tokens) and tokens[i] == key.name:
                    i += 1
                else:
                    return f"'{path.strip()}' needs its key '{key.name} <value>'"
            if i >= len(tokens):
                return f"'{path.strip()}' needs its key {key.name!r}"
            if not self.accepts(key, tokens[i]):
                return f"'{path.strip()}': key {key.name} {tokens[i]!r} does not match the model's type"
            i += 1
        return self._walk(lst, tokens, i, f"{path} {' '.join(tokens[start:i])}")


def _nokeyword(stmt: Statement) -> bool:
    return any(s.arg == "nokeyword" for s in stmt.substmts if _is_ext(s, "cli-feature"))


def _is_ext(stmt: Statement, name: str) -> bool:
    kw = stmt.keyword
    return isinstance(kw, tuple) and kw[1] == name


def _type_name(stmt: Statement) -> str | None:
    t = stmt.search_one("type")
    return None if t is None else str(t.arg)


_INTEGER = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}


def _integer_accepts(name: str, type_stmt: Statement, value: str) -> bool:
    if re.fullmatch(r"[+-]?\d+", value) is None:
        return False
    number = int(value)
    low, high = _INTEGER[name]
    if not low <= number <= high:
        return False
    rng = type_stmt.search_one("range")
    return rng is None or _in_ranges(str(rng.arg), number, low, high)


def _in_ranges(spec: str, number: int, low: int, high: int) -> bool:
    for part in spec.split("|"):
        bounds = [b.strip() for b in part.split("..")]
        values = [low if b == "min" else high if b == "max" else int(b) for b in bounds]
        if values[0] <= number <= values[-1]:
            return True
    return False


@cache
def _regex(pattern: str, anchored: bool) -> re.Pattern[str]:
    return re.compile(pattern if not anchored else f"(?:{pattern})\\Z")


def _restrictions_accept(type_stmt: Statement, value: str) -> bool:
    length = type_stmt.search_one("length")
    if length is not None and not _in_ranges(str(length.arg), len(value), 0, 2**32):
        return False
    for pattern in type_stmt.search("pattern"):  # XSD regex: the whole value must match
        if not _regex(str(pattern.arg), True).match(value):
            return False
    for sub in type_stmt.substmts:
        if _is_ext(sub, "posix-pattern") and not _regex(str(sub.arg), False).search(value):
            return False
    return True


def is_known_gap(line: str) -> bool:
    body = line.removeprefix("set ")
    return any(p.search(body) for p in KNOWN_GAPS)


def errors(model: JunosYang, text: str) -> list[str]:
    """Every set line of one rendered file the model lacks ([] = valid); comments and known gaps are skipped."""
    problems: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#") or is_known_gap(line):
            continue
        error = model.line_error(line)
        if error is not None:
            problems.append(f"line {number}: {error}: {line}")
    return problems


@cache
def junos_yang(folder: Path) -> JunosYang:
    return JunosYang(folder)
