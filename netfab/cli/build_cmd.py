"""`netfab build INTENT [--out DIR] [--platform P] [--limit GLOB]`."""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from netfab.cli.options import DEFAULT_BUILD, BuildLimit, Intent, NetworkSelect, Strict
from netfab.core.exitcodes import ExitCode
from netfab.core.validate import output_root, typer_callback

if TYPE_CHECKING:
    from netfab.lint.api import LintResult
    from netfab.load import IntentSource
    from netfab.render.preseed import Preseed

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
    network: NetworkSelect = None,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Render every switch config, GPU server NIC script, the cabling plan and the Nornir inventory, for every
    network of the cluster (the back end into OUT/<fabric>/, network N into OUT/<fabric>-N/).

    Output is deterministic and written atomically: a failure leaves the previous build untouched.
    """
    from netfab.cli import teardown

    teardown.memory_only()
    started = time.perf_counter()
    only_some = platform is not None or limit is not None
    # First, before importing the renderer or the rules: is there anything to do at all?
    rebuild = None if only_some else _unchanged_build(intent, out, strict, started, network)
    # Then, once the intent is linted (which the build needs anyway): is it what the trees were built from? The
    # build goes on from this very lint, so what it records is the text it built from (never a second read).
    lint = None if rebuild is None else _unchanged_model(rebuild, out, strict, network, started)
    # A rebuild then links the previous build's files into its staging trees on the other core while this one
    # designs (netfab.render.preseed).
    from netfab.render import preseed

    seeding: dict[Path, Preseed] = {}
    try:
        for fabric in rebuild.trees if rebuild is not None else []:
            if (started_seeding := preseed.start(out / fabric)) is not None:
                seeding[started_seeding.tree.target] = started_seeding
        _build_networks(intent, out, platform, limit, strict, network, quiet, started, rebuild, seeding, lint)
    finally:
        # An intent that did not lint, an unknown platform, Ctrl-C: what no build took over is stopped and
        # removed (after a build took it over, its tree is swapped in or already removed, and this is a no-op).
        for left in seeding.values():
            left.cancel()


def _build_networks(
    intent: list[Path],
    out: Path,
    platform: str | None,
    limit: str | None,
    strict: bool,
    network: str | None,
    quiet: bool,
    started: float,
    rebuild: Rebuild | None,
    seeding: dict[Path, Preseed],
    lint: LintResult | None,
) -> None:
    from netfab.cli.pipeline import err_console, load_plans
    from netfab.cli.progress import progress_bar
    from netfab.diff.changes import Explainer
    from netfab.platforms import platform_names
    from netfab.render.build import BuildSelection
    from netfab.render.build import build as run_build
    from netfab.render.environment import UnsupportedFeature
    from netfab.render.manifest import code_digest, model_digest
    from netfab.render.writer import AtomicTree, safe_relpath

    choices = (*platform_names(), HOSTS)
    if platform is not None and platform not in choices:
        err_console.print(f"netfab build: unknown platform {platform!r}; choose from {', '.join(choices)}")
        raise typer.Exit(ExitCode.USAGE)
    selection = BuildSelection(platform=platform, device_glob=limit)
    # Without BGP sessions: the render derives them for the switches it renders (netfab.render.device).
    loaded = load_plans(
        intent,
        strict=strict,
        networks=[network] if network else None,
        bgp=False,
        linted=None if rebuild is None or lint is None else (rebuild.source, lint),
    )
    inputs = rebuild.inputs if rebuild is not None else None
    # One code digest for every tree, taken before any template is compiled: the Jinja environment keeps what
    # the first network compiled, so a digest taken again per network could name a template saved meanwhile.
    code = rebuild.code if rebuild is not None else code_digest()
    root = lint.intent if lint is not None else None
    for one in loaded:
        plan = one.plan
        model = None
        if root is not None and rebuild is not None:
            model = model_digest(root, one.network, rebuild.options, rebuild.code)
        total = sum(selection.wants_device(d) for d in plan.devices.values()) + sum(
            selection.wants_server(s) for s in plan.servers
        )
        show = not quiet and err_console.is_terminal and total > 50
        explain = Explainer({d.name: d.platform for d in plan.devices.values()})
        # Left in `seeding` until the build has it, so an interrupt anywhere before still stops and removes it.
        tree_key = AtomicTree.target_of(out / safe_relpath(plan.name).name)
        seeds = seeding.get(tree_key)
        seeded = seeds.take() if seeds is not None else None
        try:
            if show:
                with progress_bar(err_console) as progress:
                    bar = progress.add_task(f"rendering {one.network}", total=total)
                    result = run_build(
                        plan,
                        out,
                        selection,
                        progress=partial(progress.advance, bar),
                        inputs=inputs,
                        explain=explain,
                        seeded=seeded,
                        model=model,
                        code=code,
                    )
            else:
                result = run_build(
                    plan, out, selection, inputs=inputs, explain=explain, seeded=seeded, model=model, code=code
                )
        except UnsupportedFeature as exc:
            # Networks already written stay written (each is its own atomic tree); this one is unchanged.
            what = f"network {one.network}: " if len(loaded) > 1 else ""
            err_console.print(f"netfab build: {what}{exc}\nnothing was written; the previous build is unchanged.")
            raise typer.Exit(ExitCode.FINDINGS) from None
        seeding.pop(tree_key, None)  # swapped in: nothing left to stop
        elapsed = time.perf_counter() - started
        what = "" if len(loaded) == 1 else f"network {one.network}: "
        err_console.print(
            f"{what}built {len(result.devices)} switches and {len(result.servers)} servers "
            f"({result.files} files, {len(result.written)} written) into {result.out_dir} in {elapsed:.2f} s"
        )
        if result.previous is not None and result.manifest is not None:
            from netfab.diff.summary import changes_between, render_text

            old = {f: r.digest for f, r in result.previous.files.items()}
            new = {f: r.digest for f, r in result.manifest.files.items()}
            if selection.partial:  # what this build did not regenerate is not a change it made
                old = {f: d for f, d in old.items() if f in new}
            err_console.print(render_text(changes_between(old, new, result.explained, plan)), end="")


@dataclass
class Rebuild:
    """What a full build knows before it lints: its inputs digest and the trees it will write."""

    source: IntentSource
    options: str
    code: str
    """netfab.render.manifest.code_digest()."""
    inputs: str | None
    trees: list[str]
    """The names of the trees under the output root (as far as the YAML as loaded tells, and only plain names)."""


def _unchanged_build(intent: list[Path], out: Path, strict: bool, started: float, network: str | None) -> Rebuild:
    """The build's inputs digest and the trees it will write; exits 0 right here, writing nothing, when every
    one was built from exactly these inputs and is intact (netfab.render.manifest explains what that covers).
    Same inputs, same netfab: the lint and design that built that tree would give the same answer, so neither
    runs again."""
    from netfab.load import load_intent_source
    from netfab.render.manifest import code_digest, source_digest, up_to_date

    source = load_intent_source(intent)
    options = f"strict={strict}"
    code = code_digest()
    if source.unreadable:
        return Rebuild(source, options, code, None, [])  # load_plan reports it
    fabric = source.data.get("fabric") if isinstance(source.data, dict) else None
    name = fabric.get("name") if isinstance(fabric, dict) else None
    # The bytes this very parse read: lint, design and the model check all use it, so the tree is stamped with
    # the text it was built from even if a file is saved meanwhile.
    read = source.read_as_parsed()
    if read is None:
        return Rebuild(source, options, code, None, [])
    digest = source_digest(read, options, code)
    if not isinstance(name, str) or not name:
        return Rebuild(source, options, code, digest, [])
    # Every selected network's tree (out/<fabric>/, out/<fabric>-<network>/) must be up to date; names are
    # read from the YAML as loaded, like the fabric's (lint has not run: a bad name just means "rebuild").
    networks = source.data.get("networks") if isinstance(source.data, dict) else None
    extra = [str(n) for n in networks] if isinstance(networks, dict) else []
    if network is not None:
        if network != "backend" and network not in extra:
            return Rebuild(source, options, code, digest, [])  # load_plans reports it
        extra = [] if network == "backend" else [network]
    fabrics = ([name] if network in (None, "backend") else []) + [f"{name}-{n}" for n in extra]
    manifests = [up_to_date(f, out, digest) for f in fabrics]
    if any(m is None for m in manifests):
        # Lint has not run: a name that is not one plain directory name is left for it to report.
        return Rebuild(source, options, code, digest, [f for f in fabrics if _plain_name(f)])
    elapsed = time.perf_counter() - started
    files = sum(len(m.files) for m in manifests if m is not None)
    where = ", ".join(str(out / f) for f in fabrics)
    # typer.echo, not the pipeline's rich console: rich costs ~0.05 s to import, a tenth of this whole run.
    typer.echo(
        f"{where} {'is' if len(fabrics) == 1 else 'are'} up to date: built from these inputs and unchanged since "
        f"({files:,} files, nothing written) in {elapsed:.2f} s",
        err=True,
    )
    raise typer.Exit(ExitCode.OK)


def _unchanged_model(rebuild: Rebuild, out: Path, strict: bool, network: str | None, started: float) -> LintResult:
    """The intent's lint (load_plans takes it from here, with rebuild.source). Exits 0 when every tree the
    build would write was built from this very validated intent by this netfab and is intact, its manifest
    then restamped with the new inputs digest and nothing else written: the intent's bytes changed but not
    what it says (a comment, the order of keys, a flow mapping written out), so a design and a render would
    give the same tree. The design is a function of the validated intent and netfab's code alone, and so are
    the plan rules' answers, which were free of errors for that build under these options (--strict is one);
    the intent's own rules ran here, on the new text."""
    from netfab.lint.api import lint_source
    from netfab.render.manifest import SameModel, model_digest

    lint = lint_source(rebuild.source, strict=strict)
    root = lint.intent
    if lint.exit_code != ExitCode.OK or root is None or rebuild.inputs is None:
        return lint  # load_plans reports it
    names = root.network_names()
    if network is not None and network not in names:
        return lint
    held: list[SameModel] = []
    try:
        for net in [network] if network is not None else names:
            model = model_digest(root, net, rebuild.options, rebuild.code)
            tree = root.network_view(net).intent.fabric.name  # what the design names the plan, and so the tree
            same = None if model is None else SameModel.check(out, tree, model)
            if same is None:
                return lint
            held.append(same)
        try:
            for same in held:
                same.restamp(rebuild.inputs)
        except OSError:
            return lint  # a tree restamped already is still true to its manifest; the build goes on
    finally:
        for same in held:
            same.close()
    elapsed = time.perf_counter() - started
    files = sum(len(same.manifest.files) for same in held)
    trees = ", ".join(str(out / root.network_view(n).intent.fabric.name) for n in ([network] if network else names))
    typer.echo(
        f"{trees} {'is' if len(held) == 1 else 'are'} up to date: the intent's text changed but not what it says, "
        f"so netfab would build the same files ({files:,} files; the manifest records the new inputs, nothing "
        f"else written; its notes and warnings are that build's: `netfab lint` lists them) in {elapsed:.2f} s",
        err=True,
    )
    raise typer.Exit(ExitCode.OK)


def _plain_name(name: str) -> bool:
    """`name` is one directory name that stays inside the output root (netfab.render.writer.safe_relpath)."""
    from netfab.render.writer import UnsafePath, safe_relpath

    try:
        return safe_relpath(name).parts == (name,) and "\0" not in name
    except UnsafePath:
        return False


def register(app: typer.Typer) -> None:
    app.command("build")(build)
