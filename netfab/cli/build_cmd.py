"""`netfab build INTENT [--out DIR] [--platform P] [--limit GLOB]`."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from netfab.cli.options import DEFAULT_BUILD, BuildLimit, Intent, Strict
from netfab.core.exitcodes import ExitCode
from netfab.core.validate import output_root, typer_callback

HOSTS = "host"
"""--platform value selecting the GPU servers' NIC scripts (not a switch platform)."""


def build(
    intent: Intent,
    out: Path = typer.Option(
        DEFAULT_BUILD,
        "--out",
        "-o",
        callback=typer_callback(output_root, "--out"),
        help="Output root; the fabric goes to OUT/<fabric>/.",
    ),
    platform: str | None = typer.Option(
        None, "--platform", help=f"Only this platform (a record's name, or {HOSTS} for NIC scripts)."
    ),
    limit: BuildLimit = None,
    strict: Strict = False,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Render every switch config, GPU server NIC script, the cabling plan and the Nornir inventory.

    Output is deterministic and written atomically: a failure leaves the previous build untouched.
    """
    started = time.perf_counter()
    partial = platform is not None or limit is not None
    # First, before importing the renderer or the rules: is there anything to do at all?
    inputs = None if partial else _unchanged_build(intent, out, strict, started)

    from netfab.cli.pipeline import err_console, load_plan
    from netfab.cli.progress import progress_bar
    from netfab.diff.changes import Explainer
    from netfab.platforms import platform_names
    from netfab.render.build import BuildSelection
    from netfab.render.build import build as run_build
    from netfab.render.environment import UnsupportedFeature

    choices = (*platform_names(), HOSTS)
    if platform is not None and platform not in choices:
        err_console.print(f"netfab build: unknown platform {platform!r}; choose from {', '.join(choices)}")
        raise typer.Exit(ExitCode.USAGE)
    selection = BuildSelection(platform=platform, device_glob=limit)
    loaded = load_plan(intent, strict=strict)
    plan = loaded.plan
    total = sum(selection.wants_device(d) for d in plan.devices.values()) + sum(
        selection.wants_server(s) for s in plan.servers
    )
    show = not quiet and err_console.is_terminal and total > 50
    explain = Explainer({d.name: d.platform for d in plan.devices.values()})
    try:
        if show:
            with progress_bar(err_console) as progress:
                bar = progress.add_task("rendering", total=total)
                result = run_build(
                    plan, out, selection, progress=lambda n: progress.advance(bar, n), inputs=inputs, explain=explain
                )
        else:
            result = run_build(plan, out, selection, inputs=inputs, explain=explain)
    except UnsupportedFeature as exc:
        err_console.print(f"netfab build: {exc}\nnothing was written; the previous build is unchanged.")
        raise typer.Exit(ExitCode.FINDINGS) from None
    elapsed = time.perf_counter() - started
    err_console.print(
        f"built {len(result.devices)} switches and {len(result.servers)} servers "
        f"({result.files} files, {len(result.written)} written) into {result.out_dir} in {elapsed:.2f} s"
    )
    if result.previous is not None and result.manifest is not None:
        from netfab.diff.summary import changes_between, render_text

        old = {f: r.digest for f, r in result.previous.files.items()}
        new = {f: r.digest for f, r in result.manifest.files.items()}
        if selection.partial:  # what this build did not regenerate is not a change it made
            old = {f: d for f, d in old.items() if f in new}
        err_console.print(render_text(changes_between(old, new, result.explained, plan)), end="")


def _unchanged_build(intent: list[Path], out: Path, strict: bool, started: float) -> str | None:
    """The build's inputs digest; exits 0 right here, writing nothing, when out/<fabric>/ was built from exactly
    these inputs and is intact (netfab.render.manifest explains what that covers). Same inputs, same netfab:
    the lint and design that built that tree would give the same answer, so neither runs again."""
    from netfab.load import load_intent_source
    from netfab.render.manifest import inputs_digest, up_to_date

    source = load_intent_source(intent)
    if source.unreadable:
        return None  # load_plan reports it
    fabric = source.data.get("fabric") if isinstance(source.data, dict) else None
    name = fabric.get("name") if isinstance(fabric, dict) else None
    digest = inputs_digest(source.files, f"strict={strict}")
    if not isinstance(name, str) or not name:
        return digest
    manifest = up_to_date(name, out, digest)
    if manifest is None:
        return digest
    from netfab.cli.pipeline import err_console

    elapsed = time.perf_counter() - started
    err_console.print(
        f"{out / name} is up to date: built from these inputs and unchanged since "
        f"({len(manifest.files):,} files, nothing written) in {elapsed:.2f} s"
    )
    raise typer.Exit(ExitCode.OK)


def register(app: typer.Typer) -> None:
    app.command("build")(build)
