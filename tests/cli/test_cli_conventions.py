"""The CLI agrees with itself: one meaning per option name across verbs, readable help, defaults from the
environment and from netfab.toml / [tool.netfab], long messages never hard-wrapped."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from netfab.cli import app as app_module
from netfab.cli.app import cli_command

REPO = Path(__file__).resolve().parents[2]
LAB_INTENT = REPO / "intent" / "lab.yaml"


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    subs = getattr(command, "commands", None)
    if subs is None:
        yield " ".join(path), command
        return
    for name, sub in sorted(subs.items()):
        yield from _commands(sub, (*path, name))


def _option(command: Any, name: str) -> Any | None:
    return next((p for p in command.params if name in p.opts), None)


@pytest.fixture(scope="module")
def verbs() -> dict[str, Any]:
    command, _ = cli_command()
    return dict(_commands(command))


def test_every_verb_is_found(verbs: dict[str, Any]) -> None:
    assert {"lint", "build", "deploy", "verify", "rollback", "audit", "analyze", "lab up", "lab down"} <= set(verbs)


# option name -> (metavar, words its help must contain): the one meaning that name has on every verb
MEANINGS = {
    "--limit": ("GLOB", "whose name matches this glob"),
    "--workers": ("N", "Devices contacted in parallel"),
    "--build": ("DIR", "Build output root"),
    "--runs": ("DIR", "run journals"),
    "--inventory": ("DIR", "Inventory override directory"),
    "--lab": ("PREFIX", "lab"),
}


@pytest.mark.parametrize("name", sorted(MEANINGS))
def test_an_option_name_means_one_thing_on_every_verb(verbs: dict[str, Any], name: str) -> None:
    metavar, words = MEANINGS[name]
    using = {verb: opt for verb, cmd in verbs.items() if (opt := _option(cmd, name)) is not None}
    assert using, name
    assert {verb: opt.metavar for verb, opt in using.items() if opt.metavar != metavar} == {}
    assert [verb for verb, opt in using.items() if words not in (opt.help or "")] == []


def test_lab_is_the_one_lab_selector_and_prefix_only_its_older_spelling(verbs: dict[str, Any]) -> None:
    for verb, cmd in verbs.items():
        prefix = _option(cmd, "--prefix")
        if prefix is not None:
            assert "--lab" in prefix.opts, verb
    # on `lab *` the lab is named; on the pipeline verbs it is a target
    assert all(_option(verbs[v], "--lab") is not None for v in ("lab up", "lab down", "lab status", "lab exec"))
    assert all(_option(verbs[v], "--lab") is not None for v in ("deploy", "verify", "audit", "rollback", "analyze"))


def test_every_verb_that_lints_the_intent_has_strict(verbs: dict[str, Any]) -> None:
    linting = [v for v, cmd in verbs.items() if any(p.name in ("intent", "intent_args", "paths") for p in cmd.params)]
    assert {"deploy", "verify", "audit", "rollback", "lab up", "lab export", "build", "analyze"} <= set(linting)
    assert [v for v in linting if _option(verbs[v], "--strict") is None] == []


def test_builds_limit_keeps_device_as_its_old_name(verbs: dict[str, Any]) -> None:
    limit = _option(verbs["build"], "--limit")
    assert limit is not None and "--device" in limit.opts


def test_audit_cpu_processes_are_jobs_not_workers(verbs: dict[str, Any]) -> None:
    jobs = _option(verbs["audit"], "--jobs")
    assert jobs is not None and "CPU" in (jobs.help or "")


def _run(*args: str, cwd: Path = REPO, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "100", **(env or {})}
    for key in [k for k in full if k.startswith("NETFAB_")]:
        if key not in (env or {}):
            del full[key]
    return subprocess.run(
        [sys.executable, "-m", "netfab.cli.app", *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("verb", ["lint", "build", "deploy", "verify", "rollback", "audit", "analyze", "lab up"])
def test_help_shows_words_not_python_types(verb: str) -> None:
    proc = _run(*verb.split(), "--help")
    assert proc.returncode == 0, proc.stderr
    assert "<bool>" not in proc.stdout
    assert "list[" not in proc.stdout and "<path>" not in proc.stdout


def _built_into(proc: subprocess.CompletedProcess[str]) -> Path:
    assert proc.returncode == 0, proc.stderr
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("built "))
    return Path(line.split(" into ", 1)[1].rsplit(" in ", 1)[0])


def test_long_messages_are_one_line_whatever_the_width(tmp_path: Path) -> None:
    deep = tmp_path / ("a-rather-long-directory-name-" * 4) / "build"
    proc = _run("build", str(LAB_INTENT), "--out", str(deep))
    # Not a terminal: rich used to wrap at 80 columns, splitting "... in\n0.64 s".
    assert _built_into(proc) == deep / "lab"


def test_environment_sets_the_default_and_the_command_line_beats_it(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    # --build is what deploy/verify/audit read; build's own root is --out. lab export uses --build: test it there.
    proc = _run("lab", "export", str(LAB_INTENT), cwd=cwd, env={"NETFAB_BUILD": str(tmp_path / "from-env")})
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "from-env" / "lab.clab.yml").is_file()
    proc = _run("lab", "export", str(LAB_INTENT), "--build", str(tmp_path / "cli"), cwd=cwd, env={"NETFAB_BUILD": "x"})
    assert proc.returncode == 0 and (tmp_path / "cli" / "lab.clab.yml").is_file()


def test_netfab_toml_sets_defaults_relative_to_itself_below_the_environment(tmp_path: Path) -> None:
    (tmp_path / "netfab.toml").write_text('build = "from-file"\nstrict = false\n')
    assert _run("lab", "export", str(LAB_INTENT), cwd=tmp_path).returncode == 0
    assert (tmp_path / "from-file" / "lab.clab.yml").is_file()
    env = {"NETFAB_BUILD": str(tmp_path / "env-wins")}
    assert _run("lab", "export", str(LAB_INTENT), cwd=tmp_path, env=env).returncode == 0
    assert (tmp_path / "env-wins" / "lab.clab.yml").is_file()


def test_pyproject_tool_netfab_table_is_read(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.netfab]\nbuild = "pp"\n')
    assert _run("lab", "export", str(LAB_INTENT), cwd=tmp_path).returncode == 0
    assert (tmp_path / "pp" / "lab.clab.yml").is_file()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('bulid = "x"\n', "unknown key 'bulid' (known: build, runs, lab, inventory, strict, workers)"),
        ('lab = "Not-A-Prefix"\n', "lab = 'Not-A-Prefix': expected 1-8 lowercase letters or digits"),
        ("workers = 0\n", "workers = 0: expected a whole number >= 1"),
        ("build = [\n", "not valid TOML"),
    ],
)
def test_a_bad_config_file_is_a_usage_error(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "netfab.toml").write_text(text)
    proc = _run("rules", cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_strict_from_the_environment_fails_on_warnings(tmp_path: Path) -> None:
    data = yaml.safe_load((REPO / "intent" / "rail-4su.yaml").read_text())
    data["qos"]["pfc"]["watchdog"] = None  # PFC001: a warning, so only --strict fails on it
    intent = tmp_path / "w.yaml"
    intent.write_text(yaml.safe_dump(data, sort_keys=False))
    plain = _run("lab", "export", str(intent), "--build", str(tmp_path / "b"))
    strict = _run("lab", "export", str(intent), "--build", str(tmp_path / "b"), env={"NETFAB_STRICT": "1"})
    assert plain.returncode == 0, plain.stderr
    assert "warning[PFC001]" in plain.stderr
    assert strict.returncode == 1 and "warning[PFC001]" in strict.stderr


# --- lab down / status take the intent as lab up does ------------------------------------------------------


class _State:
    def __init__(self, name: str) -> None:
        self.name = name


@pytest.fixture
def lab_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    import netfab.lab
    import netfab.lab.state
    from netfab.cli import lab_cmd

    calls: list[tuple[str, str]] = []
    monkeypatch.setattr(lab_cmd, "_need_root_and_frr", lambda: None)
    monkeypatch.setattr(netfab.lab.state, "load_state", lambda prefix: _State("other-fabric"))
    monkeypatch.setattr(netfab.lab, "down", lambda prefix: calls.append(("down", prefix)))
    if not any(g.name == "lab" for g in app_module.app.registered_groups):
        app_module._register_verbs()
    return calls


def test_lab_down_with_the_intent_refuses_a_lab_of_another_fabric(lab_calls: list[tuple[str, str]]) -> None:
    result = CliRunner().invoke(app_module.app, ["lab", "down", str(LAB_INTENT), "--lab", "zz"])
    assert result.exit_code == 2
    assert "lab zz runs fabric other-fabric, not lab" in result.output
    assert lab_calls == []


def test_lab_down_without_the_intent_and_with_prefix_still_works(lab_calls: list[tuple[str, str]]) -> None:
    result = CliRunner().invoke(app_module.app, ["lab", "down", "--prefix", "zz"])
    assert result.exit_code == 0, result.output
    assert lab_calls == [("down", "zz")]


def test_lab_down_with_the_matching_intent_goes_ahead(
    lab_calls: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import netfab.lab.state

    monkeypatch.setattr(netfab.lab.state, "load_state", lambda prefix: _State("lab"))
    result = CliRunner().invoke(app_module.app, ["lab", "down", str(LAB_INTENT), "--lab", "zz"])
    assert result.exit_code == 0, result.output
    assert lab_calls == [("down", "zz")]


def test_lab_status_with_the_intent_refuses_a_lab_of_another_fabric(lab_calls: list[tuple[str, str]]) -> None:
    result = CliRunner().invoke(app_module.app, ["lab", "status", str(LAB_INTENT), "--lab", "zz"])
    assert result.exit_code == 2 and "runs fabric other-fabric" in result.output


def test_root_help_states_the_exit_codes() -> None:
    proc = _run("--help")
    assert proc.returncode == 0
    assert "Exit codes: 0 ok, 1 findings/drift/failed checks, 2 usage or unreadable input" in " ".join(
        proc.stdout.split()
    )


@pytest.mark.parametrize("spelling", [["INTENT"], ["--intent", "INTENT"]])
def test_rollback_takes_the_intent_as_every_verb_does_and_keeps_intent_option(
    tmp_path: Path, spelling: list[str]
) -> None:
    args = [str(LAB_INTENT) if a == "INTENT" else a for a in spelling]
    proc = _run("rollback", "20261201-000000-abcd", *args, "--runs", str(tmp_path / "runs"), cwd=tmp_path)
    # The intent was read (the fabric is named); the run does not exist: a usage error, not a missing argument.
    assert proc.returncode == 2
    assert "no readable run '20261201-000000-abcd' for fabric lab" in proc.stderr


def test_rollback_without_an_intent_says_how_to_give_it(tmp_path: Path) -> None:
    proc = _run("rollback", "some-run", cwd=tmp_path)
    assert proc.returncode == 2 and "netfab rollback RUN_ID INTENT..." in proc.stderr


def test_config_reaches_subcommands_and_the_environment_beats_it(tmp_path: Path) -> None:
    (tmp_path / "netfab.toml").write_text('lab = "zz9"\n')
    proc = _run("lab", "status", cwd=tmp_path)
    assert proc.returncode == 2 and "no lab with prefix 'zz9'" in proc.stderr
    proc = _run("lab", "status", cwd=tmp_path, env={"NETFAB_LAB": "yy9"})
    assert "no lab with prefix 'yy9'" in proc.stderr
    proc = _run("lab", "status", "--prefix", "xx9", cwd=tmp_path, env={"NETFAB_LAB": "yy9"})
    assert "no lab with prefix 'xx9'" in proc.stderr
