"""The console entry builds only the verb a command line runs (netfab.cli.app.invoked_verb); everything else
still sees all of them."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
import typer
import typer.main

from netfab.cli.app import VERBS, cli_command, invoked_verb


def test_verbs_lists_every_registered_command_and_each_module_registers_its_own_name() -> None:
    command, _ = cli_command()
    assert sorted(command.commands) == sorted(VERBS)
    for verb in VERBS:
        alone = typer.Typer()
        alone.callback()(lambda: None)  # a group, as the real root is
        importlib.import_module(f"netfab.cli.{verb}_cmd").register(alone)
        assert list(typer.main.get_command(alone).commands) == [verb], verb


@pytest.mark.parametrize(
    ("argv", "verb"),
    [
        (["build", "intent.yaml"], "build"),
        (["lab", "up", "x.yaml"], "lab"),
        (["--version"], None),
        (["--help"], None),
        ([], None),
        (["biuld"], None),  # a typo gets the whole tree, so click can say which verbs exist
    ],
)
def test_invoked_verb(argv: list[str], verb: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("_NETFAB_COMPLETE", raising=False)
    assert invoked_verb(argv) == verb


def test_shell_completion_gets_every_verb(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_NETFAB_COMPLETE", "bash_complete")
    assert invoked_verb(["build"]) is None


def test_a_verb_alone_behaves_as_in_the_whole_tree() -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "netfab.cli.app", *args], capture_output=True, text=True, timeout=120
        )

    help_text = run("rules", "--help")
    assert help_text.returncode == 0 and "rules [OPTIONS]" in help_text.stdout
    bad_option = run("rules", "--no-such-option")
    assert bad_option.returncode == 2 and "No such option" in bad_option.stderr
    typo = run("biuld")
    assert typo.returncode == 2 and "No such command" in typo.stderr
