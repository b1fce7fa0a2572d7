"""The audit dir (default build/<fabric>.audit/, beside the build: core.fs.verb_dir), written atomically: a new audit
replaces the old one whole.

    report.json                       the JSON report (netfab's envelope; `details` is the complete record)
    report.txt                        the text report
    devices/<device>/diff.txt         the platform's own diff(s): hier_config unified, jsonpatch, frr-reload, kernel
    devices/<device>/<remediation>    remediation.cfg | remediation.set | patch.json | nvue-patch.yaml +
                                      nv-commands.sh | frr.conf + frr-reload-test.txt (+ host.sh)

Device names are user data: each path is checked to stay inside the dir (render.writer.safe_relpath).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from netfab.audit.model import AuditReport
from netfab.audit.report import render
from netfab.render.writer import AtomicTree, UnsafePath, safe_relpath


@dataclass
class AuditDir:
    refused: list[str] = field(default_factory=list)
    """Devices whose files could not be written (unsafe names)."""
    reports: dict[str, str] = field(default_factory=dict)
    """The reports written, by format ("json", "text"): the very text `netfab audit --format F` prints for
    this report (the same render), so the verb prints these instead of rendering a 10,000-device report twice."""


def write_audit_dir(report: AuditReport, out_dir: Path) -> AuditDir:
    """Write everything."""
    report.out_dir = str(out_dir)
    refused: list[str] = []
    with AtomicTree(out_dir) as tree:
        for dev in report.devices:
            if dev.status != "drift":
                continue
            try:
                base = safe_relpath(f"devices/{dev.device}")
                if len(base.parts) != 2:
                    raise UnsafePath(f"device name {dev.device!r} is not a single path component")
                diff = "\n\n".join(f"# {raw.kind}\n{raw.text}" for raw in dev.raw if raw.text.strip())
                tree.write(f"{base}/diff.txt", diff + "\n")
                for name, text in sorted(dev.remediation.items()):
                    tree.write(f"{base}/{safe_relpath(name)}", text)
            except UnsafePath:
                refused.append(dev.device)
        reports = {fmt: render(fmt, report) for fmt in ("json", "text")}
        tree.write("report.json", reports["json"])
        tree.write("report.txt", reports["text"])
    return AuditDir(refused, reports)
