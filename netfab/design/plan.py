"""The fabric plan and the per-device IR (DevicePlan) that every renderer reads.

Plain slotted dataclasses, not pydantic: a 24k-GPU fabric has ~80,000 interfaces and the intent is already
validated; re-validating each derived object would dominate build time (see reference/INTEGRATION.md).
Fabric-wide facts (QosPlan, the DSCP map, hashing) are computed once and shared by reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from netfab.platforms.hardware import SwitchModel

Role = Literal["leaf", "spine", "superspine"]
LinkTier = Literal["host", "leaf_spine", "spine_superspine"]
PortRole = Literal["host", "fabric_down", "fabric_up"]


@dataclass(slots=True)
class AddressLedger:
    """What one pool handed out, by index (design/addressing.py PoolText): `hosts` for host(i), the address
    base + i + 1; `pairs` for p2p(i), the /31 at base + 2i. Every address in a plan comes from a pool, so the
    ledgers let PLAN005 prove a 420,000-address plan duplicate-free from integers instead of strings."""

    pool: str
    base: int
    hosts: list[int] = field(default_factory=list)
    pairs: list[int] = field(default_factory=list)


@dataclass(slots=True, frozen=True)
class EcnPlan:
    kmin_bytes: int
    kmax_bytes: int
    pmax_percent: float
    weight: int


@dataclass(slots=True, frozen=True)
class QueuePlan:
    """One egress queue. netfab keeps priority == traffic class == queue, the convention every platform
    in scope defaults to, so one number names all three."""

    queue: int
    class_name: str
    kind: str
    dscp: tuple[int, ...]
    lossless: bool
    scheduling: Literal["strict", "dwrr"]
    weight: float | None
    ecn: EcnPlan | None
    max_rate_percent: float | None = None
    """Strict queues only: the shaper's cap in percent of the port speed; None = unshaped."""


@dataclass(slots=True, frozen=True)
class WatchdogPlan:
    detect_us: int
    restore_us: int
    polling_us: int
    action: str


@dataclass(slots=True, frozen=True)
class QosPlan:
    trust: str
    dscp_to_queue: dict[int, int]
    """Every DSCP 0-63 mapped; unlisted DSCPs go to the default class's queue."""
    queues: tuple[QueuePlan, ...]
    pfc_priorities: tuple[int, ...]
    watchdog: WatchdogPlan | None
    headroom: Literal["auto"] | int

    @property
    def lossless_queues(self) -> tuple[QueuePlan, ...]:
        return tuple(q for q in self.queues if q.lossless)

    @property
    def cnp_queue(self) -> QueuePlan | None:
        return next((q for q in self.queues if q.kind == "cnp"), None)

    @property
    def roce_queue(self) -> QueuePlan | None:
        return next((q for q in self.queues if q.kind == "roce"), None)

    def dscps_of(self, queue: int) -> tuple[int, ...]:
        return tuple(d for d, q in sorted(self.dscp_to_queue.items()) if q == queue)


@dataclass(slots=True, frozen=True)
class HashPlan:
    fields: tuple[str, ...]
    adaptive_routing: bool
    packet_spraying: bool
    qps_per_gpu_pair: int
    seed: int | None
    """The intent's seed, or None: then each device derives its own (DevicePlan.hash_seed)."""


@dataclass(slots=True, frozen=True)
class NicCongestionPlan:
    trust: str
    pfc_vector: tuple[int, ...]
    """8 entries, 1 = PFC on that priority (mlnx_qos --pfc order)."""
    roce_dscp: int
    roce_priority: int
    roce_mtu: int
    cnp_dscp: int
    cnp_priority: int
    dcqcn_enabled: bool
    dcqcn_priorities: tuple[int, ...]
    rp: dict[str, int]
    np: dict[str, int]
    dscp_to_priority: dict[int, int]
    tsa: tuple[str, ...]
    """Per traffic class: 'strict' or 'ets' (mlnx_qos -s)."""
    tc_bw: tuple[int, ...]
    """Per traffic class ETS share; sums to 100 over ETS classes."""
    host_mtu: int = 4200
    """Netdev MTU of this network's NICs: the intent's nic.mtu, else the RoCE path MTU plus RoCEv2 headers."""
    rdma: bool = True
    """The network carries RoCE (it has a roce class): QoS, DCQCN and the RoCE traffic class are set."""


@dataclass(slots=True)
class InterfacePlan:
    name: str
    port: int
    role: PortRole
    peer_device: str
    peer_port: str
    speed_gbps: int
    mtu: int
    cable_m: float
    rail: int | None = None
    address: str | None = None
    """CIDR on this end, e.g. '10.64.0.0/31' (host links, and fabric links with p2p31)."""
    peer_address: str | None = None
    bgp_peer_asn: int | None = None
    """Set when a BGP session runs over this interface (fabric links)."""
    lossless: bool = True
    headroom_bytes: int = 0

    @property
    def description(self) -> str:
        return f"{self.role}: {self.peer_device} {self.peer_port}"


@dataclass(slots=True, frozen=True)
class BgpNeighborPlan:
    interface: str
    peer_device: str
    remote_as: int
    address: str | None
    """None for unnumbered (the session runs on the interface's IPv6 link-local)."""
    peer_group: str


_NEIGHBOR_FIELDS = ("interface", "peer_device", "remote_as", "address", "peer_group")
if tuple(f.name for f in fields(BgpNeighborPlan)) != _NEIGHBOR_FIELDS:
    raise TypeError("bgp_neighbor() stores BgpNeighborPlan's fields by name: give it the new ones")
_new = object.__new__
_store = {name: vars(BgpNeighborPlan)[name].__set__ for name in _NEIGHBOR_FIELDS}
_set_interface, _set_peer_device, _set_remote_as, _set_address, _set_peer_group = _store.values()


def bgp_neighbor(
    interface: str, peer_device: str, remote_as: int, address: str | None, peer_group: str
) -> BgpNeighborPlan:
    """BgpNeighborPlan(interface, peer_device, remote_as, address, peer_group), the same frozen record, built
    by storing each field through its slot: the frozen class's own __init__ stores each through
    object.__setattr__, ~1.1 us per neighbour on the shared 2-core box against ~0.7 us, and a 100k-GPU build
    makes 421,888 of them. Nothing else runs in that __init__ (no defaults, no __post_init__)."""
    plan: BgpNeighborPlan = _new(BgpNeighborPlan)
    _set_interface(plan, interface)
    _set_peer_device(plan, peer_device)
    _set_remote_as(plan, remote_as)
    _set_address(plan, address)
    _set_peer_group(plan, peer_group)
    return plan


@dataclass(slots=True)
class BgpPlan:
    asn: int
    router_id: str
    unnumbered: bool
    max_paths: int
    bfd: bool
    neighbors: list[BgpNeighborPlan]
    networks: list[str]


@dataclass(slots=True, frozen=True)
class BgpSettings:
    """The underlay's BGP settings, one shared record per network: with a DevicePlan's own fields, all that
    its BgpPlan is made of (bgp_sessions)."""

    unnumbered: bool
    max_paths: int
    bfd: bool


@dataclass(slots=True)
class DevicePlan:
    """Everything a template needs to render one switch, in vendor-neutral terms."""

    fabric: str
    name: str
    role: Role
    platform: str
    os_version: str | None
    index: int
    """1-based position within its role, in design order (stable under growth)."""
    loopback: str
    asn: int
    mgmt_ip: str
    mtu: int
    qos: QosPlan
    hashing: HashPlan
    hash_seed: int
    interfaces: list[InterfacePlan] = field(default_factory=list)
    bgp: BgpPlan | None = None
    su: int | None = None
    pod: int | None = None
    rack: int | None = None
    rail: int | None = None
    plane: int | None = None
    switch_model: SwitchModel | None = None
    """The tier's switch model (netfab.intent.hardware.tier_switch_model; one shared object per tier), or
    None when the intent names none: hardware-dependent output reads this, never a guess."""
    routing: BgpSettings | None = None
    """Set by the design: then `bgp`, when the design left it None, is bgp_sessions(self), derived where it
    is read (netfab.render.device); None for a plan made by hand, whose `bgp` is what it is."""

    def interfaces_by_role(self, role: PortRole) -> list[InterfacePlan]:
        return [i for i in self.interfaces if i.role == role]


def sessions_of(dev: DevicePlan) -> BgpPlan | None:
    """The device's BGP: as designed, else derived (bgp_sessions) when the design left it out; None only for
    a plan made by hand without one."""
    if dev.bgp is not None or dev.routing is None:
        return dev.bgp
    return bgp_sessions(dev)


def bgp_sessions(dev: DevicePlan) -> BgpPlan:
    """The device's BGP: a session on every interface with a peer ASN, its loopback and its host links'
    networks announced. A function of the DevicePlan alone (its interfaces as the design finished them and its
    `routing`), so a build digests the plan without it and derives it only for the switches it renders:
    ~420,000 sessions at 100k GPUs, ~20 % of the design."""
    if dev.routing is None:
        raise ValueError(f"{dev.name}: no BGP settings in its plan to derive its sessions from")
    unnumbered = dev.routing.unnumbered
    # bgp_neighbor: BgpNeighborPlan at ~60 % of its constructor's cost.
    neighbors = [
        bgp_neighbor(i.name, i.peer_device, i.bgp_peer_asn, None if unnumbered else i.peer_address, "fabric")
        for i in dev.interfaces
        if i.bgp_peer_asn is not None
    ]
    networks = [f"{dev.loopback}/32"]
    # A host link's /31 network address is the leaf's own (even) address.
    networks += [i.address for i in dev.interfaces if i.role == "host" and i.address is not None]
    return BgpPlan(
        asn=dev.asn,
        router_id=dev.loopback,
        unnumbered=unnumbered,
        max_paths=dev.routing.max_paths,
        bfd=dev.routing.bfd,
        neighbors=neighbors,
        networks=networks,
    )


# LinkPlan and NicPlan are not frozen (unsafe_hash keeps the equality and hash a frozen one has): a frozen
# dataclass stores every field through object.__setattr__, 2-5x the cost of a plain slot store on the shared
# 2-core box (LinkPlan 3.3-8.3 us vs 1.1-1.5 us), and a 100k-GPU design builds 210,944 cables and 98,304 NICs.
# Nothing assigns to them after the design (mypy --strict checked that while they were frozen).
@dataclass(slots=True, unsafe_hash=True)
class LinkPlan:
    """One cable, always written upper tier first (spine before leaf, leaf before server)."""

    a_device: str
    a_port: str
    b_device: str
    b_port: str
    tier: LinkTier
    speed_gbps: int
    cable_m: float
    rail: int | None
    a_address: str | None = None
    b_address: str | None = None


@dataclass(slots=True, unsafe_hash=True)  # not frozen: see LinkPlan
class NicPlan:
    index: int
    """0-based NIC (port) number of the server on this network."""
    netdev: str
    rdma_device: str | None
    """None for a port without RDMA (an OOB BMC port)."""
    rail: int | None
    leaf: str
    leaf_port: str
    address: str
    gateway: str
    routes: tuple[str, ...]
    slot: int = -1
    """Position of the port in the server profile, unique across the server's networks: it numbers the
    port's routing table and rule (100 + slot), so two networks' scripts never share one. -1 = index."""
    plane: int | None = None
    pci: str | None = None

    @property
    def table(self) -> int:
        return 100 + (self.slot if self.slot >= 0 else self.index)


@dataclass(slots=True)
class ServerPlan:
    name: str
    index: int
    su: int | None
    pod: int | None
    rack: int | None
    nics: list[NicPlan]
    congestion: NicCongestionPlan
    network: str = "backend"
    kind: str = "backend"
    profile: str = "generic"


@dataclass(frozen=True, slots=True)
class EnvVar:
    name: str
    value: str
    why: str
    """One line a reader can check: what in the intent gives this value, and the doc that defines it."""


@dataclass(frozen=True, slots=True)
class FirmwarePort:
    """One RDMA port's mlxconfig settings (the device is given by PCI address, or found from the netdev)."""

    netdev: str
    pci: str | None
    port: int
    """1 or 2: the _P<n> suffix of the mlxconfig parameter names."""
    settings: tuple[tuple[str, str], ...]


@dataclass(slots=True)
class HostEnv:
    """One file set: a server profile (`scope` = the profile) or one overridden server (`scope` = its name)."""

    scope: str
    nccl: list[EnvVar] = field(default_factory=list)
    firmware: list[FirmwarePort] = field(default_factory=list)


@dataclass(slots=True)
class FabricPlan:
    """One network of the cluster: its switches, cables and the servers' ports on it."""

    name: str
    style: str
    devices: dict[str, DevicePlan]
    links: list[LinkPlan]
    servers: list[ServerPlan]
    qos: QosPlan
    hashing: HashPlan
    nic: NicCongestionPlan
    network: str = "backend"
    kind: str = "backend"
    host_env: list[HostEnv] = field(default_factory=list)
    """The back end's NCCL/RCCL environment and NIC firmware settings, per server profile (design/hostenv.py)."""
    addresses: list[AddressLedger] = field(default_factory=list)
    """Every pool's ledger, from the design; empty for a plan made any other way (PLAN005 then reads strings)."""

    def devices_of(self, role: Role) -> list[DevicePlan]:
        return [d for d in self.devices.values() if d.role == role]
