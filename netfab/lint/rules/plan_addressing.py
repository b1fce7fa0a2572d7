"""Addresses and ASNs across the whole plan: nothing handed out twice where it must be unique.

ADDR001/ASN002 prove the pools and ASN ranges apart from the intent; these rules check what the design actually
allocated (loopbacks, management addresses, every interface and NIC address, every ASN), so a design change
that breaks the allocation scheme is caught before a config carries it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from itertools import pairwise
from typing import TYPE_CHECKING

from netfab.core.findings import Finding, Severity
from netfab.lint.context import LintContext
from netfab.lint.fabric import DataPath
from netfab.lint.rule import Rule
from netfab.lint.rules._plan import plan_of, some
from netfab.lint.rules.asn import asn_ranges

if TYPE_CHECKING:
    from netfab.design.plan import FabricPlan

_LINK_POOLS: dict[str, DataPath] = {
    "host": ("underlay", "hosts"),
    "leaf_spine": ("underlay", "p2p", "leaf_spine"),
    "spine_superspine": ("underlay", "p2p", "spine_superspine"),
}


def _ip(address: str) -> str:
    return address.partition("/")[0]


def _all_addresses(plan: FabricPlan) -> list[str]:
    """Every address the plan assigns, once per holder: loopbacks, management, both ends of every link."""
    ips = [d.loopback for d in plan.devices.values()]
    ips += [d.mgmt_ip for d in plan.devices.values()]
    # Links carry both ends (the leaf's host port and the NIC too), so interfaces need not be walked again.
    ips += [_ip(a) for link in plan.links for a in (link.a_address, link.b_address) if a is not None]
    return ips


def ledgers_prove_unique(plan: FabricPlan) -> bool:
    """True when the design's pool ledgers (FabricPlan.addresses) show every address in the plan distinct.

    The proof, in integers: no pool handed out one index twice; the spans the pools handed out do not overlap;
    and the ledgers count exactly the addresses the plan holds (two per device, one per numbered link end). A
    pool maps index to address one to one (design/addressing.py PoolText) and the design takes every address
    from a pool, so together they make a duplicate impossible. The devices' own addresses (13,000 at 100k GPUs)
    are also compared as strings, which is cheap, so a loopback or management address copied after the design
    is still seen. What this does not see is a link address rewritten after the design to one already in use:
    nothing does that (addresses are set in design/expand.py only), and a new way of setting them must enter
    the ledger or leave it (the count then differs and the strings are compared).
    Anything else (a plan made by hand, no ledgers, a pool used both ways, a count that does not match) answers
    False and the strings are compared. At 100k GPUs this is ~40 ms against ~145 ms for the set of 420,000
    address strings: a tenth of `netfab lint`."""
    spans: list[tuple[int, int]] = []
    hosts = pairs = 0
    for ledger in plan.addresses:
        if ledger.hosts and ledger.pairs:
            return False
        issued = ledger.hosts or ledger.pairs
        if not issued:
            continue
        if len(set(issued)) != len(issued):
            return False
        first, last = min(issued), max(issued)
        if ledger.pairs:
            spans.append((ledger.base + 2 * first, ledger.base + 2 * last + 1))
            pairs += len(issued)
        else:
            spans.append((ledger.base + first + 1, ledger.base + last + 1))
            hosts += len(issued)
    if not spans:
        return False
    spans.sort()
    if any(later[0] <= earlier[1] for earlier, later in pairwise(spans)):
        return False
    devices = plan.devices.values()
    own: list[str | None] = [d.loopback for d in devices]
    own += [d.mgmt_ip for d in devices]
    if len(set(own)) != len(own) or len(own) - own.count(None) != hosts:
        return False
    ends = [link.a_address for link in plan.links] + [link.b_address for link in plan.links]
    return len(ends) - ends.count(None) == 2 * pairs


def _holders(plan: FabricPlan) -> Iterator[tuple[str, str, DataPath]]:
    """(address, who holds it, the intent pool it comes from), for naming the holders of a duplicate."""
    for d in plan.devices.values():
        yield d.loopback, f"{d.name} loopback", ("underlay", "loopbacks", d.role)
        yield d.mgmt_ip, f"{d.name} management", ("management", "subnet")
    for link in plan.links:
        pool = _LINK_POOLS[link.tier]
        if link.a_address is not None:
            yield _ip(link.a_address), f"{link.a_device} {link.a_port}", pool
        if link.b_address is not None:
            yield _ip(link.b_address), f"{link.b_device} {link.b_port}", pool


class DuplicateAddress(Rule):
    """The plan assigns one IPv4 address to two holders (loopbacks, management, interfaces, GPU NICs).

    Two loopbacks alike make two BGP router IDs alike; two interface or NIC addresses alike black-hole one of
    them; a management address equal to a fabric address sends the inventory to the wrong place. The design
    allocates from disjoint pools (ADDR001), so this fires when a pool is shared or the allocation is broken.

    ```yaml
    # bad: NIC /31s of every rail carved from the management range
    underlay: {hosts: 192.168.0.0/16}
    # fixed
    underlay: {hosts: 10.64.0.0/12}
    ```
    """

    id = "PLAN005"
    severity = Severity.ERROR
    title = "Address assigned twice"
    hint = "give each pool its own address space (underlay.loopbacks, underlay.p2p, underlay.hosts, management)"
    needs_plan = True

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        plan = plan_of(ctx)
        if ledgers_prove_unique(plan):
            return  # the common case, in integers
        ips = _all_addresses(plan)
        if len(set(ips)) == len(ips):
            return  # one set build; names are looked up only for a plan with duplicates
        first: dict[str, tuple[str, DataPath]] = {}
        clashes: dict[tuple[DataPath, DataPath], list[str]] = {}
        for ip, holder, pool in _holders(plan):
            seen = first.setdefault(ip, (holder, pool))
            if seen[0] != holder:
                clashes.setdefault((pool, seen[1]), []).append(f"{ip} to {seen[0]} and {holder}")
        for (pool, other), examples in clashes.items():
            shown = "; ".join(examples[:3]) + ("; ..." if len(examples) > 3 else "")
            count = "an address" if len(examples) == 1 else f"{len(examples):,} addresses"
            yield self.finding(ctx, pool, f"{count} assigned twice: {shown}", related=[other])


class DuplicateAsn(Rule):
    """The plan gives two leaves one ASN, or a leaf or spine the ASN of another tier.

    In this eBGP design every leaf has its own ASN (so the spines can tell leaves apart in the AS path) and the
    tiers never share one: eBGP drops a route whose AS path holds the receiver's own ASN.

    ```yaml
    # bad: the leaves' ASNs run into the spines' (pods 1-8 from 65001)
    underlay: {asn: {spine: 65001, leaf_base: 65005}}
    # fixed
    underlay: {asn: {spine: 65001, leaf_base: 4200000000}}
    ```
    """

    id = "PLAN006"
    severity = Severity.ERROR
    title = "ASN assigned twice"
    hint = "move underlay.asn.leaf_base clear of the spine and superspine ASNs (4-byte private: 4200000000)"
    needs_plan = True

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        devices = plan_of(ctx).devices.values()
        leaves = Counter(d.asn for d in devices if d.role == "leaf")
        twice = sorted(asn for asn, n in leaves.items() if n > 1)
        if twice:
            names = [f"{a} ({', '.join(d.name for d in devices if d.role == 'leaf' and d.asn == a)})" for a in twice]
            msg = f"{some(names, 'ASN')} shared by leaves: each leaf needs its own"
            yield self.finding(ctx, ("underlay", "asn", "leaf_base"), msg)
        if self._ranges_collide(ctx):
            return  # ASN002 reports the roles' ranges overlapping
        by_role: dict[str, set[int]] = {}
        for d in devices:
            by_role.setdefault(d.role, set()).add(d.asn)
        roles = sorted(by_role)
        for i, a in enumerate(roles):
            for b in roles[i + 1 :]:
                shared = sorted(by_role[a] & by_role[b])
                if shared:
                    asns = ", ".join(str(x) for x in shared[:3]) + (", ..." if len(shared) > 3 else "")
                    msg = f"{a} and {b} devices share ASN {asns}: eBGP drops routes through the other tier"
                    path = ("underlay", "asn", "leaf_base" if "leaf" in (a, b) else "spine")
                    yield self.finding(ctx, path, msg)

    @staticmethod
    def _ranges_collide(ctx: LintContext) -> bool:
        ranges = asn_ranges(ctx)
        return any(a.first <= b.last and b.first <= a.last for i, a in enumerate(ranges) for b in ranges[i + 1 :])


RULES: tuple[type[Rule], ...] = (DuplicateAddress, DuplicateAsn)
