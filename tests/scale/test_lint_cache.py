"""The lint cache answers only for exactly the same inputs: same bytes, same options, same netfab."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import netfab.lint
from netfab.cli import app as app_module
from netfab.cli import lint_cache

ROOT = Path(__file__).resolve().parents[2]
RAIL = ROOT / "intent" / "rail-4su.yaml"
runner = CliRunner()


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if not any(c.name == "lint" for c in app_module.app.registered_commands):
        app_module._register_verbs()
    directory = tmp_path / "cache"
    monkeypatch.setenv(lint_cache.ENV_DIR, str(directory))
    return directory


def _lint(*args: str) -> tuple[int, str]:
    result = runner.invoke(app_module.app, ["lint", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


def _no_linting(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("linted although the cache holds the answer")

    monkeypatch.setattr(netfab.lint, "lint_source", refuse)


def test_an_unchanged_intent_is_answered_from_the_cache(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    intent = tmp_path / "x.yaml"
    intent.write_text(RAIL.read_text())
    assert _lint(str(intent))[0] == 0
    assert len(list(cache.glob("lint-*.json"))) == 1
    _no_linting(monkeypatch)
    code, text = _lint(str(intent))
    # rail-4su's Cumulus tiers carry one info note (CAP024); the cached answer repeats it.
    assert code == 0 and "0 errors, 0 warnings, 1 note in 1 file" in text and "CAP024" in text
    # Any byte of the intent changes the key: a broken intent is linted, not answered "clean".
    intent.write_text(RAIL.read_text().replace("kmin: 150KB", "kmin: 9000KB"))
    monkeypatch.undo()
    monkeypatch.setenv(lint_cache.ENV_DIR, str(cache))
    code, text = _lint(str(intent))
    assert code == 1, text
    _no_linting(monkeypatch)
    assert _lint(str(intent)) == (code, text)  # the cached findings are the same findings, same words


def test_options_are_part_of_the_key_and_no_cache_writes_nothing(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _lint(str(RAIL), "--no-cache")[0] == 0
    assert not cache.exists()
    _lint(str(RAIL))
    _lint(str(RAIL), "--strict")
    _lint(str(RAIL), "--no-plan")
    assert len(list(cache.glob("lint-*.json"))) == 3


def test_an_unwritable_cache_is_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(lint_cache.ENV_DIR, str(blocker / "cache"))
    assert _lint(str(RAIL))[0] == 0
    assert _lint(str(RAIL))[0] == 0
