"""Property tests: mutated intents never crash `netfab lint`, and every finding points into the user's file.

Mutations start from valid intents (the examples and the test bases): drop a key, replace a value with a random
scalar/list/string/mapping, or insert an unknown key, one to three times. Whatever comes out, the CLI must exit
0 (the mutation happened to be valid), 1 (findings) or 2 (unreadable), never raise, and every finding must carry
a file and a line >= 1.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lint_helpers import CLOS3, EXAMPLES, RAIL
from typer.testing import CliRunner

from netfab.cli import app as app_module

# clos3-100k is clos3-24k with more pods: mutating it finds nothing new and designs 98k GPUs per example.
VALID = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in EXAMPLES if p.stem != "clos3-100k"] + [RAIL, CLOS3]
runner = CliRunner()

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=24),
    st.sampled_from(["400G", "150KB", "200ms", "1:7", "10.0.0.0/8", "arista_eos", "roce", "", "-1", "yes"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=3),
    max_leaves=8,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, child in items:
        out.append((*prefix, key))
        out.extend(_paths(child, (*prefix, key)))
    return out


def _parent(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        data = data[key]
    return data


def _tweak(value: Any) -> st.SearchStrategy[Any]:
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.integers(min_value=0, max_value=max(8, 2 * value))
    if isinstance(value, float):
        return st.floats(min_value=0.1, max_value=max(10.0, 2 * value))
    if isinstance(value, str):
        return st.sampled_from(PLAUSIBLE_STRINGS)
    if isinstance(value, list):
        return st.lists(st.sampled_from(value), max_size=len(value) + 1) if value else st.just([])
    return st.just(value)


PLAUSIBLE_STRINGS = ["100G", "400G", "800G", "10KB", "150KB", "1500KB", "50MB", "100ms", "400ms", "7:1", "1:1",
                     "10.0.0.0/24", "10.0.16.0/20", "10.64.0.0/12", "arista_eos", "sonic", "nvidia_cumulus",
                     "frr", "cisco_nxos", "juniper_junos", "4.32.0F", "4.33.1F", "latest", "dscp", "pcp", "drop",
                     "forward", "strict", "dwrr", "roce", "cnp", "p2p31", "unnumbered", "clos3"]  # fmt: skip


@st.composite
def mutated_intents(draw: st.DrawFn) -> dict[str, Any]:
    data = copy.deepcopy(draw(st.sampled_from(VALID)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _paths(data)
        op = draw(st.sampled_from(["drop", "replace", "insert", "tweak", "tweak"]))
        if op == "insert":
            mappings = [()] + [p for p in paths if isinstance(_parent(data, (*p, None)), dict)]
            where = draw(st.sampled_from(mappings))
            target = _parent(data, (*where, None))
            target[draw(st.text(min_size=1, max_size=12))] = draw(values)
            continue
        if not paths:
            continue
        path = draw(st.sampled_from(paths))
        parent = _parent(data, path)
        if op == "drop":
            del parent[path[-1]]
        elif op == "tweak":  # same type, plausible value: reaches the semantic rules, not just the schema
            parent[path[-1]] = draw(_tweak(parent[path[-1]]))
        else:
            parent[path[-1]] = draw(values)
    return data


@pytest.fixture(scope="module", autouse=True)
def verbs() -> None:
    if not any(c.name == "lint" for c in app_module.app.registered_commands):
        app_module._register_verbs()


def _lint_json(path: Path) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app_module.app, ["lint", "--format", "json", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 1, 2), result.stdout
    return result.exit_code, json.loads(result.stdout)


def _assert_located(report: dict[str, Any]) -> None:
    for finding in report["findings"]:
        loc = finding["location"]
        assert loc["file"], finding
        assert loc["line"] >= 1, finding
        assert finding["rule_id"] != "LINT-INTERNAL", finding["message"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_intents())
def test_mutated_intents_never_crash_and_findings_are_located(data: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mutated.yaml"
        path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
        code, report = _lint_json(path)
    _assert_located(report)
    errors = report["summary"]["errors"]
    assert (code == 0) == (errors == 0)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_never_crashes(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "noise.yaml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        _, report = _lint_json(path)
    for finding in report["findings"]:
        assert finding["location"]["file"]
