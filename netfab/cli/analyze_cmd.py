"""`netfab analyze INTENT [--out DIR] [-f FORMAT] [-o FILE] [--trials N] [--seed S] [--pattern P] [--job-gpus N]
[--lab PREFIX [--lab-flows N] [--lab-batches B]]`.

What a design does to a collective's tail before any hardware exists: capacity and oversubscription, the
lossless (PFC headroom / ECN) budget, and an ECMP collision model. The intent must lint clean first (the
shared load -> lint -> design pipeline refuses it otherwise, with the lint exit code). With --lab, the kernel
ECMP model is also held against a running namespace lab (netfab.analyze.labcheck): lab-check.json.
"""

from __future__ import annotations

import gc
import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from netfab.cli.options import Intent, NetworkSelect, check_lab_prefix
from netfab.cli.report_options import FormatOption, OutputOption
from netfab.core import gcfreeze
from netfab.core.exitcodes import ExitCode
from netfab.report import ReportFormat

if TYPE_CHECKING:
    from netfab.analyze.run import Analysis
    from netfab.cli.pipeline import Loaded
    from netfab.core.findings import Finding


class PatternChoice(StrEnum):
    RING = "ring"
    TREE = "tree"
    ALLTOALL = "alltoall"


class WhatIf(StrEnum):
    SINGLE_FAILURES = "single-failures"


class PlacementChoice(StrEnum):
    SPREAD = "spread"
    PACKED = "packed"
    RANDOM = "random"


def analyze(
    intent: Intent,
    out: Path | None = typer.Option(None, "--out", help="Output directory (default: build/<fabric>.analysis)."),
    fmt: FormatOption = ReportFormat.TEXT,
    output: OutputOption = None,
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
        False,
        "--strict",
        envvar="NETFAB_STRICT",
        help="Treat warnings (lint's and the analysis's, e.g. a p99 tax over 25 %) as errors.",
    ),
    network: NetworkSelect = None,
    # Not NETFAB_LAB: the lab check sends traffic through the lab and needs root, so it is asked for here only.
    lab: str | None = typer.Option(
        None,
        "--lab",
        metavar="PREFIX",
        callback=check_lab_prefix,
        help="Also validate the kernel ECMP model against the running lab with this prefix (netfab lab up; "
        "root): elephant flows under each kernel hash policy, uplink counters vs the model -> lab-check.json.",
    ),
    lab_flows: int = typer.Option(16, "--lab-flows", min=1, max=4096, help="Parallel UDP flows per lab batch."),
    lab_batches: int = typer.Option(
        5, "--lab-batches", min=1, max=1000, help="Lab batches (source-port sets) per hash policy."
    ),
    slow_link_p: float | None = typer.Option(
        None,
        "--slow-link-p",
        min=0.0,
        max=1.0,
        help="Chance that a cable is slow during a step (declared, or measured by netfab health): prints the "
        "job's straggler odds 1-(1-p)^n.",
    ),
    fail: list[str] = typer.Option(
        [],
        "--fail",
        metavar="ELEMENT",
        help="What this failure does to the job (repeatable): a switch, DEVICE:PORT (a cable), plane:N, pod:N, "
        "pod:N:uplinks, rail:N, DEVICE:PORT@F (that port's egress slowed to fraction F of its capacity); join with "
        "'+' to fail several at once (ANALYZE007; failures.svg).",
    ),
    what_if: WhatIf | None = typer.Option(
        None, "--what-if", help="single-failures: every switch and cable, ranked by what it does to the job."
    ),
    what_if_sample: int = typer.Option(
        50,
        "--what-if-sample",
        min=0,
        help="Per class (leaves, spines, cables, ...), evaluate this many most-loaded elements; 0 = every one.",
    ),
    nccl_tests: list[Path] = typer.Option(
        [],
        "--nccl-tests",
        metavar="LOG",
        help="Judge an nccl-tests output (repeatable) against the bus bandwidth this design allows "
        "(NCCL001-003; written to nccl-acceptance.json).",
    ),
    nccl_collective: str | None = typer.Option(
        None, "--nccl-collective", help="The collective of a log that does not name its binary (e.g. all_reduce)."
    ),
    nccl_efficiency: float = typer.Option(
        0.80, "--nccl-efficiency", min=0.01, max=1.0, help="Pass at this share of the network's bound (default 0.80)."
    ),
) -> None:
    """Capacity, lossless budget and ECMP tail of a fabric: analysis.json, topology.svg, link-load.svg.

    Exit codes: 0 ok, 1 findings (the intent does not lint, the lab disagrees with the model, or with
    --strict an analysis warning), 2 unreadable input, options that do not fit the fabric, or a lab that cannot
    be used, 3 internal error.
    """
    from netfab.analyze.output import UnsafeOutput, default_out_dir
    from netfab.analyze.plot_load import link_load_svg
    from netfab.analyze.plot_topology import topology_svg
    from netfab.analyze.report import RULES, render_json, render_text
    from netfab.analyze.run import AnalysisInputError, AnalyzeOptions
    from netfab.analyze.run import analyze as run_analysis
    from netfab.cli import teardown
    from netfab.cli.pipeline import err_console, load_plan
    from netfab.cli.report_options import emit_report, report_context
    from netfab.core.findings import has_errors
    from netfab.core.fs import write_files

    if lab is None:  # the lab check runs traffic and subprocesses: that exit takes the interpreter's usual path
        teardown.memory_only()
    # The plan (~970,000 tracked objects at 100k GPUs) lives until the process exits and holds no garbage, so it
    # is frozen out of the cyclic GC: design() builds it with the collector off, and the first allocation after
    # that scanned all of it as one generation-0 pass (0.35 s CPU, inside the plan rules), younger passes
    # followed and a full collection in build_routes (0.5-0.6 s): 1.4 s of GC per clos3-100k run in all.
    gc.disable()
    try:
        loaded = load_plan(intent, strict=strict, network=network, bgp=False)  # the analysis reads no BGP session
    finally:
        gcfreeze.for_good()
        gc.enable()
    plan = loaded.plan
    options = AnalyzeOptions(
        trials=trials,
        seed=seed,
        pattern=pattern.value,
        job_gpus=job_gpus,
        placement=placement.value,
        qps=qps,
        slow_link_probability=slow_link_p,
    )
    try:
        result = run_analysis(loaded.intent, plan, options, loaded.source_file)
        out_dir = out if out is not None else default_out_dir(plan.name)
    except (AnalysisInputError, UnsafeOutput) as exc:
        err_console.print(f"netfab analyze: {exc}")
        raise typer.Exit(ExitCode.USAGE) from None
    doc = result.as_dict()
    nccl_found, nccl_doc = _nccl(result, nccl_tests, nccl_collective, nccl_efficiency)
    failure_found, failure_doc, failure_picture = _failures(result, fail, what_if, what_if_sample, loaded.source_file)
    if failure_doc:
        doc["failures"] = failure_doc
    files = {
        "analysis.json": render_json(doc),
        "topology.svg": topology_svg(result.intent, result.capacity, result.plan.name),
        "link-load.svg": link_load_svg(result),
    }
    if failure_picture:
        files["failures.svg"] = failure_picture
    if nccl_doc:
        files["nccl-acceptance.json"] = json.dumps(nccl_doc, indent=2, sort_keys=True) + "\n"
    try:
        written = write_files(out_dir, files)
    except OSError as exc:  # core.fs.OutputError: names the path and says what to do
        err_console.print(f"netfab analyze: {exc}")
        raise typer.Exit(ExitCode.USAGE) from None
    findings = [*result.findings, *failure_found, *nccl_found]
    lab_doc: dict[str, Any] | None = None
    lab_written: list[Path] = []
    if lab is not None:
        lab_doc, lab_found, lab_written = _lab_check(loaded, lab, lab_flows, lab_batches, seed, out_dir)
        findings += lab_found
    overview = render_text(doc, [str(p) for p in written])
    if lab_doc is not None:
        from netfab.analyze.labcheck import render_lab_text

        overview += "\n" + render_lab_text(lab_doc) + f"written: {', '.join(map(str, lab_written))}\n"
    context = report_context(
        "analyze",
        rules=RULES,
        details={"analysis": doc, "lab_check": lab_doc, "nccl": nccl_doc or None},
        preamble=overview,
    )
    emit_report(fmt, findings, context, output)
    if has_errors(findings, strict=strict):
        raise typer.Exit(ExitCode.FINDINGS)


def _failures(
    result: Analysis, elements: list[str], what_if: WhatIf | None, sample: int, source_file: str
) -> tuple[list[Finding], dict[str, Any] | None, str]:
    """--fail / --what-if: the failure model over the analysed job; an unknown element is a usage error."""
    if not elements and what_if is None:
        return [], None, ""
    from netfab.analyze.collective import gpu_pairs
    from netfab.analyze.failure import FailureModel, FailureSpecError, failure_findings
    from netfab.analyze.flows import flow_set
    from netfab.analyze.plot_failure import failure_svg
    from netfab.cli.pipeline import err_console

    job = result.ecmp.job
    model = FailureModel(result.plan, result.routes, flow_set(result.routes, gpu_pairs(job, result.options.pattern)))
    try:
        chosen = [model.parse(e) for e in elements]
    except FailureSpecError as exc:
        err_console.print(f"netfab analyze --fail: {exc}")
        raise typer.Exit(ExitCode.USAGE) from None
    sizes: dict[str, int] = {}
    if what_if is not None:
        singles, sizes = model.single_failures(sample or None)
        chosen += singles
    results = sorted((model.evaluate(e) for e in chosen), key=lambda r: r.damage, reverse=True)
    # Findings: each --fail element, and per what-if class its worst element; analysis.json and failures.svg
    # carry every failure evaluated.
    found = failure_findings(results, source_file, job.gpus, sizes)
    doc: dict[str, Any] = {
        "model": "fluid ECMP after BGP reconvergence (netfab.analyze.failure)",
        "job_gpus": job.gpus,
        "pattern": result.options.pattern,
        "evaluated": len(results),
        "classes": sizes,
        "sample_per_class": sample if what_if is not None else None,
        "results": [r.as_dict() for r in results],
    }
    return found, doc, failure_svg(results, result.plan.name, job.gpus)


def _nccl(
    result: Analysis, logs: list[Path], collective: str | None, efficiency: float
) -> tuple[list[Finding], list[dict[str, Any]]]:
    """Judge each nccl-tests log against the design; an unreadable log is a usage error (exit 2)."""
    from netfab.analyze.nccl import NcclLogError, expect, judge, read_log
    from netfab.cli.pipeline import err_console

    found: list[Finding] = []
    docs: list[dict[str, Any]] = []
    for log in logs:
        try:
            run = read_log(log, collective)
        except NcclLogError as exc:
            err_console.print(f"netfab analyze --nccl-tests: {exc}")
            raise typer.Exit(ExitCode.USAGE) from None
        accepted = judge(run, expect(run, result.routes, result.capacity), efficiency)
        found += accepted.findings()
        docs.append(accepted.as_dict())
    return found, docs


def _lab_check(
    loaded: Loaded, prefix: str, flows: int, batches: int, seed: int, out_dir: Path
) -> tuple[dict[str, Any], list[Finding], list[Path]]:
    """Run the lab check on the lab variant of the intent (the fabric `netfab lab up` ran) and write
    lab-check.json next to the analysis. A lab that cannot be used is a usage error (exit 2)."""
    from netfab.analyze.hashing import kernel_policy_for
    from netfab.analyze.labcheck import HashConfig, LabCheckError, LabCheckOptions, lab_findings, run_lab_check
    from netfab.cli.pipeline import err_console
    from netfab.core.fs import write_files
    from netfab.design import DesignError, design
    from netfab.lab import preflight
    from netfab.lab.fromplan import lab_variant

    if missing := preflight():
        err_console.print("netfab analyze --lab needs root and FRR: " + "; ".join(missing))
        raise typer.Exit(ExitCode.USAGE)
    source_file = loaded.source_file
    lab_intent, _ = lab_variant(loaded.intent)
    try:
        lab_plan = design(lab_intent, source_file)
    except DesignError as exc:
        err_console.print(f"netfab analyze --lab: the lab variant of the intent does not design: {exc}")
        raise typer.Exit(ExitCode.USAGE) from None
    policy, mask = kernel_policy_for(lab_plan.hashing.fields)
    options = LabCheckOptions(flows=flows, batches=batches, seed=seed)
    try:
        check = run_lab_check(
            lab_plan,
            prefix,
            options,
            intent_config=HashConfig(policy, mask),
            progress=lambda line: err_console.print(f"lab {prefix}: {line}"),
        )
    except LabCheckError as exc:
        err_console.print(f"netfab analyze --lab {prefix}: {exc}")
        raise typer.Exit(ExitCode.USAGE) from None
    found = lab_findings(check, source_file)
    doc = check.as_dict()
    doc["findings"] = [
        {"rule_id": f.rule_id, "severity": f.severity.value, "message": f.message, "hint": f.hint} for f in found
    ]
    try:
        written = write_files(out_dir, {"lab-check.json": json.dumps(doc, indent=2, sort_keys=True) + "\n"})
    except OSError as exc:  # core.fs.OutputError: names the path and says what to do
        err_console.print(f"netfab analyze: {exc}")
        raise typer.Exit(ExitCode.USAGE) from None
    return doc, found, written


def register(app: typer.Typer) -> None:
    app.command("analyze")(analyze)
