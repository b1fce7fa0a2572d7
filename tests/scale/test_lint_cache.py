"""The lint cache answers only for exactly the same inputs: same bytes, same options, same netfab."""

from __future__ import annotations

from pathlib import Path

import pytest
from lint_cache_helpers import no_linting, private_cache, run_lint

from netfab.cli import lint_cache

ROOT = Path(__file__).resolve().parents[2]
RAIL = ROOT / "intent" / "rail-4su.yaml"


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return private_cache(tmp_path, monkeypatch)


def test_an_unchanged_intent_is_answered_from_the_cache(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    intent = tmp_path / "x.yaml"
    intent.write_text(RAIL.read_text())
    assert run_lint(str(intent))[0] == 0
    assert len(list(cache.glob("lint-*.json"))) == 1
    no_linting(monkeypatch)
    code, text = run_lint(str(intent))
    # rail-4su's Cumulus tiers carry one info note (CAP024); the cached answer repeats it.
    assert code == 0 and "0 errors, 0 warnings, 1 note in 1 file" in text and "CAP024" in text
    # Any byte of the intent changes the key: a broken intent is linted, not answered "clean".
    intent.write_text(RAIL.read_text().replace("kmin: 150KB", "kmin: 9000KB"))
    monkeypatch.undo()
    monkeypatch.setenv(lint_cache.ENV_DIR, str(cache))
    code, text = run_lint(str(intent))
    assert code == 1, text
    no_linting(monkeypatch)
    assert run_lint(str(intent)) == (code, text)  # the cached findings are the same findings, same words


def test_options_are_part_of_the_key_and_no_cache_writes_nothing(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_lint(str(RAIL), "--no-cache")[0] == 0
    assert not cache.exists()
    run_lint(str(RAIL))
    run_lint(str(RAIL), "--strict")
    run_lint(str(RAIL), "--no-plan")
    assert len(list(cache.glob("lint-*.json"))) == 3


def test_an_unwritable_cache_is_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(lint_cache.ENV_DIR, str(blocker / "cache"))
    assert run_lint(str(RAIL))[0] == 0
    assert run_lint(str(RAIL))[0] == 0
