"""`netfab lab collective`: the barrier experiment on a running lab (netfab.lab.collective does the work).

Exit codes: 0 the run completed (slow steps are its result, not a failure), 2 bad options or a lab that is
not up or does not run this intent's fabric, 1 the run could not be carried out in the lab (LabError).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import typer

from netfab.cli.options import DEFAULT_LAB, Intent, LabName, Strict
from netfab.core.exitcodes import ExitCode

_SIZE = re.compile(r"^\s*(\d+)\s*(|b|k|kb|kib|m|mb|mib|g|gb|gib)\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1000, "kib": 1024, "m": 1 << 20, "mb": 10**6, "mib": 1 << 20}
_SIZE_UNITS |= {"g": 1 << 30, "gb": 10**9, "gib": 1 << 30}
MAX_BYTES = 1 << 30


def parse_size(text: str) -> int:
    """'16MiB' -> 16777216 (k/m/g are binary, kb/mb/gb decimal); ValueError when unreadable or out of range."""
    m = _SIZE.match(text)
    if not m:
        raise ValueError(f"size {text!r} is not a number of bytes with an optional unit (e.g. 1MiB, 512k)")
    size = int(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]
    if not 1 <= size <= MAX_BYTES:
        raise ValueError(f"size {text!r} must be between 1 byte and 1 GiB per worker")
    return size


def _fail(message: str, code: ExitCode = ExitCode.USAGE) -> typer.Exit:
    from netfab.cli.pipeline import err_console

    err_console.print(f"netfab lab collective: {message}", markup=False, highlight=False)
    return typer.Exit(code)


def collective(
    intent: Intent,
    prefix: LabName = DEFAULT_LAB,
    size: str = typer.Option(..., "--bytes", metavar="SIZE", help="Bytes each worker sends per step (1MiB, 512k)."),
    steps: int = typer.Option(..., "--steps", min=1, max=100_000, help="Barrier steps to run."),
    pattern: str = typer.Option("ring", "--pattern", help="ring or alltoall (inside each rail)."),
    throttle: list[str] = typer.Option(
        [],
        "--throttle",
        metavar="NODE:PORT=RATE",
        help="Shape a switch port's egress (tc tbf), e.g. leaf1:swp2=200mbit.",
    ),
    throttle_random: str | None = typer.Option(
        None,
        "--throttle-random",
        metavar="P=RATE",
        help="Each worker's access port slowed with probability P per step.",
    ),
    down: list[str] = typer.Option([], "--down", metavar="NODE:PORT", help="Set a switch port down for the run."),
    gpus: int | None = typer.Option(
        None, "--gpus", min=2, metavar="N", help="Use only N GPU NICs as workers (default: all)."
    ),
    seed: int = typer.Option(1, "--seed", help="Seed of the random throttles."),
    slow_factor: float = typer.Option(
        3.0, "--slow-factor", min=1.0, help="A step is slow above this many times the healthy (warm-up) step time."
    ),
    output_format: str = typer.Option("text", "--format", help="text or json."),
    output: Path | None = typer.Option(None, "--output", "-o", metavar="FILE", help="Write the report to FILE."),
    strict: Strict = False,
) -> None:
    """Start every worker's fixed-size transfer at once, step after step; report step time (the slowest flow),
    median flow and the healthy workers' idle share. Only the lab's own namespaces carry traffic."""
    from netfab.lab.collective import (
        PATTERNS,
        CollectiveSpec,
        endpoints_from_plan,
        parse_random_throttle,
        parse_throttle,
        pick_workers,
    )
    from netfab.lab.collective_shaping import Port

    if output_format not in ("text", "json"):
        raise _fail(f"unknown format {output_format!r}; choose text or json")
    if pattern not in PATTERNS:
        raise _fail(f"unknown pattern {pattern!r}; choose {' or '.join(PATTERNS)}")
    try:
        nbytes = parse_size(size)
        throttles = tuple(parse_throttle(t) for t in throttle)
        rnd = parse_random_throttle(throttle_random) if throttle_random else None
    except ValueError as exc:
        raise _fail(str(exc)) from None
    downs = []
    for d in down:
        node, _, port = d.partition(":")
        if not node or not port:
            raise _fail(f"--down {d!r} is not NODE:PORT")
        downs.append(Port(node, port))

    from netfab.cli.lab_cmd import _check_lab_fabric, _need_root_and_frr
    from netfab.cli.pipeline import load_plan
    from netfab.lab import LabError
    from netfab.lab.collective import run_collective
    from netfab.lab.state import load_state

    _need_root_and_frr()
    try:
        load_state(prefix)
    except LabError as exc:
        raise _fail(f"{exc}; bring it up with `netfab lab up INTENT --lab {prefix}`") from None
    _check_lab_fabric(intent, prefix, "collective", strict)
    plan = load_plan(intent, strict=strict, lab=True).plan
    spec = CollectiveSpec(
        nbytes,
        steps,
        "ring" if pattern == "ring" else "alltoall",
        throttles,
        rnd,
        tuple(downs),
        seed,
        slow_factor,
    )
    try:
        chosen = pick_workers(endpoints_from_plan(plan), gpus)
        result = run_collective(prefix, chosen, spec)
    except LabError as exc:
        raise _fail(str(exc), ExitCode.FINDINGS) from None
    data = result.as_dict()
    text = json.dumps(data, indent=2, sort_keys=True) + "\n" if output_format == "json" else _text(data)
    if output is not None:
        from netfab.core.fs import atomic_write_text

        atomic_write_text(output, text)
    else:
        sys.stdout.write(text)


def _text(data: dict[str, object]) -> str:
    summary = data["summary"]
    assert isinstance(summary, dict)
    lines = [
        f"collective on lab {data['lab']}: {data['pattern']}, {len(data['workers'])} workers, "  # type: ignore[arg-type]
        f"{data['bytes_per_worker']} bytes per worker per step",
        f"  {'step':>5} {'step time':>11} {'median flow':>12} {'idle':>6}  throttled",
    ]
    steps = data["steps"]
    assert isinstance(steps, list)
    for s in steps[:50]:
        t = "timeout" if s["step_time_s"] is None else f"{s['step_time_s'] * 1000:.1f} ms"
        m = "-" if s["median_flow_s"] is None else f"{s['median_flow_s'] * 1000:.1f} ms"
        lines.append(f"  {s['step']:>5} {t:>11} {m:>12} {s['idle_fraction']:>6.0%}  {', '.join(s['throttled']) or '-'}")
    if len(steps) > 50:
        lines.append(f"  ... {len(steps) - 50} more steps: see --format json")
    expected = summary["p_slow_expected"]
    lines.append(
        f"slow steps: {summary['slow_steps']} of {summary['steps']} (P = {summary['p_slow_measured']}"
        + (f", 1-(1-p)^n = {expected}" if expected is not None else "")
        + f"; slow = {summary['slow_criterion']})"
    )
    return "\n".join(lines) + "\n"
