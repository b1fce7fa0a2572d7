"""The `netfab` verbs run in-process, as the scale tests drive them."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from typer.testing import CliRunner

from netfab.cli import app as app_module

Cli = Callable[..., tuple[int, str]]


@pytest.fixture(scope="package", autouse=True)
def verbs() -> None:
    if not any(c.name == "build" for c in app_module.app.registered_commands):
        app_module._register_verbs()


@pytest.fixture
def cli() -> Cli:
    """cli(*args, stdout_only=False) -> (exit code, output): one verb, in-process, never an uncaught exception.
    Click's output mixes stderr in; stdout_only reads a report on stdout alone (lint's notes go to stderr)."""
    runner = CliRunner()

    def run(*args: str, stdout_only: bool = False) -> tuple[int, str]:
        result = runner.invoke(app_module.app, list(args))
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        return result.exit_code, result.stdout if stdout_only else result.output

    return run
