"""Underlay: eBGP (unnumbered or /31), ASN scheme, address pools, MTU."""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Literal

from pydantic import Field

from netfab.intent.base import IntentModel
from netfab.intent.types import Asn, Mtu


class AsnScheme(IntentModel):
    """RFC 7938 style: all spines of a pod share an ASN, every leaf has its own."""

    superspine: Asn = 64900
    spine: Asn = 65000
    """Spine ASN; with pods (clos3, or rail_optimized with sus_per_pod) pod p (1-based) uses spine + p - 1."""
    spine_per_switch: bool = False
    """Give spine n (1-based, fabric-wide) its own ASN, spine + n - 1, instead of one per pod. Some operators
    number every switch uniquely; it lets BGP install down-up routes after a failure, which on lossless
    classes can close a PFC deadlock (`netfab analyze` checks it: ANALYZE006)."""
    leaf_base: Asn = 65100
    """Leaf n (1-based, in design order) uses leaf_base + n - 1. Use a 4-byte private base
    (4200000000) for more than ~400 leaves."""


class LoopbackPools(IntentModel):
    """One pool per role, so growing one role never renumbers another."""

    superspine: IPv4Network = IPv4Network("10.0.0.0/24")
    spine: IPv4Network = IPv4Network("10.0.1.0/24")
    leaf: IPv4Network = IPv4Network("10.0.16.0/20")


class P2pPools(IntentModel):
    """Pools for /31 point-to-point links (addressing: p2p31)."""

    leaf_spine: IPv4Network = IPv4Network("10.128.0.0/15")
    spine_superspine: IPv4Network = IPv4Network("10.130.0.0/16")


class Underlay(IntentModel):
    addressing: Literal["unnumbered", "p2p31"] = "unnumbered"
    """unnumbered: BGP on interfaces with IPv6 link-local next hops (RFC 5549); p2p31: /31 per link."""
    mtu: Mtu = 9216
    asn: AsnScheme = AsnScheme()
    loopbacks: LoopbackPools = LoopbackPools()
    p2p: P2pPools = P2pPools()
    hosts: IPv4Network = IPv4Network("10.64.0.0/12")
    """GPU NIC addressing: one /31 per NIC link (leaf gets the even address, the NIC the odd one). In
    rail_optimized the pool is split into one block per rail (hosts route their rail's block via that rail's
    leaf); in clos3 NICs are numbered through the whole pool in pod/rack/server order."""
    max_paths: int = Field(default=64, ge=1, le=1024)
    bfd: bool = False
