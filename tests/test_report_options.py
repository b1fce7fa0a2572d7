"""-f/--format and -o/--output mean the same on every reporting verb: same names, same choices, same help."""

from __future__ import annotations

from typing import Any

import pytest
import typer.main

from netfab.cli import app as app_module
from netfab.report import FORMATS
from netfab.report.schema import report_schema_text

REPORTING_VERBS = ("lint", "verify", "audit", "analyze")


@pytest.fixture(scope="module")
def commands() -> dict[str, Any]:
    if not any(c.name == "lint" for c in app_module.app.registered_commands):
        app_module._register_verbs()
    group = typer.main.get_group(app_module.app)
    return dict(group.commands)


def _option(command: Any, long: str) -> Any:
    [option] = [p for p in command.params if p.param_type_name == "option" and long in p.opts]
    return option


@pytest.mark.parametrize("verb", REPORTING_VERBS)
def test_every_reporting_verb_shares_format_and_output(commands: dict[str, Any], verb: str) -> None:
    command = commands[verb]
    fmt = _option(command, "--format")
    assert fmt.opts == ["--format", "-f"] and fmt.default == "text"
    output = _option(command, "--output")
    assert output.opts == ["--output", "-o"] and output.default is None
    shared = (_option(commands["lint"], "--format").help, _option(commands["lint"], "--output").help)
    assert (fmt.help, output.help) == shared
    # -o is the report file everywhere: no other option of a reporting verb may claim it
    assert [p.name for p in command.params if p.param_type_name == "option" and "-o" in p.opts] == ["output"]


@pytest.mark.parametrize("verb", REPORTING_VERBS)
def test_every_reporting_verb_offers_the_same_formats(commands: dict[str, Any], verb: str) -> None:
    from typer.testing import CliRunner

    result = CliRunner().invoke(app_module.app, [verb, "-f", "yaml", "intent.yaml"])
    choices = ", ".join(f"'{f}'" for f in FORMATS)
    said = " ".join(result.stderr.replace("│", " ").split())  # rich boxes and wraps the usage error
    assert result.exit_code == 2 and f"'yaml' is not one of {choices}" in said


def test_schema_command_prints_the_report_schema(commands: dict[str, Any]) -> None:
    from typer.testing import CliRunner

    result = CliRunner().invoke(app_module.app, ["schema", "--report"])
    assert result.exit_code == 0 and result.stdout == report_schema_text()
