"""Which two NICs the check's flows run between."""

from __future__ import annotations

from netfab.analyze.labcheck.options import Endpoint, LabCheckError
from netfab.design.plan import FabricPlan, NicPlan


def endpoints(plan: FabricPlan, src: str | None = None, dst: str | None = None) -> tuple[Endpoint, Endpoint]:
    """The source and destination NICs: given as host:nic, or the first server's first NIC and the first NIC
    on another leaf (same NIC name preferred, so the host's rail route carries it)."""
    nics = [(s.name, n) for s in plan.servers for n in s.nics]

    def find(spec: str) -> tuple[str, NicPlan]:
        host, _, nic = spec.partition(":")
        for h, n in nics:
            if h == host and (n.netdev == nic or (not nic and n.index == 0)):
                return h, n
        raise LabCheckError(f"{spec}: no such host:nic in fabric {plan.name}")

    if not nics:
        raise LabCheckError(f"fabric {plan.name} has no servers")
    s_host, s_nic = find(src) if src else nics[0]
    if dst:
        d_host, d_nic = find(dst)
    else:
        remote = [(h, n) for h, n in nics if n.leaf != s_nic.leaf]
        if not remote:
            raise LabCheckError(f"fabric {plan.name}: every NIC hangs off {s_nic.leaf}; no flow crosses an uplink")
        d_host, d_nic = next(((h, n) for h, n in remote if n.netdev == s_nic.netdev), remote[0])
    if s_nic.leaf == d_nic.leaf:
        raise LabCheckError(f"{s_host}:{s_nic.netdev} and {d_host}:{d_nic.netdev} share {s_nic.leaf}: no uplink")

    def ep(h: str, n: NicPlan) -> Endpoint:
        return Endpoint(h, n.netdev, n.address.split("/", 1)[0], n.leaf, n.leaf_port)

    return ep(s_host, s_nic), ep(d_host, d_nic)
