"""What the GPU servers' software must be told about the fabric: the NCCL/RCCL environment and the NIC firmware
(mlxconfig) settings, per server profile (and per overridden server).

Every NCCL variable is derived from the intent and checked against NCCL's documentation (Environment
Variables, https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html) and, for defaults, NCCL's
source (src/transport/net_ib/connect.cc, v2.31.2-1: IB_GID_INDEX -1, IB_ROCE_VERSION_NUM 2, IB_TC -1).
RCCL reads the same NCCL_* names (RCCL environment variables, rocm.docs.amd.com; config file /etc/rccl.conf).
"""

from __future__ import annotations

from netfab.design.plan import EnvVar, FabricPlan, FirmwarePort, HostEnv
from netfab.design.server_nics import Port, ServerPorts
from netfab.intent import Intent
from netfab.intent.servers import NetworkKind

_NCCL_DOC = "NCCL env docs"


def _nic_port(port: Port) -> int:
    # The second port of a dual-port card is PCI function 1 (the DGX storage cards: 29:00.0 and 29:00.1).
    return 2 if port.pci is not None and port.pci.endswith(".1") else 1


def host_envs(root: Intent, backend: FabricPlan) -> list[HostEnv]:
    """One HostEnv per profile in use, plus one per server whose override changes its names."""
    frontend = next((n for n in root.network_views() if n.kind == "frontend"), None)
    fe_ports = ServerPorts(root, frontend.name, "frontend") if frontend is not None else None
    rdma_networks = [
        (view.name, view.kind, ServerPorts(root, view.name, view.kind))
        for view in root.network_views()
        if view.intent.qos.class_of_kind("roce") is not None
    ]
    envs: list[HostEnv] = []
    seen_profiles: set[str] = set()
    for server in backend.servers:
        overridden = server.name in root.servers.overrides
        scope = server.name if overridden else server.profile
        if not overridden:
            if scope in seen_profiles:
                continue
            seen_profiles.add(scope)
        envs.append(_env(root, backend, scope, server.name, fe_ports, rdma_networks))
    return envs


def _env(
    root: Intent,
    backend: FabricPlan,
    scope: str,
    server: str,
    fe_ports: ServerPorts | None,
    rdma_networks: list[tuple[str, NetworkKind, ServerPorts]],
) -> HostEnv:
    nic = backend.nic
    env = HostEnv(scope)
    ports = ServerPorts(root, "backend", "backend").ports(server)
    hcas = [p.rdma_device for p in ports if p.rdma_device]
    add = env.nccl.append
    add(EnvVar(
        "NCCL_IB_HCA", "=" + ",".join(f"{h}:1" for h in hcas),
        f"the back end's RDMA ports in rail order; '=' makes the names exact, ':1' the port ({_NCCL_DOC}: "
        "NCCL_IB_HCA)",
    ))  # fmt: skip
    if nic.rdma:
        add(EnvVar(
            "NCCL_IB_TC", str(nic.roce_dscp * 4),
            f"RoCE DSCP {nic.roce_dscp} x 4: the IP ToS byte (DSCP in the upper six bits; the NIC sets the ECN bits "
            f"itself on priorities with congestion control). Default -1 sends DSCP 0, the lossy class "
            f"({_NCCL_DOC}: NCCL_IB_TC)",
        ))  # fmt: skip
        gid = root.servers.nccl.gid_index
        add(EnvVar(
            "NCCL_IB_GID_INDEX", str(gid if gid is not None else -1),
            "servers.nccl.gid_index" if gid is not None else
            f"-1: NCCL picks the RoCE v2 GID of the address family below (NCCL >= 2.21; {_NCCL_DOC}: "
            "NCCL_IB_GID_INDEX); older NCCL needs the index, usually 3 (servers.nccl.gid_index)",
        ))  # fmt: skip
        add(EnvVar(
            "NCCL_IB_ROCE_VERSION_NUM", "2",
            f"RoCE v2 (routed, UDP 4791): the only mode an L3 leaf/spine carries ({_NCCL_DOC}: "
            "NCCL_IB_ROCE_VERSION_NUM)",
        ))  # fmt: skip
        add(EnvVar(
            "NCCL_IB_ADDR_FAMILY", "AF_INET",
            f"the NICs are addressed with IPv4 /31s (underlay.hosts) ({_NCCL_DOC}: NCCL_IB_ADDR_FAMILY)",
        ))  # fmt: skip
    add(EnvVar(
        "NCCL_IB_QPS_PER_CONNECTION", str(backend.hashing.qps_per_gpu_pair),
        f"load_balancing.qps_per_gpu_pair: QPs per connection spread a GPU pair over ECMP paths ({_NCCL_DOC}: "
        "NCCL_IB_QPS_PER_CONNECTION)",
    ))  # fmt: skip
    if backend.style == "rail_optimized":
        add(EnvVar(
            "NCCL_CROSS_NIC", "0",
            f"rail-optimized back end: keep each ring/tree on the same NIC index so traffic stays on its rail "
            f"({_NCCL_DOC}: NCCL_CROSS_NIC, 'suited for networks with per NIC switches (rails)')",
        ))  # fmt: skip
    if backend.hashing.adaptive_routing or backend.hashing.packet_spraying:
        add(EnvVar(
            "NCCL_IB_ADAPTIVE_ROUTING", "1",
            f"the switches spray or adaptively route (load_balancing), so one QP's packets arrive out of order; "
            f"NCCL then asks for adaptive-routing-capable transfers on its QPs (default 0 on RoCE; {_NCCL_DOC}: "
            f"NCCL_IB_ADAPTIVE_ROUTING). The receiving NIC places them out of order per QP (ConnectX-5 and "
            f"later, RC QPs: MLNX_OFED/DOCA 'Out-of-Order (OOO) Data Placement'), a per-QP choice of the "
            f"application with no NIC-wide switch for the host script to set",
        ))  # fmt: skip
    if fe_ports is not None:
        names = [p.netdev for p in fe_ports.ports(server)]
        add(EnvVar(
            "NCCL_SOCKET_IFNAME", "=" + ",".join(names),
            f"the front-end network's ports: bootstrap and socket traffic stay off the back end ({_NCCL_DOC}: "
            "NCCL_SOCKET_IFNAME, '=' for exact names)",
        ))  # fmt: skip
    for name, value in sorted(root.servers.nccl.extra.items()):
        add(EnvVar(name, value, "servers.nccl.extra"))
    _firmware(env, server, rdma_networks, root)
    return env


def _firmware(
    env: HostEnv, server: str, rdma_networks: list[tuple[str, NetworkKind, ServerPorts]], root: Intent
) -> None:
    # mlxconfig parameter names [S]: LINK_TYPE_P<n> (NVIDIA MFT / DGX BasePOD guide: 1 = InfiniBand, 2 =
    # Ethernet; ConnectX-7 VPI ports come up InfiniBand), ROCE_CC_PRIO_MASK_P<n>, CNP_DSCP_P<n>,
    # CNP_802P_PRIO_P<n> (NVIDIA's RoCE congestion-control firmware parameters). The script queries each name
    # first and refuses one the firmware does not know.
    for name, _kind, resolver in rdma_networks:
        nic = root.network_view(name).intent.nic
        qos = root.network_view(name).intent.qos
        priorities = nic.dcqcn.priorities if nic.dcqcn.priorities is not None else qos.pfc_priorities
        mask = sum(1 << p for p in priorities) if nic.dcqcn.enabled else 0
        for port in resolver.ports(server):
            if port.rdma_device is None:
                continue
            n = _nic_port(port)
            env.firmware.append(
                FirmwarePort(
                    port.netdev,
                    port.pci,
                    n,
                    (
                        (f"LINK_TYPE_P{n}", "2"),
                        (f"ROCE_CC_PRIO_MASK_P{n}", str(mask)),
                        (f"CNP_DSCP_P{n}", str(nic.dcqcn.np.cnp_dscp)),
                        (f"CNP_802P_PRIO_P{n}", str(nic.dcqcn.np.cnp_priority)),
                    ),
                )
            )
