"""The options several verbs share, declared once: one name, one meaning, one environment variable each.

A verb declares `build_root: BuildRoot = Path("build")` instead of its own typer.Option, so `--build` means
the same on every verb and NETFAB_BUILD (or `build` in netfab.toml / [tool.netfab], see cli/config.py) sets
its default everywhere. Precedence: command line, then environment, then the config file, then the default.

Names and meanings:
- INTENT...    intent file(s) or directories (a directory's files are merged into one intent);
- --lab        the namespace lab's name prefix. On pipeline verbs (deploy, verify, audit, rollback, analyze)
               it selects the lab as the target; on `lab *` it names the lab (default nf; `--prefix` is the
               older spelling and still works there);
- --limit      a glob on device names: only these devices (build: and servers; `--device` is its old name);
- --strict     lint warnings fail the verb, on every verb that lints the intent first;
- --workers    devices contacted in parallel (connections), on every verb that talks to devices; CPU
               processes are --jobs (audit's config comparison);
- --build, --runs, --inventory: where builds, run journals and inventory overrides live.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from netfab.core.validate import LAB_PREFIX, LAB_PREFIX_RULE, InputError, directories, output_root, typer_callback

LAB_PREFIX_PATTERN = LAB_PREFIX
DEFAULT_LAB = "nf"


def check_lab_prefix(prefix: str | None) -> str | None:
    if prefix is not None and not LAB_PREFIX_PATTERN.fullmatch(prefix):
        raise typer.BadParameter(LAB_PREFIX_RULE, param_hint="--lab")
    return prefix


def check_running_lab(prefix: str | None) -> str | None:
    """--lab as a target must name a lab that is up (its state file and namespaces): checked while the options
    are parsed, so nothing is built or contacted, and never a fallback to the intent's management addresses
    (a typo in the prefix used to send the lab's root login to the production management network)."""
    checked = check_lab_prefix(prefix)
    if checked is None:
        return None
    from netfab.lab.state import require_running  # here, not at the top: netfab.lab pulls in paramiko

    try:
        require_running(checked)
    except InputError as exc:
        raise typer.BadParameter(str(exc), param_hint="--lab") from None
    return prefix


Intent = Annotated[
    list[Path],
    typer.Argument(
        metavar="INTENT", help="Intent file(s) or directory (a directory's files are merged).", show_default=False
    ),
]
OptionalIntent = Annotated[
    list[Path] | None,
    typer.Argument(
        metavar="INTENT",
        help="The intent the lab was brought up from: checked against the running lab's fabric.",
        show_default=False,
    ),
]

LabTarget = Annotated[
    str | None,
    typer.Option(
        "--lab",
        metavar="PREFIX",
        envvar="NETFAB_LAB",
        callback=check_running_lab,
        help="Act on the running namespace lab with this prefix instead of the real devices.",
    ),
]
LabName = Annotated[
    str,
    typer.Option(
        "--lab",
        "--prefix",
        metavar="PREFIX",
        envvar="NETFAB_LAB",
        callback=check_lab_prefix,
        help="Name prefix of the lab's namespaces and interfaces (1-8 lowercase letters/digits).",
    ),
]

Limit = Annotated[
    str | None, typer.Option("--limit", metavar="GLOB", help="Only devices whose name matches this glob.")
]
BuildLimit = Annotated[
    str | None,
    typer.Option(
        "--limit",
        "--device",
        metavar="GLOB",
        help="Only devices and servers whose name matches this glob (--device: the older spelling).",
    ),
]

Strict = Annotated[bool, typer.Option("--strict", envvar="NETFAB_STRICT", help="Treat lint warnings as errors.")]

NetworkSelect = Annotated[
    str | None,
    typer.Option(
        "--network",
        metavar="NAME",
        help="Which network of the cluster: backend (the root sections, the default) or a name under networks:.",
    ),
]

Workers = Annotated[
    int, typer.Option("--workers", min=1, metavar="N", envvar="NETFAB_WORKERS", help="Devices contacted in parallel.")
]
OptionalWorkers = Annotated[
    int | None,
    typer.Option(
        "--workers",
        min=1,
        metavar="N",
        envvar="NETFAB_WORKERS",
        help="Devices contacted in parallel (default: the runbook's parallelism).",
    ),
]


def _output_root_option(option: str, envvar: str, help_text: str) -> Any:
    """Output roots are checked when parsed (a file, a dangling link, a read-only mount: exit 2 with a hint),
    before anything is built or any device is contacted."""
    callback = typer_callback(output_root, option)
    return typer.Option(option, metavar="DIR", envvar=envvar, callback=callback, help=help_text)


BuildRoot = Annotated[Path, _output_root_option("--build", "NETFAB_BUILD", "Build output root.")]
RunsRoot = Annotated[Path, _output_root_option("--runs", "NETFAB_RUNS", "Where run journals are kept.")]
Inventory = Annotated[
    list[Path] | None,
    typer.Option(
        "--inventory",
        metavar="DIR",
        envvar="NETFAB_INVENTORY",
        callback=typer_callback(directories, "--inventory"),  # a mistyped dir must not read as "no overrides"
        help="Inventory override directory with hosts.yaml (repeatable; NETFAB_INVENTORY: several, ':'-separated).",
        show_default=False,
    ),
]

DEFAULT_BUILD = Path("build")
DEFAULT_RUNS = Path("runs")
