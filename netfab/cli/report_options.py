"""The --format/-f and --output/-o options of every reporting verb (lint, verify, audit, analyze), and the one
way a verb prints its report: same names, same choices, same meaning everywhere.

--format picks the rendering of the verb's findings (netfab.report.ReportFormat); --output writes that report
to a file, atomically (netfab.core.fs), instead of stdout. Output *directories* (analyze's and audit's --out)
are another option. Kept free of heavy imports: `netfab lint` must start fast.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from netfab.core.findings import Finding
from netfab.core.validate import output_file, typer_callback
from netfab.report import ReportContext, ReportFormat

FormatOption = Annotated[
    ReportFormat,
    typer.Option("--format", "-f", case_sensitive=False, help="Report format (text is for people)."),
]
OutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        callback=typer_callback(output_file, "--output"),  # a directory or unwritable place: exit 2 up front
        help="Write the report to FILE (atomically), not stdout.",
    ),
]


def report_context(verb: str, **fields: Any) -> ReportContext:
    from netfab import __version__

    return ReportContext(tool_version=__version__, verb=verb, **fields)


def emit_report(fmt: ReportFormat, findings: Sequence[Finding], context: ReportContext, output: Path | None) -> None:
    """Render and write the report: to FILE atomically (an unwritable FILE exits 2), else to stdout, with
    colour when stdout is a terminal and the format is text."""
    from netfab.report import render

    if rich_output(fmt, output):
        from rich.console import Console

        from netfab.report.text import render_rich

        render_rich(findings, Console(soft_wrap=True), context)  # never wrap mid-sentence
    else:
        emit_rendered(render(fmt.value, findings, context), output)


def rich_output(fmt: ReportFormat, output: Path | None) -> bool:
    """The report goes to a terminal as text: emit_report prints it with rich, not as rendered text."""
    return output is None and fmt is ReportFormat.TEXT and sys.stdout.isatty()


def emit_rendered(text: str, output: Path | None) -> None:
    """Write an already rendered report as emit_report would (never for rich_output)."""
    if output is not None:
        from netfab.core.fs import atomic_write_text

        atomic_write_text(output, text)  # OutputError: exit 2 (cli.app)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def at_device_configs(findings: Sequence[Finding], configs: Mapping[str, str]) -> list[Finding]:
    """Device findings that name no file point at the device's config (`configs`: device -> file), so SARIF
    and JUnit annotate the file an engineer opens; a finding with a file of its own keeps it."""
    import dataclasses

    from netfab.core.findings import Location

    out = []
    for f in findings:
        if f.subject and not f.location.file and f.subject in configs:
            f = dataclasses.replace(f, location=Location(configs[f.subject]))
        out.append(f)
    return out


def built_configs(plan: Any, build_root: Path) -> dict[str, str]:
    """device -> its rendered config under the build (what verify and an online audit compare against)."""
    from netfab.audit.facts import primary_suffix

    configs = build_root / plan.name / "configs"
    return {name: str(configs / f"{name}{primary_suffix(dev.platform)}") for name, dev in plan.devices.items()}
