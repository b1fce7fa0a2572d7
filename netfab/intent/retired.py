"""Intent fields netfab no longer accepts, and what to tell a user whose file still sets one.

A retired field is refused (rule SCHEMA-removed, at the key's file:line:col) rather than ignored: a setting
that silently does nothing is worse than an error, because the user believes it took effect.
"""

from __future__ import annotations

from dataclasses import replace

from netfab.core.findings import Finding

REMOVED_RULE_ID = "SCHEMA-removed"

RETIRED_FIELDS: dict[str, str] = {
    "topology.servers.nic_model": (
        "nothing read it: every server got the same ConnectX host script whatever model it named. "
        "Delete the line; NIC and switch models return as typed hardware data that changes what is rendered"
    ),
}
"""Dotted intent path -> why it went and what to do instead."""


def retired_finding(finding: Finding) -> Finding:
    """An unknown-field finding on a retired field, reworded as a migration error (other findings unchanged)."""
    why = RETIRED_FIELDS.get(finding.path or "") if finding.rule_id == "SCHEMA-extra" else None
    if why is None:
        return finding
    reason, _, todo = why.partition(". ")
    return replace(
        finding,
        rule_id=REMOVED_RULE_ID,
        message=f"{finding.path}: no longer part of the intent ({reason})",
        hint=todo or "delete the line",
    )
