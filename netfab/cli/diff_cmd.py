"""`netfab diff INTENT_A INTENT_B`: what building B instead of A would change, per device and grouped across the
fleet, without writing a build; each side is a file, a directory, or a git revision of one (`HEAD~1:intent/x.yaml`).

The view is `netfab build`'s closing summary (netfab.diff), in every report format, so a pull request can carry
it. Exit codes: 0 the builds would be identical, 1 they differ, 2 unreadable input or bad usage (an intent that
does not lint is reported with its findings and exits as `netfab lint` would), 3 internal error.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path, PurePosixPath

import typer

from netfab.cli.options import Strict
from netfab.cli.report_options import FormatOption, OutputOption
from netfab.core.exitcodes import ExitCode
from netfab.core.validate import InputError
from netfab.report import ReportFormat


def register(app: typer.Typer) -> None:
    app.command("diff")(diff)


def diff(
    old: str = typer.Argument(..., metavar="INTENT_A", help="The intent as it is: a path, or REV:PATH in git."),
    new: str = typer.Argument(..., metavar="INTENT_B", help="The intent as it would be: a path, or REV:PATH."),
    fmt: FormatOption = ReportFormat.TEXT,
    output: OutputOption = None,
    strict: Strict = False,
) -> None:
    """Show what building INTENT_B instead of INTENT_A changes: switch configs as facts (grouped the way audit
    groups drift), host scripts, cabling and inventory as lines. Nothing is written."""
    from netfab.cli import teardown
    from netfab.cli.pipeline import load_plan
    from netfab.cli.report_options import emit_report, report_context
    from netfab.diff.compare import compare_plans
    from netfab.diff.summary import RULES, changes_between, render_text, to_findings

    teardown.memory_only()  # two plans and their configs in memory, nothing open at the end
    with tempfile.TemporaryDirectory(prefix="netfab-diff-") as tmp:
        # bgp=False: rendering derives the sessions of the switches whose digests differ (netfab.render.device).
        a = load_plan(resolve_side(old, Path(tmp) / "a"), strict=strict, bgp=False).plan
        b_paths = resolve_side(new, Path(tmp) / "b")
        b = load_plan(b_paths, strict=strict, bgp=False).plan
        if ":" in new and not Path(new).exists():
            b_paths = [Path(new.partition(":")[2])]
    compared = compare_plans(a, b)
    changes = changes_between(compared.old, compared.new, compared.explained, b, previous_plan=a)
    # A pull request's annotations land on the intent that makes the change.
    findings = to_findings(changes, dict.fromkeys(changes.device_status(), str(b_paths[0])))
    text = render_text(changes, against=old)
    context = report_context(
        "diff",
        rules=RULES,
        subjects=sorted(changes.device_status()),
        preamble=text,
        text_limit=50,
        details={"files": {f: s for f, s in sorted(changes.status.items()) if s != "unchanged"}},
    )
    emit_report(fmt, findings, context, output)
    raise typer.Exit(ExitCode.FINDINGS if changes.changed else ExitCode.OK)


class RevisionError(InputError):
    """A REV:PATH side git cannot show (exit 2)."""


def resolve_side(spec: str, scratch: Path) -> list[Path]:
    """A path that exists is itself; otherwise REV:PATH is checked out of git (the file, or every file under the
    directory) into `scratch`, keeping its name so findings still name the intent's file."""
    if Path(spec).exists() or ":" not in spec:
        return [Path(spec)]  # a missing plain path is reported by load_plan like any unreadable input
    rev, _, path = spec.partition(":")
    if not rev or not path:
        raise RevisionError(f"{spec!r} is neither a path nor REV:PATH", "e.g. HEAD~1:intent/clos3-24k.yaml")
    listed = _git("ls-tree", "-r", "--name-only", rev, "--", path)
    names = [n for n in listed.splitlines() if n]
    if not names:
        raise RevisionError(f"{path} does not exist at revision {rev}", "check the path with git ls-tree " + rev)
    base = PurePosixPath(path) if len(names) > 1 or names[0] != path else PurePosixPath(path).parent
    out: list[Path] = []
    for name in names:
        if not name.endswith((".yaml", ".yml")):
            continue
        target = scratch / PurePosixPath(name).relative_to(base)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_git("show", f"{rev}:{name}"), encoding="utf-8")
        out.append(target)
    if len(names) > 1:  # a directory: merged like any intent directory
        return [scratch]
    return out


def _git(*args: str) -> str:
    try:
        proc = subprocess.run(["git", *args], capture_output=True, text=True, check=False)
    except OSError as exc:
        raise RevisionError(f"cannot run git: {exc.strerror or exc}", "install git, or pass paths") from None
    if proc.returncode != 0:
        raise RevisionError(f"git {' '.join(args)}: {proc.stderr.strip() or 'failed'}", "check the revision")
    return proc.stdout
