"""Cross-network rules: what goes wrong when one cluster has several networks (back end, storage, front end,
OOB) on the same servers. The per-network rules (every other module) run once per network; these run once
per intent, on the root pass (ctx.is_root), and read every network through ctx.cluster.

Lossless headroom summed over every priority a switch port carries, against the buffer, is REV020's
(review_buffer.py): it runs once per network, so a converged network's compute and storage priorities are
summed there, on that network's switches.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from ipaddress import IPv4Network

from netfab.core.findings import Finding, Severity
from netfab.design.expand import UNPUBLISHED_HINT, server_names
from netfab.design.server_nics import NamesUnpublished, ProfileShort, ServerPorts
from netfab.intent import Intent
from netfab.intent.model import BACKEND, NetworkView
from netfab.intent.servers import profile_names, resolve_profile
from netfab.lint.context import LintContext
from netfab.lint.rule import Rule
from netfab.lint.rules.mtu import ROCEV2_HEADER_BYTES

DataPath = tuple[str | int, ...]


def _path(view: NetworkView, *rest: str | int) -> DataPath:
    return (*view.path, *rest)


def _servers_in_use(root: Intent) -> list[str]:
    """One server per profile in use ('' stands for every server on the default profile), plus every
    overridden server: the port lists the host scripts can differ in."""
    return ["", *root.servers.overrides]


@dataclass(frozen=True, slots=True)
class _Claim:
    network: str
    kind: str
    netdev: str
    rdma: str | None


class SharedServerPort(Rule):
    """Two networks use the same NIC port of a server.

    Each network's host script configures its own ports: address, MTU, routing table, and on RDMA networks the
    port's trust, PFC vector, ETS and DSCP map. Two networks on one port overwrite each other's settings, and
    their lossless classes share one wire: compute and storage on the same lossless priority or DSCP cannot be
    told apart there (one pauses the other, ECN marks one for the other's queue). A converged port is one
    network (kind frontend) with its storage class on its own priority and DSCP.

    ```yaml
    # bad: a profile port listed for both networks, and both networks attach to it
    servers: {profiles: {mine: {nics: [{netdev: ens1, networks: [backend, storage], rail: 1}]}}}
    # fixed: give each network its own ports (or carry storage as a class of one network)
    ```
    """

    id = "NET001"
    severity = Severity.ERROR
    title = "Two networks share a server port"
    hint = "give each network its own ports in the server profile, or carry both as classes of one network"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        if not ctx.is_root or not ctx.intent.networks:
            return
        root = ctx.intent
        views = root.network_views()
        reported: set[tuple[str, str, str]] = set()
        for server in _servers_in_use(root):
            claims: dict[str, list[_Claim]] = {}
            for view in views:
                try:
                    ports = ServerPorts(root, view.name, view.kind).ports(server)
                except (ProfileShort, NamesUnpublished):
                    continue  # NET008 / NET009 report it
                for p in ports:
                    claims.setdefault(p.netdev, []).append(_Claim(view.name, view.kind, p.netdev, p.rdma_device))
            for netdev, users in claims.items():
                if len(users) < 2:
                    continue
                a, b = users[0], users[1]
                key = (netdev, a.network, b.network)
                if key in reported:
                    continue
                reported.add(key)
                who = f"server {server}" if server else f"{root.servers.profile} servers"
                msg = f"networks {a.network} and {b.network} both use {netdev} on {who}"
                shared = _shared_lossless(root.network_view(a.network), root.network_view(b.network))
                if shared:
                    msg += f"; they also share {shared} on that wire, so {a.kind} and {b.kind} cannot be told apart"
                view = root.network_view(b.network)
                yield self.finding(ctx, _path(view, "kind") if view.path else ("servers", "profile"), msg)


def _lossless(view: NetworkView) -> tuple[set[int], set[int]]:
    qos = view.intent.qos
    lossless = [c for c in qos.classes if c.lossless]
    return {c.priority for c in lossless}, {d for c in lossless for d in c.dscp}


def _shared_lossless(a: NetworkView, b: NetworkView) -> str:
    pa, da = _lossless(a)
    pb, db = _lossless(b)
    parts = []
    if pa & pb:
        parts.append("lossless priority " + ", ".join(map(str, sorted(pa & pb))))
    if da & db:
        parts.append("DSCP " + ", ".join(map(str, sorted(da & db))))
    return " and ".join(parts)


@dataclass(frozen=True, slots=True)
class _Pool:
    network: str
    path: DataPath
    net: IPv4Network
    label: str


def _pools(view: NetworkView, data_plane_only: bool = False) -> list[_Pool]:
    u = view.intent.underlay
    t = view.intent.topology
    pools = [
        _Pool(view.name, _path(view, "underlay", "loopbacks", "leaf"), u.loopbacks.leaf, "leaf loopbacks"),
        _Pool(view.name, _path(view, "underlay", "loopbacks", "spine"), u.loopbacks.spine, "spine loopbacks"),
        _Pool(view.name, _path(view, "underlay", "hosts"), u.hosts, "host links"),
    ]
    if t.superspine is not None:
        path = _path(view, "underlay", "loopbacks", "superspine")
        pools.append(_Pool(view.name, path, u.loopbacks.superspine, "superspine loopbacks"))
    if u.addressing == "p2p31":
        pools.append(
            _Pool(view.name, _path(view, "underlay", "p2p", "leaf_spine"), u.p2p.leaf_spine, "leaf-spine /31s")
        )
        if t.superspine is not None:
            path = _path(view, "underlay", "p2p", "spine_superspine")
            pools.append(_Pool(view.name, path, u.p2p.spine_superspine, "spine-superspine /31s"))
    if not data_plane_only:
        path = _path(view, "management", "subnet")
        pools.append(_Pool(view.name, path, view.intent.management.subnet, "management"))
    return pools


class AddressOverlapAcrossNetworks(Rule):
    """Two networks of the cluster use overlapping address pools.

    The networks meet on the servers (each server has an address on each) and usually at the data-center edge.
    An overlap makes the server's routing ambiguous: a route for one network's block captures the other's
    traffic, and the per-NIC routing tables no longer say which wire a packet takes. A new network copied
    from the back end keeps the back end's default pools, which is exactly this.

    ```yaml
    # bad: the storage network left at the default pools
    networks: {storage: {kind: storage, topology: {...}}}
    # fixed
    networks: {storage: {kind: storage, topology: {...}, underlay: {hosts: 10.96.0.0/16,
               loopbacks: {leaf: 10.1.16.0/20, spine: 10.1.1.0/24}}, management: {subnet: 192.168.100.0/24}}}
    ```
    """

    id = "NET003"
    severity = Severity.ERROR
    title = "Address pools overlap between networks"
    hint = "give every network its own underlay pools and management subnet"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        if not ctx.is_root or not ctx.intent.networks:
            return
        views = ctx.intent.network_views()
        seen: list[_Pool] = []
        for view in views:
            mine = _pools(view)
            for pool in mine:
                for other in seen:
                    if _oob_on_backend(ctx.intent, pool, other):
                        continue  # NET004 says it better
                    if pool.net.overlaps(other.net):
                        msg = (
                            f"network {pool.network} {pool.label} {pool.net} overlaps network {other.network} "
                            f"{other.label} {other.net}"
                        )
                        yield self.finding(ctx, pool.path, msg, related=[other.path])
                        break
            seen.extend(mine)


def _oob_on_backend(root: Intent, pool: _Pool, other: _Pool) -> bool:
    kinds = {v.name: v.kind for v in root.network_views()}
    return kinds.get(pool.network) == "oob" and other.network == BACKEND


class OobDependsOnBackend(Rule):
    """Out-of-band management is addressed inside the back end, so reaching it depends on the back end.

    OOB exists to reach switches and BMCs when the data networks are down or being changed (a bad deploy, a
    PFC storm). Management addresses inside the back end's loopback, link or host pools are routed by the back
    end itself: the day it is broken, so is the way to repair it.

    ```yaml
    # bad
    underlay: {hosts: 10.64.0.0/12}
    networks: {oob: {kind: oob, management: {subnet: 10.64.0.0/24}, ...}}
    # fixed
    networks: {oob: {kind: oob, management: {subnet: 192.168.0.0/22}, ...}}
    ```
    """

    id = "NET004"
    severity = Severity.ERROR
    title = "OOB management depends on the back end"
    hint = "address OOB (and every network's management subnet) outside the back end's pools"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        if not ctx.is_root:
            return
        root = ctx.intent
        backend = root.network_view(BACKEND)
        data = _pools(backend, data_plane_only=True)
        for view in root.network_views():
            candidates = _pools(view) if view.kind == "oob" else [_pools(view)[-1]]  # the management subnet
            for pool in candidates:
                hit = next((d for d in data if pool.net.overlaps(d.net)), None)
                if hit is None:
                    continue
                what = "the OOB network's" if view.kind == "oob" else f"network {view.name}'s"
                msg = (
                    f"{what} {pool.label} {pool.net} lies in the back end's {hit.label} {hit.net}: management "
                    "traffic would be routed by the fabric it manages"
                )
                yield self.finding(ctx, pool.path, msg, related=[hit.path])


class PlaneAsymmetry(Rule):
    """The planes of a multi-plane back end are not identical.

    A multi-plane back end puts each NIC port on its own plane and lets NCCL (or the NIC) spread traffic over
    them; a collective is as fast as its slowest plane. Planes must have the same spines, links and cable
    lengths: a plane with fewer spines, or with longer cables (more latency, more headroom), is the straggler.

    ```yaml
    # bad: 3 spines over 2 planes; a longer cable group in plane 2 only
    topology: {planes: 2, spine: {count: 3}, cables: [{match: "su*-p2-*", cable_m: 50}]}
    # fixed
    topology: {planes: 2, spine: {count: 4}}
    ```
    """

    id = "NET005"
    severity = Severity.ERROR
    title = "Planes are not symmetric"
    hint = "give every plane the same spines, ports and cable lengths"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        t = ctx.intent.topology
        planes = t.rail_planes
        if planes < 2:
            return
        if (t.spine.count or 0) % planes:
            msg = f"{t.spine.count} spines do not divide into {planes} planes: one plane has fewer spines"
            yield self.finding(ctx, ("topology", "spine", "count"), msg, related=[("topology", "planes")])
        for i, cable in enumerate(t.cables):
            touched = {p for p in range(1, planes + 1) if f"-p{p}-" in cable.match or cable.match.endswith(f"-p{p}")}
            if touched and len(touched) < planes:
                msg = (
                    f"cable override {cable.match!r} ({cable.cable_m:g} m) names plane(s) "
                    f"{', '.join(map(str, sorted(touched)))} of {planes}: that plane's links differ from the others'"
                )
                yield self.finding(ctx, ("topology", "cables", i), msg, severity=Severity.WARNING)
        if ctx.is_root:
            yield from self._profile_planes(ctx, planes)

    def _profile_planes(self, ctx: LintContext, planes: int) -> Iterator[Finding]:
        profile = resolve_profile(ctx.intent.servers, ctx.intent.servers.profile)
        if profile is None:
            return
        counts = {p: 0 for p in range(1, planes + 1)}
        for nic in profile.for_network("backend"):
            if nic.plane is not None and nic.plane in counts:
                counts[nic.plane] += 1
        if any(counts.values()) and len(set(counts.values())) > 1:
            spread = ", ".join(f"plane {p}: {n}" for p, n in counts.items())
            msg = f"server profile {ctx.intent.servers.profile!r} has unequal back-end ports per plane ({spread})"
            yield self.finding(ctx, ("servers", "profile"), msg)


class MtuAcrossNetworks(Rule):
    """A server's NIC MTU on some network does not fit that network's links, or its RDMA networks disagree on
    the RoCE path MTU.

    Each network sets its own host MTU (nic.mtu, default roce_mtu + 104). A host MTU above its switches' link
    MTU is dropped at the first hop for every full-size frame (no ICMP for an L2 drop). RDMA networks of one
    server with different RoCE path MTUs make GPUDirect Storage and compute traffic behave differently and are
    usually a copy-paste mistake.

    ```yaml
    # bad
    networks: {storage: {kind: storage, underlay: {mtu: 1500}, nic: {roce_mtu: 4096}, ...}}
    # fixed
    networks: {storage: {kind: storage, underlay: {mtu: 9216}, ...}}
    ```
    """

    id = "NET006"
    severity = Severity.ERROR
    title = "MTU disagreement across a server's networks"
    hint = "keep each network's host MTU at or below its link MTU, and one RoCE path MTU per server"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        if not ctx.is_root:
            return
        rdma: list[tuple[NetworkView, int]] = []
        for view in ctx.intent.network_views():
            nic = view.intent.nic
            host_mtu = nic.mtu if nic.mtu is not None else max(1500, nic.roce_mtu + 104)
            link = view.intent.underlay.mtu
            if host_mtu > link and (nic.mtu is not None or nic.roce_mtu + ROCEV2_HEADER_BYTES <= link):
                # A derived host MTU over a link that cannot carry the RoCE packets either is MTU001's finding.
                where = _path(view, "nic", "mtu") if nic.mtu is not None else _path(view, "nic", "roce_mtu")
                msg = f"network {view.name}: the servers' NIC MTU {host_mtu} is above its link MTU {link}"
                yield self.finding(ctx, where, msg, related=[_path(view, "underlay", "mtu")])
            if view.intent.qos.class_of_kind("roce") is not None:
                rdma.append((view, nic.roce_mtu))
        mtus = {m for _, m in rdma}
        if len(mtus) > 1:
            first = rdma[0]
            for view, mtu in rdma[1:]:
                if mtu != first[1]:
                    msg = (
                        f"network {view.name} runs RoCE path MTU {mtu}, network {first[0].name} {first[1]}: "
                        "one server, two RDMA path MTUs"
                    )
                    yield self.finding(
                        ctx, _path(view, "nic", "roce_mtu"), msg, severity=Severity.WARNING,
                        related=[_path(first[0], "nic", "roce_mtu")],
                    )  # fmt: skip


class ServerCountAcrossNetworks(Rule):
    """A network attaches a different number of servers than the back end has.

    Every network attaches the back end's servers (server i there is server i here): a storage network wired
    for 24 servers in a 32-server cluster leaves 8 without storage, one wired for 40 names servers that do
    not exist.

    ```yaml
    # bad: 32 back-end servers, a storage network for 24
    topology: {scalable_units: 1, servers_per_su: 32}
    networks: {storage: {kind: storage, topology: {scalable_units: 1, servers_per_su: 24, ...}}}
    # fixed
    networks: {storage: {kind: storage, topology: {scalable_units: 1, servers_per_su: 32, ...}}}
    ```
    """

    id = "NET007"
    severity = Severity.ERROR
    title = "A network's server count differs from the back end's"
    hint = "size every network's topology for the back end's servers"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        if not ctx.is_root:
            return
        want = ctx.intent.topology.server_count
        for view in ctx.intent.network_views()[1:]:
            got = view.intent.topology.server_count
            if got != want:
                msg = f"network {view.name} attaches {got} servers, the back end has {want}"
                yield self.finding(ctx, _path(view, "topology"), msg)


class ServerProfilePorts(Rule):
    """The server profile does not name the ports a network needs, or an override names a port the profile
    does not have.

    The host script configures exactly the ports the profile names, and fails on a server that lacks one. A
    profile with 2 storage ports cannot serve a storage network wired with 4 per server; an override keyed by
    a netdev the profile does not list changes nothing.

    ```yaml
    # bad: the DGX H100 profile has no 4th front-end port
    servers: {profile: dgx-h100}
    networks: {frontend: {kind: frontend, topology: {servers: {nics: 4}, ...}}}
    # fixed
    networks: {frontend: {kind: frontend, topology: {servers: {nics: 2}, ...}}}
    ```
    """

    id = "NET008"
    severity = Severity.ERROR
    title = "Server profile lacks the ports a network needs"
    hint = "choose a profile with the ports, define one under servers.profiles, or fix the override"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        if not ctx.is_root:
            return
        root = ctx.intent
        servers = root.servers
        known = profile_names(servers)
        if servers.profile not in known:
            msg = f"unknown server profile {servers.profile!r}; known: {', '.join(known)}"
            yield self.finding(ctx, ("servers", "profile"), msg)
            return
        for name, override in servers.overrides.items():
            if override.profile is not None and override.profile not in known:
                msg = f"server {name}: unknown profile {override.profile!r}; known: {', '.join(known)}"
                yield self.finding(ctx, ("servers", "overrides", name, "profile"), msg)
                return
            profile = resolve_profile(servers, override.profile or servers.profile)
            if profile is not None:
                listed = {n.key for n in profile.nics}
                for key in override.nics:
                    if key not in listed:
                        msg = f"server {name}: the profile has no port {key!r} to override"
                        yield self.finding(ctx, ("servers", "overrides", name, "nics", key), msg)
        for view in root.network_views():
            for server in _servers_in_use(root):
                try:
                    ServerPorts(root, view.name, view.kind).ports(server)
                except ProfileShort as exc:
                    where = ("servers", "overrides", server, "profile") if server else ("servers", "profile")
                    yield self.finding(ctx, where, str(exc), related=[_path(view, "topology")])
                    break
                except NamesUnpublished:
                    continue  # NET009 reports it


class UnpublishedNicNames(Rule):
    """A server's profile does not publish the name of a NIC port a network uses, and no override gives it.

    netfab never guesses a netdev or RDMA device: a guessed name makes the host script configure another port
    (or fail on every server), and NCCL_IB_HCA list the wrong HCAs. A built-in profile leaves a name out where
    no vendor table gives it (the DGX B200's compute NICs, the generic HGX template); the names are then read
    on the system (`rdma link`, `ibdev2netdev`) and written per server, or once in a local profile.

    ```yaml
    # bad: the DGX B200 profile publishes no compute NIC names
    servers: {profile: dgx-b200}
    # fixed: per server (keyed by the profile's port label), or a local profile under servers.profiles
    servers:
      profile: dgx-b200
      overrides:
        su1-srv1: {nics: {"CX7 1": {netdev: <from rdma link>, rdma_device: <from rdma link>}, ...}}
    ```
    """

    id = "NET009"
    severity = Severity.ERROR
    title = "Server NIC names not published"
    hint = UNPUBLISHED_HINT

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        if not ctx.is_root:
            return
        root = ctx.intent
        servers = root.servers
        if servers.profile not in profile_names(servers):
            return  # NET008 reports it
        overridden = set(servers.overrides)
        # The default profile's servers ('') only matter if some back-end server is not overridden.
        candidates = sorted(overridden)
        if not overridden or any(n not in overridden for n in server_names(root)):
            candidates.insert(0, "")
        for view in root.network_views():
            resolver = ServerPorts(root, view.name, view.kind)
            for server in candidates:
                try:
                    resolver.ports(server)
                except ProfileShort:
                    continue  # NET008 reports it
                except NamesUnpublished as exc:
                    yield self.finding(ctx, exc.path, str(exc))


RULES: tuple[type[Rule], ...] = (
    SharedServerPort,
    AddressOverlapAcrossNetworks,
    OobDependsOnBackend,
    PlaneAsymmetry,
    MtuAcrossNetworks,
    ServerCountAcrossNetworks,
    ServerProfilePorts,
    UnpublishedNicNames,
)
