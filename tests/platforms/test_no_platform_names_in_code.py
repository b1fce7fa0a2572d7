"""No platform-name branches or platform-keyed dicts outside the platform records.

Everything netfab knows about a NOS lives in its record (netfab/platforms/<name>/platform.yaml) and its
templates; code asks the record. This scans every module of the package for a platform's name written as a
string, the form any `if platform == "sonic"` or `{"sonic": ...}` needs, and fails on a new one. Docstrings
are prose and not scanned. Exempt: the records package itself, and the per-platform code modules a record
names (its NAPALM driver and audit facts modules), which are that platform's own code, as its templates are.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from netfab.platforms import platform_names, registry

PACKAGE = Path(__file__).resolve().parents[2] / "netfab"

# (file relative to netfab/, literal): why this is not platform knowledge outside a record.
ALLOWED = {
    ("intent/topology.py", "arista_eos"): "the intent's default platform when a tier names none (product default)",
    ("lab/frr.py", "frr"): "the Unix user the FRR package creates, not the platform",
}


def _record_code() -> set[Path]:
    """Files of the code modules the records name (drivers, facts modules)."""
    modules = set()
    for spec in registry().specs.values():
        if spec.driver.module:
            modules.add(spec.driver.module)
        modules.update(part.facts for _, part in spec.audited)
    files = set()
    for name in modules:
        found = importlib.util.find_spec(name)
        assert found is not None and found.origin is not None, name
        files.add(Path(found.origin).resolve())
    return files


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for stmt in body:
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    ids.add(id(stmt.value))
    return ids


def platform_literals(root: Path, names: set[str], skip: set[Path]) -> list[tuple[str, int, str]]:
    hits = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("platforms/") or path.resolve() in skip:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        prose = _docstrings(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in prose:
                continue
            if node.value in names and (rel, node.value) not in ALLOWED:
                hits.append((rel, node.lineno, node.value))
    return hits


def test_no_platform_names_outside_the_records() -> None:
    hits = platform_literals(PACKAGE, set(platform_names()), _record_code())
    assert not hits, (
        "platform names in code (put the knowledge in the platform's record, netfab/platforms/<name>/"
        "platform.yaml, and ask the record instead): " + ", ".join(f"{f}:{n} {v!r}" for f, n, v in hits)
    )


def test_the_scan_finds_branches_and_keyed_dicts(tmp_path: Path) -> None:
    # The scanner itself must be able to fail: a branch and a platform-keyed dict are found, a docstring is not.
    (tmp_path / "probe.py").write_text(
        '"""Mentions "sonic" in prose."""\n'
        'def pick(platform: str) -> int:\n    return 1 if platform == "sonic" else 2\n'
        'PORTS = {"frr": "swp{n}"}\n'
    )
    hits = platform_literals(tmp_path, set(platform_names()), set())
    assert sorted(hits) == [("probe.py", 3, "sonic"), ("probe.py", 4, "frr")]


def test_allowances_are_still_needed() -> None:
    # An allowance whose literal has gone would silently permit a new branch in that file.
    for rel, literal in ALLOWED:
        tree = ast.parse((PACKAGE / rel).read_text(encoding="utf-8"))
        assert any(isinstance(n, ast.Constant) and n.value == literal for n in ast.walk(tree)), (rel, literal)
