"""Per-platform parsers of running AND intended configs into facts, and how a platform's files split into parts.

A platform's build output is one or more files (templates/<platform>/outputs.yaml); each is a *part* with its
own parser. The frr platform's Linux script is compared against the kernel state rather than a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Literal

from netfab.audit import textconfig
from netfab.audit.facts import (
    arista_eos,
    cisco_nxos,
    frr,
    juniper_junos,
    linux,
    nvidia_cumulus,
    sonic,
)
from netfab.audit.textconfig import Dialect


@dataclass(frozen=True)
class Part:
    suffix: str
    """The build file's suffix after the device name: ".cfg", ".frr.conf", ".sh"."""
    kind: Literal["cli", "json", "kernel"]
    module: ModuleType
    dialect: Dialect | None = None
    driver: str = ""
    """hier_config driver key for CLI parts."""
    prefix: str = ""
    """Prepended to the part's fact paths where two parts would otherwise share names (SONiC's FRR)."""


PARTS: dict[str, tuple[Part, ...]] = {
    "arista_eos": (Part(".cfg", "cli", arista_eos, textconfig.EOS, "arista_eos"),),
    "cisco_nxos": (Part(".cfg", "cli", cisco_nxos, textconfig.NXOS, "cisco_nxos"),),
    "juniper_junos": (Part(".set", "cli", juniper_junos, textconfig.JUNOS, "juniper_junos"),),
    "frr": (Part(".conf", "cli", frr, textconfig.FRR, "frr"), Part(".sh", "kernel", linux)),
    "sonic": (Part(".json", "json", sonic), Part(".frr.conf", "cli", frr, textconfig.FRR, "frr", prefix="frr.")),
    "nvidia_cumulus": (Part(".yaml", "json", nvidia_cumulus),),
}

KERNEL_STATE_SUFFIX = ".state.json"
"""Offline, the frr platform's kernel state is saved beside its config as <device>.state.json."""


def parts_of(platform: str) -> tuple[Part, ...]:
    try:
        return PARTS[platform]
    except KeyError:
        raise KeyError(f"the audit has no parser for platform {platform!r}; have {sorted(PARTS)}") from None


def primary_suffix(platform: str) -> str:
    return parts_of(platform)[0].suffix
