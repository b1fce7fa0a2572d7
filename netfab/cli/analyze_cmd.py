"""`netfab analyze INTENT [--out DIR] [--format text|json] [--trials N] [--seed S] [--pattern P] [--job-gpus N]`.

What a design does to a collective's tail before any hardware exists: capacity and oversubscription, the
lossless (PFC headroom / ECN) budget, and an ECMP collision model. The intent must lint clean first (the
shared load -> lint -> design pipeline refuses it otherwise, with the lint exit code).
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path

import typer

from netfab.core.exitcodes import ExitCode


class Format(StrEnum):
    TEXT = "text"
    JSON = "json"


class PatternChoice(StrEnum):
    RING = "ring"
    TREE = "tree"
    ALLTOALL = "alltoall"


class PlacementChoice(StrEnum):
    SPREAD = "spread"
    PACKED = "packed"
    RANDOM = "random"


def analyze(
    intent: list[Path] = typer.Argument(..., help="Intent file(s) or directory.", show_default=False),
    out: Path | None = typer.Option(None, "--out", "-o", help="Output directory (default: build/<fabric>/analysis)."),
    fmt: Format = typer.Option(Format.TEXT, "--format", "-f", help="What to print on stdout."),
    trials: int = typer.Option(1000, "--trials", min=1, max=1_000_000, help="ECMP trials (random per-QP draws)."),
    seed: int = typer.Option(1, "--seed", min=0, help="Seed for every random draw: same seed, same report."),
    pattern: PatternChoice = typer.Option(PatternChoice.RING, "--pattern", help="Collective traffic pattern."),
    job_gpus: int | None = typer.Option(
        None, "--job-gpus", min=1, help="Job size in GPUs (default: min(512, all GPUs)), rounded up to whole servers."
    ),
    placement: PlacementChoice = typer.Option(
        PlacementChoice.SPREAD, "--placement", help="spread over SUs/pods, packed, or seeded random servers."
    ),
    qps: int | None = typer.Option(
        None, "--qps", min=1, max=1024, help="QPs per GPU pair (default: load_balancing.qps_per_gpu_pair)."
    ),
    strict: bool = typer.Option(
        False, "--strict", help="Treat warnings (lint's and the analysis's, e.g. a p99 tax over 25 %) as errors."
    ),
) -> None:
    """Capacity, lossless budget and ECMP tail of a fabric: analysis.json, topology.svg, link-load.svg.

    Exit codes: 0 ok, 1 findings (the intent does not lint, or with --strict an analysis warning),
    2 unreadable input or options that do not fit the fabric, 3 internal error.
    """
    from netfab.analyze.output import UnsafeOutput, default_out_dir, write_files
    from netfab.analyze.plot_load import link_load_svg
    from netfab.analyze.plot_topology import topology_svg
    from netfab.analyze.report import render_json, render_text
    from netfab.analyze.run import AnalysisInputError, AnalyzeOptions
    from netfab.analyze.run import analyze as run_analysis
    from netfab.cli.pipeline import err_console, load_plan
    from netfab.core.findings import has_errors

    loaded = load_plan(intent, strict=strict)
    plan = loaded.plan
    options = AnalyzeOptions(
        trials=trials,
        seed=seed,
        pattern=pattern.value,  # type: ignore[arg-type]
        job_gpus=job_gpus,
        placement=placement.value,  # type: ignore[arg-type]
        qps=qps,
    )
    try:
        result = run_analysis(loaded.intent, plan, options, loaded.source_file)  # type: ignore[arg-type]
        out_dir = out if out is not None else default_out_dir(plan.name)  # type: ignore[attr-defined]
    except (AnalysisInputError, UnsafeOutput) as exc:
        err_console.print(f"netfab analyze: {exc}")
        raise typer.Exit(ExitCode.USAGE) from None
    doc = result.as_dict()
    files = {
        "analysis.json": render_json(doc),
        "topology.svg": topology_svg(result.intent, result.capacity, result.plan.name),
        "link-load.svg": link_load_svg(result),
    }
    try:
        written = write_files(out_dir, files)
    except (OSError, UnsafeOutput) as exc:
        err_console.print(f"netfab analyze: cannot write {out_dir}: {exc}")
        raise typer.Exit(ExitCode.USAGE) from None
    if fmt == Format.JSON:
        sys.stdout.write(files["analysis.json"])
    else:
        sys.stdout.write(render_text(doc, [str(p) for p in written]))
    if has_errors(result.findings, strict=strict):
        raise typer.Exit(ExitCode.FINDINGS)


def register(app: typer.Typer) -> None:
    app.command("analyze")(analyze)
