"""What the audit must not report: sections an operator owns by hand, and device-owned JSON leaves.

The audit runbook (playbooks/audit.yaml) declares them:

    unmanaged:                      # line prefixes of CLI/FRR configs (EOS, NX-OS, Junos, FRR)
      - "snmp-server "
    exclude:                        # JSON pointers per platform; '*' matches one path segment
      sonic: ["/DEVICE_METADATA/localhost/mac"]
      nvidia_cumulus: ["/system/timezone"]

A line that starts with an unmanaged prefix is dropped with everything nested under it, on both sides, so it
is neither drift nor part of a remediation. Junos lines match with or without their leading "set ".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class AuditPlaybook(BaseModel):
    """playbooks/audit.yaml."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "drift-audit"
    parallelism: int = Field(default=32, ge=1, le=1000)
    """Devices collected at once (online)."""
    unmanaged: list[str] = Field(default_factory=list)
    exclude: dict[str, list[str]] = Field(default_factory=dict)
    deploy_playbook: str | None = None
    """Staging playbook for --remediate (default: playbooks/deploy.yaml)."""


def load_audit_playbook(path: Path) -> AuditPlaybook:
    """Raises DocumentError (a ValueError) with file:line findings; bounded like an intent."""
    from netfab.load.document import load_model

    return load_model(path, AuditPlaybook, "audit runbook")


def _excludes(extra: dict[str, list[str]]) -> dict[str, tuple[tuple[str, ...], ...]]:
    """The runbook's pointers plus each platform record's audit_excludes: leaves the device owns and netfab
    never renders (kept short: everything else netfab renders is compared)."""
    from netfab.platforms import registry

    builtin = {name: spec.audit_excludes for name, spec in registry().specs.items() if spec.audit_excludes}
    return {
        platform: tuple(split_pointer(p) for p in (*builtin.get(platform, ()), *extra.get(platform, [])))
        for platform in set(builtin) | set(extra)
    }


@dataclass(frozen=True)
class AuditRules:
    unmanaged: tuple[str, ...] = ()
    excludes: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=lambda: _excludes({}))
    """Per platform: pointers split into segments ('*' = any one segment); the built-ins always apply."""

    @classmethod
    def from_playbook(cls, book: AuditPlaybook | None) -> AuditRules:
        if book is None:
            return cls()
        return cls(tuple(p for p in book.unmanaged if p.strip()), _excludes(book.exclude))

    def line_unmanaged(self, stripped: str) -> bool:
        if not self.unmanaged:
            return False
        bare = stripped[4:] if stripped.startswith("set ") else stripped
        return stripped.startswith(self.unmanaged) or bare.startswith(self.unmanaged)

    def pointer_excluded(self, platform: str, segments: tuple[str, ...]) -> bool:
        for rule in self.excludes.get(platform, ()):
            if len(segments) >= len(rule) and all(r in ("*", s) for r, s in zip(rule, segments, strict=False)):
                return True
        return False


def split_pointer(pointer: str) -> tuple[str, ...]:
    """RFC 6901: '/a/b~1c' -> ('a', 'b/c')."""
    if not pointer.startswith("/"):
        raise ValueError(f"JSON pointer {pointer!r} must start with '/'")
    return tuple(p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/"))


def join_pointer(segments: tuple[str, ...] | list[str]) -> str:
    return "".join("/" + str(s).replace("~", "~0").replace("/", "~1") for s in segments)
