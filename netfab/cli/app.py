"""Root of the `netfab` CLI.

Each verb lives in its own module with a `register(app)` function. Heavy imports (nornir, napalm, jinja2)
happen inside the verb's function, so `netfab lint` in CI starts fast.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

import typer

from netfab import __version__
from netfab.core.exitcodes import ExitCode
from netfab.core.fs import OutputError

app = typer.Typer(
    name="netfab",
    help="Intent-driven build, deploy, verify and drift audit for AI/RoCE GPU fabrics.",
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
    """Exit codes: 0 ok, 1 findings/drift/failed checks, 2 usage or unreadable input, 3 internal error."""


def _register_verbs() -> None:
    # Imported here so that a broken verb module is an internal error of that verb's registration,
    # reported by main() below, not an import-time traceback.
    from netfab.cli import (
        analyze_cmd,
        audit_cmd,
        build_cmd,
        deploy_cmd,
        lab_cmd,
        lint_cmd,
        rollback_cmd,
        rules_cmd,
        schema_cmd,
        verify_cmd,
    )

    for module in (
        lint_cmd,
        rules_cmd,
        schema_cmd,
        build_cmd,
        lab_cmd,
        deploy_cmd,
        rollback_cmd,
        verify_cmd,
        analyze_cmd,
        audit_cmd,
    ):
        module.register(app)


def _output_error(exc: OutputError) -> NoReturn:
    typer.echo(f"netfab: {exc}", err=True)
    sys.exit(ExitCode.USAGE)


def main() -> None:
    """Console-script entry point: never lets a traceback reach an operator unless NETFAB_DEBUG is set."""
    try:
        _register_verbs()
        # standalone_mode=False: click returns the exit code of typer.Exit instead of calling sys.exit,
        # and raises usage errors, so both pass through the handlers below.
        rc = app(standalone_mode=False)
        sys.exit(rc if isinstance(rc, int) else ExitCode.OK)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(ExitCode.USAGE)
    except OutputError as exc:
        _output_error(exc)
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
            f"netfab: internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in netfab, not in your input. Re-run with NETFAB_DEBUG=1 for a traceback.",
            err=True,
        )
        sys.exit(ExitCode.INTERNAL)


if __name__ == "__main__":
    main()
