"""`netfab diff INTENT_A INTENT_B`: what building B instead of A would change, per device and grouped across the
fleet, without writing a build; each side is a file, a directory, or a git revision of one (`HEAD~1:intent/x.yaml`).

The view is `netfab build`'s closing summary (netfab.diff), in every report format, so a pull request can carry
it. Exit codes: 0 the builds would be identical, 1 they differ, 2 unreadable input or bad usage (an intent that
does not lint is reported with its findings and exits as `netfab lint` would), 3 internal error.

REV:PATH means what `git show REV:PATH` means, from any directory: PATH from the top of the repository, or from
the current directory when it starts with ./ or ../. A symbolic link in the revision is followed within it. The
revision's files are copied to a scratch directory and read by the same loader as files on disk (so a file that
is not UTF-8 is LOAD001 and exit 2 either way), and what the load reports is then named REV:PATH: the scratch
names would mean nothing to the reader.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING

import typer

from netfab.cli.options import Strict
from netfab.cli.report_options import FormatOption, OutputOption
from netfab.core.exitcodes import ExitCode
from netfab.core.validate import InputError
from netfab.report import ReportFormat

if TYPE_CHECKING:
    from netfab.core.findings import Location
    from netfab.design.plan import FabricPlan
    from netfab.load import IntentSource


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
    from netfab.cli.report_options import emit_report, report_context
    from netfab.diff.compare import compare_plans
    from netfab.diff.summary import RULES, changes_between, render_text, to_findings

    teardown.memory_only()  # two plans and their configs in memory, nothing open at the end
    with tempfile.TemporaryDirectory(prefix="netfab-diff-") as tmp:
        a = _load(resolve_side(old, Path(tmp) / "a"), strict)
        b_side = resolve_side(new, Path(tmp) / "b")
        b = _load(b_side, strict)
    compared = compare_plans(a, b)
    changes = changes_between(compared.old, compared.new, compared.explained, b, previous_plan=a)
    # A pull request's annotations land on the intent that makes the change.
    findings = to_findings(changes, dict.fromkeys(changes.device_status(), str(b_side.changed)))
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


def _load(side: Side, strict: bool) -> FabricPlan:
    """load_plan, with the side's labels put on the load before the lint and the design report from it."""
    from netfab.cli.pipeline import load_plans
    from netfab.lint.api import lint_source
    from netfab.load import load_intent_source

    source = load_intent_source(side.paths)
    side.relabel(source)
    linted = (source, lint_source(source, strict=strict))
    # bgp=False: rendering derives the sessions of the switches whose digests differ (netfab.render.device).
    return load_plans(side.paths, strict=strict, bgp=False, linted=linted)[0].plan


class RevisionError(InputError):
    """A REV:PATH side git cannot show (exit 2)."""


@dataclass(frozen=True)
class Side:
    """One side of the diff: the paths the loader reads, the working-tree path its annotations name, and the
    name each scratch copy of a revision's file is reported under (REV:PATH)."""

    paths: list[Path]
    changed: Path
    labels: dict[str, str] = field(default_factory=dict)

    def relabel(self, source: IntentSource) -> None:
        """Name the scratch copies REV:PATH everywhere a finding takes its file from: the source map (lint and
        design findings), the load's own findings and the file list."""
        if not self.labels:
            return
        for table in (source.source_map.values, source.source_map.keys):
            for data_path, (file, line, column) in table.items():
                if file in self.labels:
                    table[data_path] = (self.labels[file], line, column)
        source.source_map.default = self._located(source.source_map.default)
        source.findings = [
            replace(f, location=self._located(f.location), related=tuple(map(self._located, f.related)))
            for f in source.findings
        ]
        renamed = {file: Path(self.labels.get(str(file), str(file))) for file in source.files}
        source.files = [renamed[file] for file in source.files]
        source.contents = {renamed.get(file, file): raw for file, raw in source.contents.items()}

    def _located(self, location: Location) -> Location:
        label = self.labels.get(location.file)
        return location if label is None else replace(location, file=label)


def resolve_side(spec: str, scratch: Path) -> Side:
    """A path that exists is itself; otherwise REV:PATH is copied out of git (the file, or the directory's intent
    files) into `scratch`, keeping their names, for the loader to read as it reads any file or directory."""
    if Path(spec).exists() or ":" not in spec:
        return Side([Path(spec)], Path(spec))  # a missing plain path is reported by the loader like any other
    rev, _, path = spec.partition(":")
    if not rev or not path:
        raise RevisionError(f"{spec!r} is neither a path nor REV:PATH", "e.g. HEAD~1:intent/clos3-24k.yaml")
    if rev.startswith("-"):  # git would take it for an option
        raise RevisionError(f"revision {rev!r} starts with '-'", "name such a branch refs/heads/NAME")
    if "\n" in path:  # git cat-file --batch reads one path a line
        raise RevisionError(f"{spec!r}: a path with a line break cannot be looked up in git", "rename the file")
    prefix = os.fsdecode(_git("rev-parse", "--show-prefix").removesuffix(b"\n"))
    rel = _from_top(path, prefix)
    tree = _run("rev-parse", "--verify", "--quiet", f"{rev}^{{tree}}")
    if tree.returncode != 0:
        raise RevisionError(f"unknown revision {rev!r}", f"check it with git rev-parse {rev}")
    root = tree.stdout.decode().strip()
    # Where the intent lies in the working tree, as a path from here: what a pull request annotates.
    side = _Located(rev, root, rel, Path(posixpath.relpath(rel or ".", prefix or ".")), scratch)
    found = _lookup(root, [rel])[0]
    if found.kind == "blob":
        target = scratch / PurePosixPath(rel).name
        scratch.mkdir(parents=True)
        _git("cat-file", "blob", found.oid, into=target)
        return Side([target], side.changed, {str(target): side.label(rel)})
    if found.kind == "tree":
        return side.directory(found.oid)
    raise side.unreadable(found, rel)


def _from_top(path: str, prefix: str) -> str:
    """PATH from the top of the repository, as `git show REV:PATH` takes it: from the current directory
    (`prefix`, from the top) when it is . or .. or starts with ./ or ../, else from the top. Normalised, so that a
    copy's label is a name git takes from anywhere (git itself would refuse a '..' inside a path from the top)."""
    start = prefix if path in (".", "..") or path.startswith(("./", "../")) else ""
    joined = posixpath.normpath(start + path)
    if joined == ".." or joined.startswith("../"):
        raise RevisionError(f"{path} is outside the repository", "REV:./PATH starts from here, REV:PATH from the top")
    return "" if joined == "." else joined


@dataclass(frozen=True)
class _Object:
    """What git finds at a path of a tree, following symbolic links within it: blob, tree or commit (a
    submodule) with its object id; or why there is nothing: missing, or a link that is dangling, a loop,
    notdir (through a file), or symlink (out of the repository, to `target` from its top)."""

    kind: str
    oid: str = ""
    target: str = ""


@dataclass(frozen=True)
class _Located:
    """A REV:PATH side being copied out: `root` is REV's tree, `rel` the PATH from the top of the repository."""

    rev: str
    root: str
    rel: str
    changed: Path
    scratch: Path

    def label(self, rel: str) -> str:
        return f"{self.rev}:{rel}"

    def directory(self, oid: str) -> Side:
        """The directory's intent files, chosen as the loader chooses them on disk (netfab.load.merge)."""
        from netfab.load.merge import YAML_SUFFIXES

        # Made even when nothing is copied: the loader then reports a directory without intent files.
        self.scratch.mkdir(parents=True)
        labels = {str(self.scratch): self.label(self.rel)}
        entries: dict[str, _Object] = {}
        links: list[str] = []
        for entry in _git("ls-tree", "-z", "--full-tree", oid).split(b"\0"):
            if not entry:
                continue
            meta, _, raw_name = entry.partition(b"\t")
            mode, kind, entry_oid = meta.decode().split(" ")
            name = os.fsdecode(raw_name)
            if name.startswith(".") or PurePosixPath(name).suffix.lower() not in YAML_SUFFIXES:
                continue
            entries[name] = _Object(kind, entry_oid)
            if mode == "120000":  # a symbolic link: its blob is the target's name, not the target's text
                links.append(name)
        if any("\n" in name for name in links):  # git cat-file --batch reads one path a line
            raise RevisionError(
                f"{self.label(self.rel)} holds a symbolic link with a line break in its name", "rename it"
            )
        for name, found in zip(links, _lookup(self.root, [self._in(name) for name in links]), strict=True):
            entries[name] = found
        for name, found in entries.items():
            if found.kind == "symlink":
                raise self.unreadable(found, self._in(name))
            if found.kind != "blob":
                continue  # the loader skips what is not a file (a directory, a dangling link) on disk too
            target = self.scratch / name
            _git("cat-file", "blob", found.oid, into=target)
            labels[str(target)] = self.label(self._in(name))
        return Side([self.scratch], self.changed, labels)

    def _in(self, name: str) -> str:
        return f"{self.rel}/{name}" if self.rel else name

    def unreadable(self, found: _Object, rel: str) -> RevisionError:
        label = self.label(rel)
        hint = f"list what is there with git ls-tree --full-tree {self.label(posixpath.dirname(rel))}"
        if found.kind == "missing":
            return RevisionError(f"{rel} does not exist at revision {self.rev}", hint)
        if found.kind == "symlink":
            why = f"is a symbolic link out of the repository (to {found.target}, from its top)"
            return RevisionError(f"{label} {why}", "name the file it points to, or a path on disk")
        if found.kind == "commit":
            return RevisionError(f"{label} is a submodule", "name a file or directory of the repository")
        links = {"loop": "a loop of symbolic links", "notdir": "a symbolic link through a file"}
        return RevisionError(f"{label} is {links.get(found.kind, 'a dangling symbolic link')}", hint)


def _lookup(tree: str, paths: list[str]) -> list[_Object]:
    """Each path of `tree` as `git cat-file --follow-symlinks` finds it: links within the tree are followed."""
    if not paths:
        return []
    lines = b"".join(os.fsencode(f"{tree}:{path}") + b"\n" for path in paths)
    out = _git("cat-file", "--batch-check", "--follow-symlinks", stdin=lines)
    found: list[_Object] = []
    at = 0
    for _ in paths:
        end = out.index(b"\n", at)
        head = out[at:end].decode("utf-8", "replace").split(" ")
        at = end + 1
        if head[-1] == "missing":
            found.append(_Object("missing"))
        elif head[0] in ("symlink", "dangling", "loop", "notdir"):
            # "<kind> <size>" then that many bytes: the link's target (or the path asked for), then a newline.
            size = int(head[1])
            found.append(_Object(head[0], target=os.fsdecode(out[at : at + size])))
            at += size + 1
        else:
            found.append(_Object(head[1], head[0]))
    return found


def _git(*args: str, stdin: bytes | None = None, into: Path | None = None) -> bytes:
    """git's output as bytes (names are bytes to git), or its own error message as a RevisionError."""
    if into is None:
        proc = _run(*args, stdin=stdin)
    else:
        with into.open("wb") as out:  # a blob goes straight to its copy: it may be large, the loader caps it
            proc = _run(*args, stdin=stdin, out=out)
    if proc.returncode != 0:
        # Its messages quote paths and revisions as the bytes they are, which need not be UTF-8.
        error = proc.stderr.decode("utf-8", "replace").strip() or f"exit status {proc.returncode}"
        raise RevisionError(f"git {args[0]}: {error}", "run netfab diff inside the repository, or pass paths")
    return proc.stdout or b""


def _run(*args: str, stdin: bytes | None = None, out: IO[bytes] | None = None) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", *args], input=stdin, stdout=out or subprocess.PIPE, stderr=subprocess.PIPE, check=False
        )
    except OSError as exc:
        raise RevisionError(f"cannot run git: {exc.strerror or exc}", "install git, or pass paths") from None
