"""EOS, NX-OS and Junos: hier_config remediation (running -> intended) and its unified diff.

The drivers carry netfab's idempotency rules (netfab.audit.hconfig), so a changed description, MTU or ECN
threshold is one line that replaces the old value, not a negation followed by the new line.
"""

from __future__ import annotations

from hier_config import WorkflowRemediation

from netfab.audit.facts.cli import CliConfig
from netfab.audit.model import RawDiff
from netfab.platforms.model import Dialect


def remediate(
    device: str, suffix: str, dialect: Dialect | None, running: CliConfig, intended: CliConfig
) -> tuple[RawDiff, dict[str, str]]:
    """`suffix` is the part's (".cfg", ".set"): the remediation file has it too; the dialect says whether the
    text is set form and how its comments start."""
    assert dialect is not None
    diff = "\n".join(running.tree.unified_diff(intended.tree))
    workflow = WorkflowRemediation(running.tree, intended.tree)
    flat = dialect.flat
    lines = list(workflow.remediation_config.lines(sectional_exiting=not flat))
    how = "load set / commit confirmed" if flat else "configure session, then commit timer"
    header = f"{dialect.comment[0]} netfab audit: {device} running -> intended ({how})"
    text = "\n".join([header, *lines]) + "\n" if lines else ""
    return RawDiff("unified", diff), ({f"remediation{suffix}": text} if text else {})
