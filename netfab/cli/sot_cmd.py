"""`netfab sot push|pull`: the plan into NetBox, and the as-built state back with its differences.

The token comes only from NETFAB_NETBOX_TOKEN; TLS is verified unless --insecure-skip-tls-verify is given
(lab NetBox with a self-signed certificate), which warns on every run.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from netfab.cli.options import Intent, Strict
from netfab.cli.report_options import FormatOption, OutputOption
from netfab.core.exitcodes import ExitCode
from netfab.core.validate import output_root, typer_callback
from netfab.report import ReportFormat

sot_app = typer.Typer(
    name="sot",
    help="Source of truth: push the plan into NetBox, pull the as-built state back and report the differences.",
    no_args_is_help=True,
)

NetBoxUrl = Annotated[
    str,
    typer.Option(
        "--netbox",
        metavar="URL",
        envvar="NETFAB_NETBOX_URL",
        help="NetBox's URL (https://...). The API token is read from NETFAB_NETBOX_TOKEN, never from the command line.",
        show_default=False,
    ),
]
Insecure = Annotated[
    bool,
    typer.Option(
        "--insecure-skip-tls-verify",
        help="Do not verify NetBox's TLS certificate (a lab NetBox only; warns on every run).",
    ),
]
SotWorkers = Annotated[
    int, typer.Option("--requests", min=1, max=32, metavar="N", help="Requests to NetBox in parallel.")
]
OverridesDir = Annotated[
    Path,
    typer.Option(
        "--out",
        metavar="DIR",
        callback=typer_callback(output_root, "--out"),
        help="Inventory override directory the as-built state is written to (its hosts.yaml is rewritten whole).",
    ),
]


def _connect(url: str, insecure: bool, workers: int):  # type: ignore[no-untyped-def]
    from netfab.sot.client import NetBox, NetBoxError, Options, check_url, token_from_env

    try:
        options = Options(url=check_url(url), token=token_from_env(), verify_tls=not insecure, workers=workers)
    except NetBoxError as exc:
        _fail(exc)
    if insecure:
        typer.echo(
            f"netfab: WARNING: TLS verification of {options.url} is OFF (--insecure-skip-tls-verify): anyone on the "
            "path can read the token and change what netfab reads; use this for a lab NetBox only",
            err=True,
        )
        import urllib3

        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)  # said once above, not per request
    nb = NetBox(options)
    try:
        nb.status()
    except NetBoxError as exc:
        nb.close()
        _fail(exc)
    return nb


def _fail(exc: Exception) -> typer.Exit:
    usage = bool(getattr(exc, "usage", False))
    typer.echo(f"netfab: {exc}", err=True)
    raise typer.Exit(ExitCode.USAGE if usage else ExitCode.INTERNAL)


def push(
    intent: Intent,
    netbox: NetBoxUrl,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would change; write nothing.")] = False,
    insecure: Insecure = False,
    workers: SotWorkers = 4,
    fmt: FormatOption = ReportFormat.TEXT,
    output: OutputOption = None,
    strict: Strict = False,
) -> None:
    """Write the plan into NetBox: device types, roles, platforms, site and racks, devices with their fabric
    coordinates, interfaces, cables, prefixes, addresses, ASNs. Idempotent; never changes what netfab does not
    own (objects without the netfab tag); never deletes."""
    from netfab.cli.pipeline import load_plan
    from netfab.cli.report_options import emit_report, report_context
    from netfab.core.findings import has_errors
    from netfab.sot.client import NetBoxError
    from netfab.sot.desired import desired_state
    from netfab.sot.findings import RULES, push_findings
    from netfab.sot.push import push as run_push

    loaded = load_plan(intent, strict=strict)
    desired = desired_state(loaded.intent, loaded.plan)
    nb = _connect(netbox, insecure, workers)
    try:
        result = run_push(nb, desired, dry_run=dry_run)
    except NetBoxError as exc:
        _fail(exc)
    finally:
        nb.close()
    findings = push_findings(result, loaded.source_file, dry_run)
    counts = result.counts()
    changes = len(result.changes)
    lines = [
        f"{'dry run: ' if dry_run else ''}NetBox {nb.url}, site {desired.site}: "
        f"{changes} change{'s' if changes != 1 else ''}{' would be made' if dry_run else ''}"
    ]
    lines += [
        f"  {kind:<13} create {row['create']:>6}  update {row['update']:>6}  unchanged {row['unchanged']:>6}"
        + (f"  not netfab's {row['conflict']}" if row["conflict"] else "")
        + (f"  skipped {row['skipped']}" if row["skipped"] else "")
        for kind, row in counts.items()
    ]
    context = report_context(
        "sot",
        rules=RULES,
        details={
            "action": "push",
            "dry_run": dry_run,
            "netbox": nb.url,
            "site": desired.site,
            "changes": changes,
            "kinds": counts,
            "seconds": result.seconds,
        },
        preamble="\n".join(lines) + "\n",
        text_limit=50,
    )
    emit_report(fmt, findings, context, output)
    raise typer.Exit(ExitCode.FINDINGS if has_errors(findings, strict) else ExitCode.OK)


def pull(
    intent: Intent,
    netbox: NetBoxUrl,
    out: OverridesDir = Path("inventory/netbox"),
    insecure: Insecure = False,
    workers: SotWorkers = 4,
    fmt: FormatOption = ReportFormat.TEXT,
    output: OutputOption = None,
    strict: Strict = False,
) -> None:
    """Read the as-built fabric from NetBox (management addresses, serials, models, cables as recorded) into
    the inventory overrides (--out), and report every difference against the plan."""
    from netfab.cli.pipeline import load_plan
    from netfab.cli.report_options import emit_report, report_context
    from netfab.core.findings import has_errors
    from netfab.sot.client import NetBoxError
    from netfab.sot.desired import desired_state
    from netfab.sot.findings import RULES, pull_findings
    from netfab.sot.overrides import write_overrides
    from netfab.sot.pull import compare, read_as_built

    loaded = load_plan(intent, strict=strict)
    desired = desired_state(loaded.intent, loaded.plan)
    nb = _connect(netbox, insecure, workers)
    try:
        built = read_as_built(nb, desired.site)
    except NetBoxError as exc:
        _fail(exc)
    finally:
        nb.close()
    result = compare(loaded.plan, desired, built)
    written = None
    if built.site_found:
        written = write_overrides(out, result.overrides, nb.url, desired.site, loaded.plan.name)
    findings = pull_findings(result.differences, loaded.source_file)
    preamble = (
        f"NetBox {nb.url}, site {desired.site}: {result.counts['devices']} devices, {result.counts['cables']} cables "
        f"recorded; {len(result.differences)} difference{'s' if len(result.differences) != 1 else ''} from the plan\n"
    )
    if written is not None:
        preamble += f"as-built inventory overrides: {written} (use --inventory {written.parent})\n"
    context = report_context(
        "sot",
        rules=RULES,
        subjects=sorted(desired_names(desired)),
        details={
            "action": "pull",
            "netbox": nb.url,
            "site": desired.site,
            "recorded": result.counts,
            "overrides": str(written) if written else None,
        },
        preamble=preamble,
        text_limit=200,
    )
    emit_report(fmt, findings, context, output)
    sys.stdout.flush()
    raise typer.Exit(ExitCode.FINDINGS if has_errors(findings, strict) else ExitCode.OK)


def desired_names(desired: object) -> list[str]:
    return [str(k[0]) for k in desired.of("device")]  # type: ignore[attr-defined]


sot_app.command("push")(push)
sot_app.command("pull")(pull)


def register(app: typer.Typer) -> None:
    app.add_typer(sot_app, name="sot")
