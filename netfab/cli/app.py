"""Root of the `netfab` CLI.

Each verb lives in its own module with a `register(app)` function. Heavy imports (nornir, napalm, jinja2)
happen inside the verb's function, so `netfab lint` in CI starts fast.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import typer
import typer.main

from netfab import __version__
from netfab.core.exitcodes import ExitCode
from netfab.core.fs import OutputError
from netfab.core.validate import InputError

EXIT_CODES = "Exit codes: 0 ok, 1 findings/drift/failed checks, 2 usage or unreadable input, 3 internal error."

app = typer.Typer(
    name="netfab",
    help="Intent-driven build, deploy, verify and drift audit for AI/RoCE GPU fabrics.",
    # Typer(help=...) replaces the callback's docstring, so the exit codes go where `netfab --help` shows them.
    epilog=EXIT_CODES
    + " Option defaults: NETFAB_* variables, then ./netfab.toml or the tool.netfab table of ./pyproject.toml.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"netfab {__version__}")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
) -> None:
    """Global options (the verbs are registered in _register_verbs)."""


VERBS = (
    "lint",
    "rules",
    "schema",
    "build",
    "diff",
    "lab",
    "deploy",
    "rollback",
    "verify",
    "analyze",
    "audit",
    "health",
    "sot",
)
"""Every verb, in `netfab --help` order; verb V lives in netfab.cli.V_cmd and registers itself as V."""


def _register_verbs(only: str | None = None) -> None:
    """Register every verb, or only `only`. Imported here so that a broken verb module is an internal error of
    that verb's registration, reported by main() below, not an import-time traceback."""
    import importlib

    for verb in VERBS if only is None else (only,):
        importlib.import_module(f"netfab.cli.{verb}_cmd").register(app)


def invoked_verb(argv: list[str]) -> str | None:
    """The verb a command line runs, when its tree needs no other verb: the first word, if it names one.

    Importing and building all thirteen verbs (their options, help and imports) costs ~0.1-0.2 s of every run,
    a fifth of a no-op `netfab build`; the line `netfab build ...` can only ever run build. Anything else (no
    verb, a global option first, shell completion, which walks the whole tree) gets every verb."""
    if os.environ.get("_NETFAB_COMPLETE") or not argv or argv[0] not in VERBS:
        return None
    return argv[0]


def _output_error(exc: OutputError) -> NoReturn:
    typer.echo(f"netfab: {exc}", err=True)
    sys.exit(ExitCode.USAGE)


_TYPE_METAVARS = {"int": "N", "float": "NUMBER", "str": "TEXT", "path": "PATH", "file": "FILE", "directory": "DIR"}


def readable_metavars(command: Any) -> None:
    """Help shows words, not Python types: no `<bool>` beside a flag, `PATH` instead of `<list[Path]>`.

    Applied once to the built command tree (typer's click, typed loosely: typer vendors click). Options
    that declare a metavar keep it; choices keep typer's `a|b|c`."""
    ctx = command.context_class(command, help_option_names=["-h", "--help"])
    params = list(command.params)
    if (help_option := command.get_help_option(ctx)) is not None:
        params.append(help_option)
    for param in params:
        if getattr(param, "type_descriptor", None) is None:
            continue
        if param.param_type_name == "argument":
            # An argument's name column already says what it is (INTENT..., RUN_ID); its type column would
            # only repeat it as a Python type.
            param.display_type_rich = lambda ctx: None
            continue
        if param.metavar is not None:
            continue
        if getattr(param, "is_flag", False):
            param.metavar = ""
            continue
        label = param.display_type(ctx).strip("<>")
        if "|" in label:
            continue
        element = label.removeprefix("list[").removesuffix("]").lower()
        param.metavar = _TYPE_METAVARS.get(element, element.upper())
    for sub in getattr(command, "commands", {}).values():
        readable_metavars(sub)


def cli_command(only: str | None = None) -> Any:
    """The click command tree with every verb (or only verb `only`), readable help and the project's option
    defaults."""
    from netfab.cli.config import default_map, find_config, option_defaults

    _register_verbs(only)
    command = typer.main.get_command(app)
    readable_metavars(command)
    found = find_config(Path.cwd())
    defaults = default_map(command, option_defaults(*found)) if found else {}
    return command, defaults


def _input_error(exc: InputError) -> NoReturn:
    # Bad operator input found deep in a verb (an output dir netfab did not write, a lab prefix from a caller
    # other than the CLI options): the operator's to fix, exit 2 with what and how.
    typer.echo(f"netfab: {exc.message}" + (f"\n  hint: {exc.hint}" if exc.hint else ""), err=True)
    sys.exit(ExitCode.USAGE)


def main() -> None:
    """The CLI (console() is the `netfab` command): never lets a traceback reach an operator unless NETFAB_DEBUG
    is set."""
    from netfab.cli import teardown
    from netfab.cli.config import ConfigError
    from netfab.cli.streams import protect_standard_streams
    from netfab.core.redact import env_secrets, install_log_redaction, redact
    from netfab.deploy.credentials import Credentials
    from netfab.platforms import ENV_PATH, PlatformRecordError, registry

    protect_standard_streams()  # a reader that goes away (`| head -1`) must not stop a rollout half-way
    secrets = (*Credentials.from_env().secrets(), *env_secrets())
    install_log_redaction(secrets)  # any log record (netfab's, Nornir's, paramiko's) is masked when created
    try:
        if os.environ.get(ENV_PATH):
            # Records the user added are input: read them all before any verb, so a bad one is exit 2 with
            # its file and field, never a rule crash half-way through (the built-in ones are tested).
            registry()
        try:
            command, defaults = cli_command(invoked_verb(sys.argv[1:]))
        except ConfigError as exc:
            typer.echo(f"netfab: {exc}", err=True)
            sys.exit(ExitCode.USAGE)
        # standalone_mode=False: click returns the exit code of typer.Exit instead of calling sys.exit,
        # and raises usage errors, so both pass through the handlers below.
        rc = command(standalone_mode=False, default_map=defaults)
        teardown.finish(rc if isinstance(rc, int) else ExitCode.OK)
    except typer.Exit as exc:
        teardown.finish(exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(ExitCode.USAGE)
    except OutputError as exc:
        _output_error(exc)
    except InputError as exc:
        _input_error(exc)
    except PlatformRecordError as exc:
        typer.echo(f"netfab: {exc}", err=True)
        sys.exit(ExitCode.USAGE if exc.user_supplied else ExitCode.INTERNAL)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as exc:
        # An unwritable output raised inside a wrapper (the journal's JournalError, say) is still the
        # environment, not a bug: exit 2 with the path and the hint.
        cause = exc.__cause__
        while cause is not None and not isinstance(cause, OutputError):
            cause = cause.__cause__
        if isinstance(cause, OutputError):
            _output_error(cause)
        # Argument and usage errors from click, which newer typer releases vendor (typer._click) instead of
        # depending on it: matched by class name so either layout works.
        show = getattr(exc, "show", None)
        if callable(show) and any(cls.__name__ == "ClickException" for cls in type(exc).__mro__):
            show()
            sys.exit(ExitCode.USAGE)
        if os.environ.get("NETFAB_DEBUG"):
            raise
        typer.echo(
            f"netfab: internal error: {type(exc).__name__}: {redact(str(exc), secrets)}\n"
            "This is a bug in netfab, not in your input. Re-run with NETFAB_DEBUG=1 for a traceback.",
            err=True,
        )
        sys.exit(ExitCode.INTERNAL)


def console() -> None:
    """The `netfab` command itself (and `python -m netfab.cli.app`): main(), in a process that ends with it.

    Only here may a verb that holds nothing but memory skip the interpreter's teardown (netfab.cli.teardown);
    a caller of main() in its own process (a test, a wrapper) keeps the usual sys.exit."""
    from netfab.cli import teardown

    teardown.arm()
    main()


if __name__ == "__main__":
    console()
