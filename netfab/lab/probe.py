"""What this machine can do before anyone tries: missing tools, and kernel features that vary (RED/ECN)."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

from netfab.lab.frr import FRR_LIB, FRR_RELOAD
from netfab.lab.proc import in_netns, run
from netfab.lab.ssh import SSHD


def preflight() -> list[str]:
    """Plain sentences naming what is missing for a lab on this machine; empty means go."""
    missing = []
    if os.geteuid() != 0:
        missing.append("not running as root: network namespaces and FRR need root")
    for daemon in ("zebra", "bgpd", "staticd"):
        if not (FRR_LIB / daemon).exists():
            missing.append(f"no {FRR_LIB / daemon}: install FRR (apt-get install frr frr-pythontools)")
    if not FRR_RELOAD.exists():
        missing.append(f"no {FRR_RELOAD}: install frr-pythontools")
    if not Path(SSHD).exists():
        missing.append(f"no {SSHD}: install openssh-server")
    for tool in ("ip", "vtysh", "unshare", "sysctl", "nsenter"):
        if shutil.which(tool) is None:
            missing.append(f"no `{tool}` on PATH (iproute2 / util-linux / procps / frr)")
    return missing


def probe_red_ecn() -> bool:
    """Whether `tc qdisc ... red ... ecn` works on this kernel, tried on a veth in a throwaway namespace.

    Some kernels ship without sch_red (this project's VMs do); callers then mark ECN with nftables instead.
    """
    ns = f"nfprobe-{uuid.uuid4().hex[:8]}"
    if run(["ip", "netns", "add", ns], check=False).returncode != 0:
        return False
    try:
        made = run(["ip", "-n", ns, "link", "add", "p0", "type", "veth", "peer", "name", "p1"], check=False)
        if made.returncode != 0:
            return False
        red = [
            "tc",
            "qdisc",
            "add",
            "dev",
            "p0",
            "root",
            "red",
            "limit",
            "400000",
            "min",
            "30000",
            "max",
            "90000",
            "avpkt",
            "1000",
            "burst",
            "55",
            "probability",
            "0.1",
            "bandwidth",
            "10mbit",
            "ecn",
        ]
        return run(in_netns(ns, red), check=False).returncode == 0
    finally:
        run(["ip", "netns", "del", ns], check=False)
