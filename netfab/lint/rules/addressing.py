"""Address pools: no two pools overlap, and each is large enough for what the topology implies.

Sizes follow how the design stage allocates: a loopback or management address per device skipping the
network address, a /31 per link, the host pool split into power-of-two blocks per rail (rail_optimized) or per
pod (clos3) with a /31 per NIC, and management.subnet split into four equal blocks (superspine, spine, leaf).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from ipaddress import IPv4Network

from netfab.core.findings import Finding, Severity
from netfab.lint.context import LintContext
from netfab.lint.fabric import DataPath
from netfab.lint.rule import Rule
from netfab.lint.rules._words import plural

MGMT_BLOCKS = 4


@dataclass(frozen=True, slots=True)
class Pool:
    path: DataPath
    network: IPv4Network

    @property
    def name(self) -> str:
        return ".".join(str(p) for p in self.path)


def fabric_pools(ctx: LintContext) -> list[Pool]:
    """The pools this fabric actually uses (p2p pools only with p2p31, superspine pools only in clos3)."""
    u = ctx.intent.underlay
    has_super = ctx.intent.topology.superspine is not None
    pools = [
        Pool(("underlay", "loopbacks", "superspine"), u.loopbacks.superspine) if has_super else None,
        Pool(("underlay", "loopbacks", "spine"), u.loopbacks.spine),
        Pool(("underlay", "loopbacks", "leaf"), u.loopbacks.leaf),
        Pool(("underlay", "p2p", "leaf_spine"), u.p2p.leaf_spine) if u.addressing == "p2p31" else None,
        Pool(("underlay", "p2p", "spine_superspine"), u.p2p.spine_superspine)
        if u.addressing == "p2p31" and has_super
        else None,
        Pool(("underlay", "hosts"), u.hosts),
        Pool(("management", "subnet"), ctx.intent.management.subnet),
    ]
    return [p for p in pools if p is not None]


class PoolOverlap(Rule):
    """Two address pools overlap.

    Devices would get duplicate addresses (a loopback equal to a NIC address, a management address inside the
    fabric's routed space), which BGP and the inventory cannot tell apart. The lab's management subnet is checked
    against the fabric pools too.

    ```yaml
    # bad: the leaf loopbacks sit inside the host pool
    underlay: {hosts: 10.0.0.0/12, loopbacks: {leaf: 10.0.16.0/20}}
    # fixed
    underlay: {hosts: 10.64.0.0/12, loopbacks: {leaf: 10.0.16.0/20}}
    ```
    """

    id = "ADDR001"
    severity = Severity.ERROR
    title = "Address pools overlap"
    hint = "move one of the pools to unused space"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        pools = fabric_pools(ctx)
        lab = Pool(("lab", "mgmt_subnet"), ctx.intent.lab.mgmt_subnet)
        pairs = [(a, b) for i, a in enumerate(pools) for b in pools[i + 1 :]]
        pairs += [(p, lab) for p in pools if p.path != ("management", "subnet")]
        for first, second in pairs:
            if first.network.overlaps(second.network):
                msg = f"{second.name} {second.network} overlaps {first.name} {first.network}"
                yield self.finding(ctx, second.path, msg, related=[first.path])


class PoolExhausted(Rule):
    """An address pool is too small for the devices, links or NICs the topology implies.

    ```yaml
    # bad: 1,536 leaves in a /24
    underlay: {loopbacks: {leaf: 10.0.16.0/24}}
    # fixed
    underlay: {loopbacks: {leaf: 10.0.16.0/20}}
    ```
    """

    id = "ADDR002"
    severity = Severity.ERROR
    title = "Address pool too small"
    hint = "use a shorter prefix (a larger pool)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for short in _shortfalls(ctx):
            msg = f"{'.'.join(map(str, short.path))} {short.network} has {short.network.num_addresses:,} addresses"
            yield self.finding(ctx, short.path, f"{msg}, {short.what}")


@dataclass(frozen=True, slots=True)
class Shortfall:
    path: DataPath
    network: IPv4Network
    what: str


def _shortfalls(ctx: LintContext) -> Iterator[Shortfall]:
    t = ctx.intent.topology
    u = ctx.intent.underlay
    counts = {"leaf": t.leaf_count, "spine": t.spine_count}
    if t.superspine is not None:
        counts["superspine"] = t.superspine.count or 0
    for role, n in counts.items():
        pool = getattr(u.loopbacks, role)
        if n + 1 > pool.num_addresses:
            what = f"{plural(n, role)} need {n + 1:,} (the network address is skipped)"
            yield Shortfall(("underlay", "loopbacks", role), pool, what)
    if u.addressing == "p2p31":
        p2p = [(("underlay", "p2p", "leaf_spine"), u.p2p.leaf_spine, t.leaf_count * t.leaf.uplinks, "leaf-spine")]
        if t.superspine is not None:
            p2p.append((("underlay", "p2p", "spine_superspine"), u.p2p.spine_superspine,
                        t.spine_count * t.spine.uplinks, "spine-superspine"))  # fmt: skip
        for path, pool, links, kind in p2p:
            if 2 * links > pool.num_addresses:
                yield Shortfall(path, pool, f"{links:,} {kind} links need {2 * links:,} (a /31 each)")
    yield from _host_shortfall(ctx)
    mgmt = ctx.intent.management.subnet
    block_size = mgmt.num_addresses // MGMT_BLOCKS
    for role, n in counts.items():
        if n + 1 > block_size:
            what = f"but {plural(n, role)} need {n + 1:,} in their quarter of it ({block_size:,})"
            yield Shortfall(("management", "subnet"), mgmt, what)


def _host_shortfall(ctx: LintContext) -> Iterator[Shortfall]:
    t = ctx.intent.topology
    hosts = ctx.intent.underlay.hosts
    if t.style == "rail_optimized":
        blocks, per_block, unit = t.rail_count, t.server_count, "rail"
    else:
        blocks = t.pods or 1
        per_block = (t.racks_per_pod or 0) * (t.servers_per_rack or 0) * t.servers.gpus_per_server
        unit = "pod"
    extra_bits = max(0, (blocks - 1).bit_length())
    block_prefix = hosts.prefixlen + extra_bits
    block_size = 2 ** (32 - block_prefix) if block_prefix <= 32 else 0
    if 2 * per_block > block_size:
        what = (
            f"split into {2**extra_bits:,} blocks (one per {unit}) of {block_size:,}; each {unit} has "
            f"{per_block:,} NICs needing {2 * per_block:,} (a /31 each)"
        )
        yield Shortfall(("underlay", "hosts"), hosts, what)


RULES: tuple[type[Rule], ...] = (PoolOverlap, PoolExhausted)
