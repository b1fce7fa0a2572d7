"""Expand the intent's topology into devices, cables, servers and addresses.

Every name, port, address and ASN is a pure function of stable coordinates (SU/rail, pod/rack, spine
number) and a per-role index in design order, and every per-role order appends when the fabric grows
(a new SU or pod only adds at the end). That is what keeps existing devices untouched by growth.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from ipaddress import IPv4Network
from math import ceil
from operator import attrgetter
from typing import TypeVar

from netfab.design.addressing import PoolExhausted, PoolText, split_blocks
from netfab.design.errors import DesignError
from netfab.design.facts import device_hash_seed, hash_plan, nic_plan, qos_plan
from netfab.design.hostenv import host_envs
from netfab.design.naming import MissingPlaceholder, Namer, UnsafeName
from netfab.design.plan import (
    AddressLedger,
    BgpSettings,
    DevicePlan,
    FabricPlan,
    InterfacePlan,
    LinkPlan,
    LinkTier,
    NicPlan,
    Role,
    ServerPlan,
    bgp_sessions,
)
from netfab.design.ports import PortOutOfRange, port_namer
from netfab.design.server_nics import BACKEND, NamesUnpublished, Port, ProfileShort, ServerPorts
from netfab.intent import Intent
from netfab.intent.hardware import tier_switch_model
from netfab.load.yamlsource import DataPath, dotted

_T = TypeVar("_T")

_ROLE_ORDER: tuple[Role, ...] = ("superspine", "spine", "leaf")
_by_port = attrgetter("port")


class _Expander:
    def __init__(
        self,
        intent: Intent,
        source_file: str,
        root: Intent | None = None,
        network: str = BACKEND,
        kind: str = BACKEND,
        server_names: list[str] | None = None,
        bgp: bool = True,
    ) -> None:
        self.intent = intent
        self.bgp = bgp
        self.network = network
        self.kind = kind
        # Another network's servers are the back end's: server i there is server i here, by name.
        self.server_names = server_names
        self.ports = ServerPorts(root or intent, network, kind)
        self.t = intent.topology
        self.u = intent.underlay
        self.namer = Namer(intent)
        self.qos = qos_plan(intent)
        self.hashing = hash_plan(intent)
        self.nic = nic_plan(intent, self.qos)
        self.devices: dict[str, DevicePlan] = {}
        self.links: list[LinkPlan] = []
        self._port_namers: dict[tuple[str, int], Callable[[int], str]] = {}
        self._port_names: dict[tuple[str, int], dict[int, str]] = {}
        # Keyed by id(): IPv4Network.__hash__ is computed on every call. Each PoolText holds its network, so an
        # id is only ever matched to the object it was taken from.
        self._pools: dict[int, PoolText] = {}
        self._prefixes: dict[int, str] = {}
        self._ledgers: list[AddressLedger] = []
        self._groups: dict[int, tuple[list[DevicePlan], list[dict[int, str]]]] = {}
        self.servers: list[ServerPlan] = []
        self.source_file = source_file
        self.mgmt_blocks = dict(zip(_ROLE_ORDER, split_blocks(intent.management.subnet, 4), strict=False))
        self.unnumbered = self.u.addressing == "unnumbered"
        self.routing = BgpSettings(self.unnumbered, self.u.max_paths, self.u.bfd)
        # Every fabric and host port carries the lossless classes, if the fabric has any.
        self.lossless = bool(self.qos.pfc_priorities)
        self.mtu = self.u.mtu
        self.cables = bool(self.t.cables)
        # One switch model per tier (the tier's, shared): looked up once per role, not per device.
        self._models = {role: tier_switch_model(tier) for role in _ROLE_ORDER if (tier := getattr(self.t, role))}

    # --- devices -------------------------------------------------------------------------------------
    def add_device(self, role: Role, index: int, asn: int, **coords: int | None) -> DevicePlan:
        tier = getattr(self.t, role)
        name_coords = dict(coords)
        if role == "spine" and self.t.has_pods:
            name_coords["index"] = coords.get("spine_in_pod")
        else:
            name_coords["index"] = index
        name_coords.pop("spine_in_pod", None)
        name = self.namer.name(role, **name_coords)
        if name in self.devices:
            raise DesignError(
                "DESIGN001",
                f"{role} name template gives '{name}' to two devices",
                ("naming", role),
                hint=f"add a placeholder that differs between them to naming.{role}, e.g. {{index}}",
                source_file=self.source_file,
            )
        pool = self._pool(getattr(self.u.loopbacks, role))
        loopback = self._alloc(lambda: pool.host(index - 1, f"{role} loopbacks"), ("underlay", "loopbacks", role))
        mgmt_pool = self._pool(self.mgmt_blocks[role])
        mgmt = self._alloc(lambda: mgmt_pool.host(index - 1, f"{role} management addresses"), ("management", "subnet"))
        plan = DevicePlan(
            fabric=self.intent.fabric.name,
            name=name,
            role=role,
            platform=str(tier.platform),
            os_version=tier.os_version,
            index=index,
            loopback=loopback,
            asn=asn,
            mgmt_ip=mgmt,
            mtu=self.u.mtu,
            qos=self.qos,
            hashing=self.hashing,
            hash_seed=device_hash_seed(self.hashing, name),
            su=coords.get("su"),
            pod=coords.get("pod"),
            rack=coords.get("rack"),
            rail=coords.get("rail"),
            plane=coords.get("plane"),
            switch_model=self._models[role],
            routing=self.routing,
        )
        self.devices[name] = plan
        return plan

    def _alloc(self, fn: Callable[[], _T], path: DataPath) -> _T:
        try:
            return fn()
        except PoolExhausted as exc:
            raise self._exhausted(exc, path) from None

    def _exhausted(self, exc: PoolExhausted, path: DataPath) -> DesignError:
        return DesignError(
            "DESIGN002", str(exc), path, hint=f"give {dotted(path)} a larger prefix", source_file=self.source_file
        )

    def _pool(self, pool: IPv4Network) -> PoolText:
        text = self._pools.get(id(pool))
        if text is None or text.pool is not pool:
            text = self._pools[id(pool)] = PoolText(pool, self._prefixes)
            self._ledgers.append(text.ledger)  # kept here too: an id reused by a later network replaces its entry
        return text

    def _port_names_of(self, dev: DevicePlan) -> dict[int, str]:
        """The memo of `dev`'s port names, for loops that name many ports of one device:
        `names.get(port) or self._port_name(dev, port)`."""
        key = (dev.platform, id(dev.switch_model))
        names = self._port_names.get(key)
        if names is None:
            names = self._port_names[key] = {}
            self._port_namers[key] = port_namer(dev.platform, dev.switch_model)
        return names

    def _group_port_names(self, group: list[DevicePlan]) -> list[dict[int, str]]:
        """_port_names_of for each device of `group`, once per group: a pod's spines serve each of its 192
        leaves. The groups are lists the expander built and never changes afterwards (by_plane, spine_groups)."""
        hit = self._groups.get(id(group))
        if hit is None or hit[0] is not group:
            hit = self._groups[id(group)] = (group, [self._port_names_of(d) for d in group])
        return hit[1]

    def _port_name(self, dev: DevicePlan, port: int) -> str:
        # Memoised per (platform, model, port): a 100k-GPU fabric names ~320,000 link ends from a few hundred
        # ports, and str.format per end was ~0.3 s of every design. One namer per (platform, model): a SONiC
        # hwsku names its own ports.
        names = self._port_names_of(dev)
        name = names.get(port)
        if name is None:
            try:
                name = names[port] = self._port_namers[(dev.platform, id(dev.switch_model))](port)
            except PortOutOfRange as exc:
                raise DesignError(
                    "DESIGN004",
                    f"{dev.name}: {exc}",
                    ("topology", dev.role, "model"),
                    hint="choose a model (or hwsku) with more ports, or lower the port budget of the tier",
                    source_file=self.source_file,
                ) from None
        return name

    # --- links ---------------------------------------------------------------------------------------
    def connect_uplinks(
        self,
        lower: DevicePlan,
        uppers: list[DevicePlan],
        position: int,
        downlinks: int,
        count: int,
        tier: LinkTier,
        speed: int,
        cable_m: float,
        pool: IPv4Network | None,
        pool_path: DataPath,
    ) -> None:
        """Cable `lower`'s `count` uplinks round-robin over `uppers`: uplink k lands on upper k mod n, at that
        upper's port position x ceil(count / n) + k div n + 1 (the block of ports it keeps for `lower`, the
        position-th device it serves), from `lower`'s port downlinks + k + 1, with /31 number
        (lower.index - 1) x count + k of `pool` (p2p31).

        One call per lower device, not per cable: a 100k-GPU fabric has 112,640 fabric cables, and the calls,
        pool and port-name look-ups per cable were ~0.4 s of the design."""
        n = len(uppers)
        first_port = position * (ceil(count / n) if n else 0) + 1
        first_p2p = (lower.index - 1) * count
        upper_names = self._group_port_names(uppers)
        lower_names = self._port_names_of(lower)
        p2p = None if self.unnumbered or pool is None else self._pool(pool).p2p
        what = f"{tier} /31 links"
        lower_name, lower_asn, lower_rail, add_lower = lower.name, lower.asn, lower.rail, lower.interfaces.append
        mtu, lossless, cables, add_link = self.mtu, self.lossless, self.cables, self.links.append
        a_addr = b_addr = a_ip = b_ip = None
        try:
            for k in range(count):
                j = k % n
                upper = uppers[j]
                upper_port = first_port + k // n
                lower_port = downlinks + k + 1
                length = self.t.cable_m(tier, upper.name, lower_name, cable_m) if cables else cable_m
                a_if = upper_names[j].get(upper_port) or self._port_name(upper, upper_port)
                b_if = lower_names.get(lower_port) or self._port_name(lower, lower_port)
                if p2p is not None:
                    a_ip, b_ip, a_addr, b_addr = p2p(first_p2p + k, what)
                # Both ends of one cable: the same speed, MTU, length and rail; each sees the other as its peer.
                # Positional: InterfacePlan's field order (name, port, role, peer_device, peer_port, speed_gbps,
                # mtu, cable_m, rail, address, peer_address, bgp_peer_asn, lossless): keyword arguments made each
                # call ~2.7x dearer (7.7 vs 2.9 us on the shared 2-core box), and a 100k-GPU fabric makes 420,000.
                upper.interfaces.append(
                    InterfacePlan(
                        a_if,
                        upper_port,
                        "fabric_down",
                        lower_name,
                        b_if,
                        speed,
                        mtu,
                        length,
                        lower_rail,
                        a_addr,
                        b_ip,
                        lower_asn,
                        lossless,
                    )
                )
                add_lower(
                    InterfacePlan(
                        b_if,
                        lower_port,
                        "fabric_up",
                        upper.name,
                        a_if,
                        speed,
                        mtu,
                        length,
                        lower_rail,
                        b_addr,
                        a_ip,
                        upper.asn,
                        lossless,
                    )
                )
                add_link(LinkPlan(upper.name, a_if, lower_name, b_if, tier, speed, length, lower_rail, a_addr, b_addr))
        except PoolExhausted as exc:
            raise self._exhausted(exc, pool_path) from None

    # --- the two topology styles ---------------------------------------------------------------------
    def expand(self) -> FabricPlan:
        t = self.t
        planes = t.planes
        superspines: list[DevicePlan] = []
        if t.superspine is not None:
            for i in range(1, (t.superspine.count or 0) + 1):
                plane = (i - 1) % planes + 1
                superspines.append(self.add_device("superspine", i, self.u.asn.superspine, plane=plane))
        spines_by_pod: dict[int, list[DevicePlan]] = {}
        spine_count = t.spine.count or 0
        # RFC 7938 numbering: one ASN per pod's spines (spine + pod - 1), so a route never climbs back up
        # through another spine of its pod (valley-free, which is what keeps PFC deadlock-free).
        for pod in range(1, max(t.pod_count, 1) + 1):
            pod_key = pod if t.has_pods else None
            asn = self.u.asn.spine + pod - 1
            spines_by_pod[pod] = [
                self.add_device(
                    "spine",
                    (pod - 1) * spine_count + i,
                    self.u.asn.spine + (pod - 1) * spine_count + i - 1 if self.u.asn.spine_per_switch else asn,
                    pod=pod_key,
                    plane=(i - 1) % planes + 1,
                    spine_in_pod=i,
                )
                for i in range(1, spine_count + 1)
            ]
        leaves = self._leaves()
        self._leaf_spine(leaves, spines_by_pod)
        if superspines:
            self._spine_superspine(spines_by_pod, superspines)
        self._servers(leaves)
        for dev in self.devices.values():
            dev.interfaces.sort(key=_by_port)
            if self.bgp:
                dev.bgp = bgp_sessions(dev)
        return FabricPlan(
            name=self.intent.fabric.name,
            style=t.style,
            devices=self.devices,
            links=self.links,
            servers=self.servers,
            qos=self.qos,
            hashing=self.hashing,
            nic=self.nic,
            network=self.network,
            kind=self.kind,
            addresses=self._ledgers,
        )

    def _leaves(self) -> dict[tuple[int, int, int], DevicePlan]:
        """Leaves keyed by (su, leaf in SU, plane) or (pod, rack, 1). Within an SU the order is plane, then
        leaf, so growing by an SU only appends; with one rail per leaf and one plane, leaf == rail."""
        t = self.t
        leaves: dict[tuple[int, int, int], DevicePlan] = {}
        base = self.u.asn.leaf_base
        if t.style == "rail_optimized":
            per_plane = t.leaves_per_su
            planes = t.rail_planes
            per_su = per_plane * planes
            rpl = t.rails_per_leaf

            def pod_of(su: int) -> int | None:
                return t.pod_of_su(su) if t.sus_per_pod is not None else None

            for su in range(1, (t.scalable_units or 0) + 1):
                for plane in range(1, planes + 1):
                    for leaf in range(1, per_plane + 1):
                        index = (su - 1) * per_su + (plane - 1) * per_plane + leaf
                        # A leaf carrying several rails has no single rail: its host ports carry each one.
                        rail = leaf if rpl == 1 else None
                        leaves[(su, leaf, plane)] = self.add_device(
                            "leaf", index, base + index - 1, su=su, rail=rail, leaf=leaf,
                            plane=plane if planes > 1 else None, pod=pod_of(su),
                        )  # fmt: skip
        else:
            racks = t.racks_per_pod or 0
            for pod in range(1, (t.pods or 0) + 1):
                for rack in range(1, racks + 1):
                    index = (pod - 1) * racks + rack
                    leaves[(pod, rack, 1)] = self.add_device("leaf", index, base + index - 1, pod=pod, rack=rack)
        return leaves

    def _leaf_spine(
        self, leaves: dict[tuple[int, int, int], DevicePlan], spines_by_pod: dict[int, list[DevicePlan]]
    ) -> None:
        t = self.t
        uplinks = t.leaf.uplinks
        downlinks = t.leaf_downlinks
        pool = self.u.p2p.leaf_spine
        planes = t.rail_planes
        # Multi-plane: plane p's leaves uplink only to plane p's spines of their pod (spine i is in plane i mod
        # planes); without sus_per_pod every SU is in pod 1.
        spine_groups = {
            (pod, p): [s for s in pod_spines if (s.plane or 1) == p]
            for pod, pod_spines in spines_by_pod.items()
            for p in range(1, planes + 1)
        }
        leaves_per_plane_su = t.leaves_per_su
        for (major, minor, plane), leaf in leaves.items():
            if t.style == "clos3":
                spines = spines_by_pod[major]
                # Position of this leaf among the leaves a spine serves: the pod's racks.
                position = minor - 1
            else:
                spines = spine_groups[(t.pod_of_su(major), plane)]
                # Among the leaves of its pod and plane, SU by SU: growth appends within the last pod.
                position = t.su_in_pod(major) * leaves_per_plane_su + minor - 1
            self.connect_uplinks(
                leaf,
                spines,
                position,
                downlinks,
                uplinks,
                "leaf_spine",
                t.leaf.uplink_speed,
                t.leaf.uplink_cable_m,
                pool,
                ("underlay", "p2p", "leaf_spine"),
            )

    def _spine_superspine(self, spines_by_pod: dict[int, list[DevicePlan]], superspines: list[DevicePlan]) -> None:
        t = self.t
        planes = t.planes
        uplinks = t.spine.uplinks
        spine_count = t.spine.count or 0
        # A spine's leaf ports come first, numbered over its pod's full capacity (leaves per pod and plane x
        # links per leaf), so its superspine ports never move when the pod fills up.
        group = spine_count // t.rail_planes if t.rail_planes else spine_count
        downlinks = t.leaves_per_pod_plane * ceil(t.leaf.uplinks / group) if group else 0
        by_plane = {p: [s for s in superspines if s.plane == p] for p in range(1, planes + 1)}
        spines_per_plane_per_pod = ceil(spine_count / planes)
        pool = self.u.p2p.spine_superspine
        for pod, spines in spines_by_pod.items():
            for i, spine in enumerate(spines, start=1):
                targets = by_plane[spine.plane or 1]
                if not targets:
                    continue
                self.connect_uplinks(
                    spine,
                    targets,
                    (pod - 1) * spines_per_plane_per_pod + (i - 1) // planes,
                    downlinks,
                    uplinks,
                    "spine_superspine",
                    t.spine.uplink_speed,
                    t.spine.uplink_cable_m,
                    pool,
                    ("underlay", "p2p", "spine_superspine"),
                )

    def _server_name(self, index: int, **coords: int | None) -> str:
        if self.server_names is not None:
            if index > len(self.server_names):
                raise DesignError(
                    "DESIGN004",
                    f"network {self.network} wires {index} or more servers, the back end has {len(self.server_names)}",
                    ("topology",),
                    hint="a network attaches the back end's servers: give it the same server count",
                    source_file=self.source_file,
                )
            return self.server_names[index - 1]
        return self.namer.name("server", index=index, **coords)

    def _server_ports(self, name: str) -> list[Port]:
        try:
            return self.ports.ports(name)
        except ProfileShort as exc:
            raise DesignError(
                "DESIGN005", str(exc), ("servers", "profile"),
                hint="pick a profile that has the ports, or define one under servers.profiles",
                source_file=self.source_file,
            ) from None  # fmt: skip

    def _servers(self, leaves: dict[tuple[int, int, int], DevicePlan]) -> None:
        try:
            self._wire_servers(leaves)
        except PoolExhausted as exc:  # a NIC's /31 (_nic)
            raise self._exhausted(exc, ("underlay", "hosts")) from None

    def _wire_servers(self, leaves: dict[tuple[int, int, int], DevicePlan]) -> None:
        t = self.t
        nic_count = t.servers.nic_count
        hosts = self.u.hosts
        speed, cable = t.servers.nic_speed, t.servers.cable_m
        if t.style == "rail_optimized":
            rails = t.rail_count
            rpl = t.rails_per_leaf
            planes = t.rail_planes
            blocks = self._alloc(lambda: split_blocks(hosts, rails * planes), ("underlay", "hosts"))
            block_p2p = [self._pool(b).p2p for b in blocks]
            block_routes = [(str(b),) for b in blocks]
            per_su = t.servers_per_su or 0
            for su in range(1, (t.scalable_units or 0) + 1):
                for s in range(1, per_su + 1):
                    index = (su - 1) * per_su + s
                    name = self._server_name(index, su=su, server=s)
                    ports = self._server_ports(name)
                    nics = []
                    for g in range(nic_count):
                        rail = g % rails + 1
                        leaf_no, rail_in_leaf = (rail - 1) // rpl + 1, (rail - 1) % rpl
                        # NICs beyond the rail count (a lint error) stack on the next block of leaf ports.
                        port = s + ((g // rails) * rpl + rail_in_leaf) * per_su
                        for plane in range(1, planes + 1):
                            leaf = leaves[(su, leaf_no, plane)]
                            k = g * planes + plane - 1
                            block = (plane - 1) * rails + rail - 1
                            nics.append(
                                self._nic(leaf, self._port_names_of(leaf), port, k, rail, block_p2p[block],
                                          block_routes[block], index - 1, speed, cable, name, ports[k],
                                          plane if planes > 1 else None)
                            )  # fmt: skip
                    self.servers.append(self._server_plan(name, index, su, None, None, nics))
        else:
            per_rack = t.servers_per_rack or 0
            racks = t.racks_per_pod or 0
            p2p, routes = self._pool(hosts).p2p, (str(hosts),)
            for pod in range(1, (t.pods or 0) + 1):
                for rack in range(1, racks + 1):
                    leaf = leaves[(pod, rack, 1)]
                    names = self._port_names_of(leaf)
                    for s in range(1, per_rack + 1):
                        index = ((pod - 1) * racks + rack - 1) * per_rack + s
                        name = self._server_name(index, pod=pod, rack=rack, server=s)
                        ports = self._server_ports(name)
                        nics = [
                            self._nic(
                                leaf, names, (s - 1) * nic_count + g + 1, g, None, p2p, routes,
                                (index - 1) * nic_count + g, speed, cable, name, ports[g], None,
                            )
                            for g in range(nic_count)
                        ]  # fmt: skip
                        self.servers.append(self._server_plan(name, index, None, pod, rack, nics))

    def _server_plan(
        self, name: str, index: int, su: int | None, pod: int | None, rack: int | None, nics: list[NicPlan]
    ) -> ServerPlan:
        profile = self.ports.profile_of(name)
        return ServerPlan(name, index, su, pod, rack, nics, self.nic, self.network, self.kind, profile)

    def _nic(
        self,
        leaf: DevicePlan,
        leaf_names: dict[int, str],
        port: int,
        g: int,
        rail: int | None,
        p2p: Callable[[int, str], tuple[str, str, str, str]],
        routes: tuple[str, ...],
        index: int,
        speed: int,
        cable: float,
        server: str,
        nic_port: Port,
        plane: int | None,
    ) -> NicPlan:
        """NIC `g` of `server` on `leaf` (`leaf_names`: _port_names_of(leaf)), with /31 number `index` of the
        block whose `p2p` and whose route (the block itself) are given. A pool that runs out raises
        PoolExhausted: _servers makes it DESIGN002 at underlay.hosts."""
        leaf_ip, nic_ip, leaf_addr, nic_addr = p2p(index, "GPU NIC /31 links")
        netdev = nic_port.netdev
        if self.cables:
            cable = self.t.cable_m("host", leaf.name, server, cable)
        leaf_if = leaf_names.get(port) or self._port_name(leaf, port)
        # Positional, in InterfacePlan's field order (see connect_uplinks); bgp_peer_asn None: no session to a
        # server.
        leaf.interfaces.append(
            InterfacePlan(
                leaf_if,
                port,
                "host",
                server,
                netdev,
                speed,
                self.mtu,
                cable,
                rail,
                leaf_addr,
                nic_ip,
                None,
                self.lossless,
            )
        )
        self.links.append(LinkPlan(leaf.name, leaf_if, server, netdev, "host", speed, cable, rail, leaf_addr, nic_addr))
        # Positional, in NicPlan's field order (index, netdev, rdma_device, rail, leaf, leaf_port, address,
        # gateway, routes, slot, plane, pci), for the reason given in connect_uplinks. The routes tuple is the
        # block's, shared by its NICs (a tuple: nothing can change it).
        return NicPlan(
            g,
            netdev,
            nic_port.rdma_device,
            rail,
            leaf.name,
            leaf_if,
            nic_addr,
            leaf_ip,
            routes,
            nic_port.slot,
            plane,
            nic_port.pci,
        )


UNPUBLISHED_HINT = (
    "read the names on the system (`rdma link`, `ibdev2netdev`) and give them per server under "
    "servers.overrides.<server>.nics.<port>: {netdev: ..., rdma_device: ...}, or define the model under "
    "servers.profiles"
)


def design(intent: Intent, source_file: str = "<intent>", network: str = BACKEND, bgp: bool = True) -> FabricPlan:
    """Expand one network of a validated (and lint-clean) intent into its fabric plan (the back end by
    default). Raises DesignError with findings; their paths are the network's own (prefix them with
    NetworkView.path to locate them in the YAML).

    bgp=False leaves every DevicePlan.bgp None: the sessions are a function of the DevicePlan that cannot
    fail (netfab.design.plan.bgp_sessions; no DesignError comes from them) and no plan rule reads them, so
    `netfab lint` skips building them (~420,000 neighbor records, ~20 % of a 100k-GPU design) and a build
    derives them only for the switches it renders; every other field is the same."""
    # The plan is ~10^5 small objects that all live until the process ends: cyclic GC passes over a
    # growing heap cost more than the expansion itself, and nothing here forms cycles worth collecting.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        view = intent.network_view(network)
        names = None if network == BACKEND else server_names(intent)
        plan = _Expander(view.intent, source_file, intent, network, view.kind, names, bgp).expand()
        if network == BACKEND:
            plan.host_env = host_envs(intent, plan)
        return plan
    except MissingPlaceholder as exc:
        raise DesignError(
            "DESIGN003", str(exc), ("naming", exc.role), hint=f"change naming.{exc.role}", source_file=source_file
        ) from None
    except NamesUnpublished as exc:
        raise DesignError("DESIGN006", str(exc), exc.path, hint=UNPUBLISHED_HINT, source_file=source_file) from None
    except UnsafeName as exc:
        raise DesignError(
            "DESIGN003",
            f"{exc}: names may use letters, digits, '_', '-' and '.', start with a letter or digit, "
            "and never contain '..'",
            ("naming", exc.role),
            hint=f"change naming.{exc.role}",
            source_file=source_file,
        ) from None
    finally:
        if gc_was_enabled:
            gc.enable()


def server_names(intent: Intent) -> list[str]:
    """The back end's server names in design order: every other network attaches these servers."""
    t = intent.topology
    namer = Namer(intent)
    if t.style == "rail_optimized":
        per_su = t.servers_per_su or 0
        return [
            namer.name("server", index=(su - 1) * per_su + s, su=su, server=s)
            for su in range(1, (t.scalable_units or 0) + 1)
            for s in range(1, per_su + 1)
        ]
    per_rack, racks = t.servers_per_rack or 0, t.racks_per_pod or 0
    return [
        namer.name("server", index=((pod - 1) * racks + rack - 1) * per_rack + s, pod=pod, rack=rack, server=s)
        for pod in range(1, (t.pods or 0) + 1)
        for rack in range(1, racks + 1)
        for s in range(1, per_rack + 1)
    ]
