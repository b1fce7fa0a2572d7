"""`netfab health`: counters from every device and NIC, the fleet's tail, slow-but-up links, pause storms.

Exit codes: 0 healthy, 1 findings of severity error (slow links, storms, drops on lossless classes, errors),
2 usage or a device whose counters could not be read (its health is unknown), 3 internal error.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from netfab.cli.options import Intent, LabTarget, Strict
from netfab.core.exitcodes import ExitCode

if TYPE_CHECKING:
    from netfab.health.analysis import HealthReport
    from netfab.health.collect import Driver, Target

FORMATS = ("text", "json", "junit", "sarif", "markdown", "openmetrics")


def _fail(message: str) -> typer.Exit:
    from netfab.cli.pipeline import err_console

    err_console.print(f"netfab health: {message}", markup=False, highlight=False)
    return typer.Exit(ExitCode.USAGE)


def health(
    intent: Intent,
    network: str | None = typer.Option(
        None, "--network", metavar="NAME", help="Only this network of the intent (default: its only network)."
    ),
    lab: LabTarget = None,
    from_dir: Path | None = typer.Option(
        None, "--from-dir", metavar="DIR", help="Analyse saved samples (DIR/<sample>/<device>/<source>.txt)."
    ),
    samples: int | None = typer.Option(
        None,
        "--samples",
        min=1,
        max=10_000,
        help="Samples to take (default 2: rates need 2); with --watch, the reports to give before stopping.",
    ),
    interval: float = typer.Option(1.0, "--interval", min=0.05, max=3600, help="Seconds between samples."),
    watch: bool = typer.Option(
        False, "--watch", help="Keep sampling and report every interval (Ctrl-C stops, or --samples N reports)."
    ),
    fmt: str = typer.Option("text", "--format", "-f", help=f"Report format: {', '.join(FORMATS)}."),
    output: Path | None = typer.Option(None, "--output", "-o", metavar="FILE", help="Write the report to FILE."),
    serve: str | None = typer.Option(
        None, "--serve", metavar="PORT", help="Serve OpenMetrics on 127.0.0.1:PORT (with --watch: live)."
    ),
    svg: Path | None = typer.Option(
        None, "--svg", metavar="FILE", help="Also draw the links per tier, coloured by tail score."
    ),
    png: Path | None = typer.Option(None, "--png", metavar="FILE", help="The same picture as PNG."),
    save: Path | None = typer.Option(None, "--save", metavar="DIR", help="Keep the raw outputs for --from-dir."),
    job_gpus: int | None = typer.Option(None, "--job-gpus", min=1, help="Also give the straggler odds for N GPUs."),
    no_hosts: bool = typer.Option(False, "--no-hosts", help="Read the switches only, not the GPU servers."),
    workers: int = typer.Option(
        64, "--workers", min=1, metavar="N", envvar="NETFAB_WORKERS", help="Devices contacted in parallel."
    ),
    strict: Strict = False,
) -> None:
    """Read every port's counters (PFC per priority and pause time, watchdog, ECN marks, drops, watermarks, errors,
    optics, bytes) a few times, compare each port with its peers, and name the tail: slow-but-up links, pause
    storms and where they start, ECN/DCQCN mismatches, drops on lossless classes. Only the lab or saved files are
    read today; real devices need their platform's command transport (not yet)."""
    if fmt not in FORMATS:
        raise _fail(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if (lab is None) == (from_dir is None):
        raise _fail(
            "give --lab PREFIX (a running lab) or --from-dir DIR (saved samples); real devices are not read yet"
        )
    if from_dir is not None and not from_dir.is_dir():
        raise _fail(f"--from-dir {from_dir}: not a directory")
    if from_dir is not None and (watch or save or serve):
        raise _fail("--from-dir replays saved samples: it cannot be combined with --watch, --save or --serve")
    if watch and output is not None and fmt != "openmetrics":
        raise _fail("--watch prints each report; --output with --watch only makes sense for --format openmetrics")
    port = _serve_port(serve) if serve is not None else None

    from netfab.cli.pipeline import load_plan

    loaded = load_plan(intent, strict=strict, lab=lab is not None)
    _check_network(loaded.intent, network)
    from netfab.health.fleet import fleet_of

    fleet = fleet_of(loaded.plan, include_hosts=not no_hosts)
    if from_dir is not None:
        from netfab.health.collect import FromDir, collect_saved

        taken = collect_saved(fleet.targets, FromDir(from_dir))
        if not taken:
            raise _fail(f"--from-dir {from_dir}: no samples (expected numbered directories 0, 1, ...)")
        _finish(_analyse(fleet, taken, job_gpus), fmt, output, svg, png)
        return
    assert lab is not None
    from netfab.health.collect import CollectError
    from netfab.health.lab import LabDriver

    try:
        driver = LabDriver(lab)
    except CollectError as exc:
        raise _fail(str(exc)) from None
    server = None
    try:
        if port is not None:
            from netfab.health.openmetrics import MetricsServer

            server = MetricsServer(port)
        if watch:
            _watch(fleet, driver, interval, job_gpus, fmt, output, server, workers, samples)
            return
        taken = _take(fleet.targets, driver, samples or 2, interval, workers, save)
        report = _analyse(fleet, taken, job_gpus)
        if server is not None:
            server.publish(report)
        _finish(report, fmt, output, svg, png)
    finally:
        driver.close()
        if server is not None:
            server.close()


def _serve_port(value: str) -> int:
    if not value.isdigit() or not 1024 <= int(value) <= 65535:
        raise _fail(f"--serve {value!r}: give a port number 1024-65535 (it listens on 127.0.0.1 only)")
    return int(value)


def _check_network(intent: Any, network: str | None) -> None:
    """--network selects one network of a multi-network intent; an intent without networks has one, unnamed."""
    if network is None:
        return
    from netfab.core.validate import NAME, NAME_RULE

    if not NAME.fullmatch(network):
        raise _fail(f"--network {network!r} is not a network name ({NAME_RULE})")
    names = [getattr(n, "name", str(n)) for n in (getattr(intent, "networks", None) or [])]
    if names and network not in names:
        raise _fail(f"--network {network!r}: the intent's networks are {', '.join(names)}")
    if not names and network != "backend":
        raise _fail(f"--network {network!r}: this intent describes one network (backend)")


def _take(
    targets: list[Target], driver: Driver, count: int, interval: float, workers: int, save: Path | None
) -> list[Any]:
    from netfab.health.collect import Recorder, collect, save_sample

    recorder = Recorder(driver) if save is not None else None
    by_name = {t.device: t for t in targets}
    out = []
    for k in range(count):
        started = time.monotonic()
        out.append(collect(targets, recorder or driver, workers))
        if recorder is not None and save is not None:
            save_sample(save, k, by_name, recorder, out[-1])
        if k + 1 < count:
            time.sleep(max(0.0, interval - (time.monotonic() - started)))
    return out


def _analyse(fleet: Any, taken: list[Any], job_gpus: int | None) -> HealthReport:
    from netfab.health.analysis import analyse

    return analyse(fleet, taken, job_gpus)


def _watch(fleet: Any, driver: Driver, interval: float, job_gpus: int | None, fmt: str, output: Path | None,
           server: Any, workers: int, reports: int | None = None) -> None:  # fmt: skip
    """A report every interval over the last two samples, until Ctrl-C or `reports` reports."""
    from netfab.health.collect import collect

    previous = collect(fleet.targets, driver, workers)
    given = 0
    try:
        while reports is None or given < reports:
            time.sleep(interval)
            current = collect(fleet.targets, driver, workers)
            report = _analyse(fleet, [previous, current], job_gpus)
            if server is not None:
                server.publish(report)
            if output is not None:
                from netfab.core.fs import atomic_write_text
                from netfab.health.openmetrics import exposition

                atomic_write_text(output, exposition(report))
            else:
                sys.stdout.write(_render(report, fmt) + "\n")
                sys.stdout.flush()
            previous = current
            given += 1
    except KeyboardInterrupt:
        return


def _render(report: HealthReport, fmt: str) -> str:
    if fmt == "openmetrics":
        from netfab.health.openmetrics import exposition

        return exposition(report)
    from netfab.cli.report_options import report_context
    from netfab.health.report import RULES, details, preamble, to_findings
    from netfab.report import render

    findings = to_findings(report)
    context = report_context(
        "health",
        rules=RULES,
        subjects=report.devices,
        details=details(report),
        preamble=preamble(report),
        text_limit=200,
    )
    return render(fmt, findings, context)


def _finish(report: HealthReport, fmt: str, output: Path | None, svg: Path | None, png: Path | None) -> None:
    from netfab.core.findings import has_errors
    from netfab.core.fs import atomic_write_text
    from netfab.health.report import to_findings

    if svg is not None or png is not None:
        from netfab.health.picture import fabric_png, fabric_svg

        drawing = fabric_svg(report)
        if svg is not None:
            atomic_write_text(svg, drawing)
        if png is not None:
            fabric_png(drawing, png)
    text = _render(report, fmt)
    if output is not None:
        atomic_write_text(output, text)
    else:
        sys.stdout.write(text)
    if report.unreadable:
        raise typer.Exit(ExitCode.USAGE)
    raise typer.Exit(ExitCode.FINDINGS if has_errors(to_findings(report)) else ExitCode.OK)


def register(app: typer.Typer) -> None:
    app.command("health")(health)
