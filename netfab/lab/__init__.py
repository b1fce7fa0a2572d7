"""The lab runtime: a fully resolved LabSpec made real as namespaces, FRR instances and sshd per switch.

Public API: up, down, status, wait_ready, exec, ssh_target, ssh_run, reload_frr, running_config,
preflight, probe_red_ecn; LabSpec and its parts; LabStatus; LabError.
"""

from netfab.lab.errors import LabError
from netfab.lab.lab import (
    down,
    exec,
    reload_frr,
    running_config,
    ssh_run,
    ssh_target,
    status,
    up,
    wait_ready,
)
from netfab.lab.probe import preflight, probe_red_ecn
from netfab.lab.spec import LabHost, LabHostInterface, LabLink, LabSpec, LabSwitch, spec_problems
from netfab.lab.status import BgpSession, LabStatus, SwitchStatus

__all__ = [
    "BgpSession",
    "LabError",
    "LabHost",
    "LabHostInterface",
    "LabLink",
    "LabSpec",
    "LabStatus",
    "LabSwitch",
    "SwitchStatus",
    "down",
    "exec",
    "preflight",
    "probe_red_ecn",
    "reload_frr",
    "running_config",
    "spec_problems",
    "ssh_run",
    "ssh_target",
    "status",
    "up",
    "wait_ready",
]
