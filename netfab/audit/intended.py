"""A device's intended files: what its build renders, read from the build tree when that tree already holds them.

Rendering is most of an offline audit's CPU (~1.1 ms of ~1.9 ms per EOS switch at 10,000 switches), and CI
usually audits right after `netfab build` wrote build/<fabric>/. The build records with every switch config
the digest of what it was rendered from (netfab.render.inputs: the template context, the platform record,
netfab's code and templates) and the digest of its bytes (netfab.render.manifest). A device whose input
digest today is the recorded one has, by the build's own rule, exactly those files as its rendering; each
file is read and its bytes checked against the recorded digest, so a file edited, replaced or truncated since
is rendered instead, and a stale tree costs time, never a finding. The manifest is not signed: whoever may write
the build tree may also rewrite a file's record to match an edit, and the audit then compares against that
file, as `netfab deploy` would push it. The build tree is trusted output, like the configs it holds.
"""

from __future__ import annotations

import os
from pathlib import Path

from netfab.core.digest import code_digest
from netfab.design.plan import DevicePlan
from netfab.platforms import ENV_PATH
from netfab.render.device import device_context, device_outputs, render_device
from netfab.render.inputs import RenderInputs
from netfab.render.manifest import FileRecord, built_tree, digest_bytes
from netfab.render.writer import UnsafePath, safe_relpath


class BuiltConfigs:
    """The switch configs of one build tree, each trusted only for the inputs it was rendered from."""

    def __init__(self, root: Path, records: dict[str, FileRecord]) -> None:
        self.root = root
        self.records = records
        self.inputs = RenderInputs(code_digest(os.environ.get(ENV_PATH, "")))

    @classmethod
    def at(cls, build_root: Path, fabric: str) -> BuiltConfigs | None:
        """build_root/<fabric>/ when it is a build tree with a manifest (the build refuses a symlinked one too)."""
        tree = built_tree(build_root, fabric)
        if tree is None or not any(r.inputs for r in tree[1].files.values()):
            return None
        return cls(tree[0], tree[1].files)

    def files(self, dev: DevicePlan, context: dict[str, object]) -> dict[str, str] | None:
        """{output path: text} of the device as its build wrote them, or None when any of them cannot be
        proven to be what rendering `context` gives now (then the caller renders)."""
        inputs = self.inputs.device(dev, context)
        if inputs is None:
            return None
        out: dict[str, str] = {}
        for path, _ in device_outputs(dev):
            try:
                key = str(safe_relpath(path))
            except UnsafePath:
                return None
            record = self.records.get(key)
            if record is None or record.inputs != inputs:
                return None
            try:
                data = (self.root / key).read_bytes()
            except OSError:
                return None
            if len(data) != record.size or digest_bytes(data) != record.digest:
                return None
            out[path] = data.decode("utf-8")  # the build wrote str.encode("utf-8"); the digest proved the bytes
        return out


def intended_files(dev: DevicePlan, built: BuiltConfigs | None = None) -> dict[str, str]:
    """The device's build outputs keyed by suffix (".cfg", ".frr.conf", ".sh"): from `built` when it holds them
    for the device's current inputs, else rendered."""
    context = device_context(dev)
    rendered = built.files(dev, context) if built is not None else None
    if rendered is None:
        rendered = render_device(dev, context)
    head = f"configs/{dev.name}"
    return {path[len(head) :]: text for path, text in rendered.items() if path.startswith(head)}
