"""EOS, NX-OS and Junos: hier_config remediation (running -> intended) and its unified diff.

The drivers carry netfab's idempotency rules (netfab.audit.hconfig), so a changed description, MTU or ECN
threshold is one line that replaces the old value, not a negation followed by the new line.
"""

from __future__ import annotations

from hier_config import WorkflowRemediation

from netfab.audit.facts.cli import CliConfig
from netfab.audit.model import RawDiff

_COMMENT = {"juniper_junos": "#"}
_FILE = {"juniper_junos": "remediation.set"}


def remediate(device: str, platform: str, running: CliConfig, intended: CliConfig) -> tuple[RawDiff, dict[str, str]]:
    diff = "\n".join(running.tree.unified_diff(intended.tree))
    workflow = WorkflowRemediation(running.tree, intended.tree)
    flat = platform == "juniper_junos"
    lines = list(workflow.remediation_config.lines(sectional_exiting=not flat))
    comment = _COMMENT.get(platform, "!")
    how = "load set / commit confirmed" if flat else "configure session, then commit timer"
    header = f"{comment} netfab audit: {device} running -> intended ({how})"
    text = "\n".join([header, *lines]) + "\n" if lines else ""
    return RawDiff("unified", diff), ({_FILE.get(platform, "remediation.cfg"): text} if text else {})
