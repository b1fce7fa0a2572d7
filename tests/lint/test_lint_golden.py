"""Golden error output: each tests/lint/golden/*.yaml linted through the CLI, text output pinned byte for byte.

Regenerate with NETFAB_UPDATE_GOLDEN=1 and review the diff: these files are the user-facing error text.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from netfab.cli import app as app_module

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(GOLDEN.glob("*.yaml"))
UPDATE = os.environ.get("NETFAB_UPDATE_GOLDEN") == "1"


@pytest.fixture(scope="module", autouse=True)
def verbs() -> None:
    if not any(c.name == "lint" for c in app_module.app.registered_commands):
        app_module._register_verbs()


@pytest.mark.parametrize("intent", CASES, ids=[p.stem for p in CASES])
def test_golden_text_output(intent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(GOLDEN)  # file names in the report are relative to the working directory
    result = CliRunner().invoke(app_module.app, ["lint", intent.name])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    actual = f"{result.stdout}[exit {result.exit_code}]\n"
    expected_path = intent.with_suffix(".expected")
    if UPDATE:
        expected_path.write_text(actual, encoding="utf-8")
    assert actual == expected_path.read_text(encoding="utf-8")


def test_every_golden_intent_fails() -> None:
    assert len(CASES) >= 6
    for expected in GOLDEN.glob("*.expected"):
        assert expected.with_suffix(".yaml").exists(), f"stale {expected.name}"
        assert not expected.read_text(encoding="utf-8").endswith("[exit 0]\n"), expected.name
