"""What the lint cache's tests share (tests/scale/test_lint_cache.py, tests/lint/test_lint_cache_trust.py): a
private cache directory per test, `netfab lint` in-process, and a lint that must not run."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import netfab.lint
from netfab.cli import app as app_module
from netfab.cli import lint_cache

runner = CliRunner()


def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache directory for one test (NETFAB_CACHE_DIR), the verbs registered."""
    if not any(c.name == "lint" for c in app_module.app.registered_commands):
        app_module._register_verbs()
    directory = tmp_path / "cache"
    monkeypatch.setenv(lint_cache.ENV_DIR, str(directory))
    return directory


def run_lint(*args: str) -> tuple[int, str]:
    result = runner.invoke(app_module.app, ["lint", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


def no_linting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any lint that runs fail the test: the answer must come from the cache."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("linted although the cache holds the answer")

    monkeypatch.setattr(netfab.lint, "lint_source", refuse)
