"""FRR (the frr platform and SONiC's bgp container): the intended frr.conf, applied with frr-reload.py, and
the `--test`-style diff computed offline; for kernel-side drift, the host script that puts it back.

frr-reload.py compares parsed configs, not text, and prints what it would change as "Lines To Delete" and
"Lines To Add", each line under its context (router bgp N / address-family ...). The same is computed here
from the two hier_config trees, so the diff is visible without a device (CI, --from-dir).
"""

from __future__ import annotations

from collections.abc import Iterator

from hier_config import HConfig
from hier_config.child import HConfigChild

from netfab.audit.facts.cli import CliConfig
from netfab.audit.facts.frr import is_device_default, profile_of
from netfab.audit.model import RawDiff

Node = HConfig | HConfigChild


def _only_in(a: Node, b: Node | None, ctx: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], HConfigChild]]:
    """Lines of `a` that `b` lacks, with their context; a section `b` lacks entirely comes as itself."""
    for child in a.children:
        other = b.children.get(child.text) if b is not None else None
        if other is None:
            yield ctx, child
        elif child.children:
            yield from _only_in(child, other, (*ctx, child.text))


def _lines(ctx: tuple[str, ...], child: HConfigChild, delete: bool, same_ctx: bool) -> list[str]:
    out = [] if same_ctx else [" " * depth + text for depth, text in enumerate(ctx)]
    pad = " " * len(ctx)
    if delete:
        out.append(f"{pad}no {child.text}")
        return out
    out.append(pad + child.text)
    out.extend(" " * (len(ctx) + c.depth() - child.depth()) + c.text for c in child.all_children())
    return out


def reload_test_diff(running: HConfig, intended: HConfig) -> str:
    profile = profile_of(intended)
    deletes = [(c, x) for c, x in _only_in(running, intended, ()) if not is_device_default(c, x.text, profile)]
    adds = [(c, x) for c, x in _only_in(intended, running, ()) if not is_device_default(c, x.text, profile)]
    out: list[str] = []
    for title, items, delete in (("Lines To Delete", deletes, True), ("Lines To Add", adds, False)):
        if not items:
            continue
        out += [*([""] if out else []), title, "=" * len(title)]
        previous: tuple[str, ...] | None = None
        for ctx, child in items:
            # one context header per run of lines in the same section (frr-reload repeats it per line)
            out += _lines(ctx, child, delete, same_ctx=bool(ctx) and ctx == previous)
            previous = ctx
    return "\n".join(out)


def remediate(
    running: CliConfig, intended: CliConfig, intended_text: str, label: str
) -> tuple[RawDiff, dict[str, str]]:
    """`label` names the files: the part's audit label in its platform record (the frr platform says frr,
    SONiC's bgp container bgp-frr)."""
    diff = reload_test_diff(running.tree, intended.tree)
    files = {f"{label}.conf": intended_text, f"{label}-reload-test.txt": diff + "\n"} if diff else {}
    return RawDiff("frr-reload", diff), files
