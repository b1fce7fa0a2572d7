"""ECMP hashing as the model sees it: which header fields a flow exposes, and how a switch turns them into a
next hop.

What matters for collisions is not the exact polynomial an ASIC uses but three properties this model keeps:
- flows whose hashed fields are identical take the same path at every hop (no hash can split them);
- each switch mixes in its own seed, so hops are independent unless two tiers share a seed;
- with a shared seed the same hash value is reduced modulo each group size, so choices at successive hops
  correlate (polarisation: a spine only ever sees the flows that hashed to it, and spreads them over a
  fraction of its own uplinks).

The mixer is murmur3's 32-bit finaliser, vectorised over uint32 arrays: cheap, and every input bit affects
every output bit, which is what a CRC-based ASIC hash gives the flows of a real fabric.

RoCEv2 flows: UDP destination port is always 4791; the NIC picks a UDP source port per QP (random per QP
here, or one fixed port for NICs that do not vary it) and the BTH destination QP number is random per QP.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import numpy as np

from netfab.intent.types import HashField

ROCE_UDP_PORT = 4791
UDP_PROTOCOL = 17
ROCE_SPORT_BASE = 0xC000
"""ConnectX draws RoCEv2 UDP source ports from the dynamic range 49152-65535."""
FIXED_SPORT = ROCE_SPORT_BASE

SportMode = Literal["per_qp", "fixed"]

_M1 = np.uint32(0x85EBCA6B)
_M2 = np.uint32(0xC2B2AE35)
_S16 = np.uint32(16)
_S13 = np.uint32(13)
_BASIS = np.uint32(0x9747B28C)
_K_SPORT = np.uint32(0x9E3779B1)
_K_QP = np.uint32(0x85EBCA77)

FIVE_TUPLE: frozenset[str] = frozenset(
    str(f) for f in (HashField.SRC_IP, HashField.DST_IP, HashField.IP_PROTOCOL, HashField.SRC_PORT, HashField.DST_PORT)
)
DEST_QP = str(HashField.ROCE_DEST_QP)


def mix32(x: np.ndarray) -> np.ndarray:
    """murmur3 fmix32 on a uint32 array (new array; wraps modulo 2**32 as the ASIC's arithmetic does).

    Written with in-place steps: this runs once per flow per hop per trial, and temporaries dominate.
    """
    h = x >> _S16
    h ^= x
    h *= _M1
    t = h >> _S13
    h ^= t
    h *= _M2
    np.right_shift(h, _S16, out=t)
    h ^= t
    return h


def combine(h: np.ndarray, value: np.ndarray | int) -> np.ndarray:
    """Fold one field into a running hash."""
    return mix32(h ^ np.asarray(value, dtype=np.uint32))


def pair_key(fields: Iterable[str], src_ip: np.ndarray, dst_ip: np.ndarray) -> np.ndarray:
    """The part of the flow hash that is the same for every QP of a GPU pair (addresses and fixed ports).

    Other hash fields (IPv6 flow label, inner headers, BTH opcode, ingress port) carry the same value for every
    RoCEv2-over-IPv4 flow, or follow from the path already taken: they add no entropy and are left out.
    """
    enabled = set(fields)
    h = np.full(src_ip.shape, _BASIS, dtype=np.uint32)
    if str(HashField.SRC_IP) in enabled:
        h = combine(h, src_ip)
    if str(HashField.DST_IP) in enabled:
        h = combine(h, dst_ip)
    if str(HashField.IP_PROTOCOL) in enabled:
        h = combine(h, UDP_PROTOCOL)
    if str(HashField.DST_PORT) in enabled:
        h = combine(h, ROCE_UDP_PORT)
    return h


def has_qp_entropy(fields: Iterable[str], sport: SportMode) -> bool:
    """Whether the QPs of one GPU pair can take different paths at all."""
    enabled = set(fields)
    return DEST_QP in enabled or (str(HashField.SRC_PORT) in enabled and sport == "per_qp")


def flow_key(
    fields: Iterable[str],
    pair: np.ndarray,
    shape: tuple[int, ...],
    sport: np.ndarray | None,
    dest_qp: np.ndarray | None,
) -> np.ndarray:
    """Full flow hash input of `shape`: the pair key plus the per-QP fields that are hashed.

    `sport` is None when the NIC uses one fixed UDP source port; `dest_qp` the per-QP BTH destination QP
    (None when not hashed). `pair` broadcasts to `shape`. Per-QP fields enter XOR-linearly (odd multipliers
    keep distinct values distinct), as they do in the CRC an ASIC hashes with; the avalanche comes from the
    per-hop mix in `next_hop`, so this per-flow-per-trial step stays a few cheap operations.
    """
    enabled = set(fields)
    h = np.array(np.broadcast_to(pair, shape), dtype=np.uint32)
    if str(HashField.SRC_PORT) in enabled:
        if sport is None:
            h ^= np.uint32((FIXED_SPORT * int(_K_SPORT)) & 0xFFFFFFFF)
        else:
            h ^= sport * _K_SPORT
    if DEST_QP in enabled and dest_qp is not None:
        h ^= dest_qp * _K_QP
    return h


def next_hop(key: np.ndarray, seed: np.ndarray | int, group_size: np.ndarray | int) -> np.ndarray:
    """Member index a switch with `seed` picks for flows with hash input `key`: hash mod group size."""
    h = mix32(key ^ np.asarray(seed, dtype=np.uint32))
    if isinstance(group_size, (int, np.integer)):
        # One modulus for every flow (the common case): numpy's uint32 `%` by a scalar divides element by
        # element (~30 ns each here), while its `//` by a scalar uses a precomputed reciprocal (libdivide),
        # so h - (h // m) * m, or h & (m - 1) for a power of two, gives the same remainder 4-100x faster.
        m = int(group_size)
        if m & (m - 1) == 0:
            h &= np.uint32(m - 1)
        else:
            divisor = np.uint32(m)
            quotient = h // divisor
            quotient *= divisor
            h -= quotient
        return h.astype(np.int64)
    return (h % np.asarray(group_size, dtype=np.uint32)).astype(np.int64)


# --- Linux kernel multipath hash (the namespace lab's switches) -----------------------------------------

KERNEL_FIELD_BITS: dict[str, int] = {
    str(HashField.SRC_IP): 0x0001,
    str(HashField.DST_IP): 0x0002,
    str(HashField.IP_PROTOCOL): 0x0004,
    str(HashField.IPV6_FLOW_LABEL): 0x0008,
    str(HashField.SRC_PORT): 0x0010,
    str(HashField.DST_PORT): 0x0020,
    str(HashField.INNER_SRC_IP): 0x0040,
    str(HashField.INNER_DST_IP): 0x0080,
    str(HashField.INNER_IP_PROTOCOL): 0x0100,
    str(HashField.INNER_SRC_PORT): 0x0400,
    str(HashField.INNER_DST_PORT): 0x0800,
}
"""net.ipv4.fib_multipath_hash_fields bits (include/net/ip_fib.h, FIB_MULTIPATH_HASH_FIELD_*)."""

KERNEL_DEFAULT_FIELDS_MASK = 0x0007


def kernel_hash_fields(policy: int, fields_mask: int = KERNEL_DEFAULT_FIELDS_MASK) -> frozenset[str]:
    """Fields net.ipv4.fib_multipath_hash_policy hashes on (LAB.md): 0 L3, 1 L4 5-tuple, 2 L3 or inner L3
    (plain RoCE has no inner header, so outer L3), 3 custom = fib_multipath_hash_fields bitmask."""
    if policy in (0, 2):
        return frozenset({str(HashField.SRC_IP), str(HashField.DST_IP)})
    if policy == 1:
        return FIVE_TUPLE
    if policy == 3:
        return frozenset(f for f, bit in KERNEL_FIELD_BITS.items() if fields_mask & bit)
    raise ValueError(f"fib_multipath_hash_policy {policy} is not 0, 1, 2 or 3")


def kernel_policy_for(fields: Iterable[str]) -> tuple[int, int]:
    """The IPv4 (policy, fields mask) a Linux switch runs for the intent's fields, as the frr templates render
    it: a built-in policy when it hashes exactly those fields (0 = addresses, 1 = 5-tuple), else 3. Fields the
    kernel cannot read (BTH destination QP, ingress port) and the IPv6-only flow label are dropped, so the lab
    can have less entropy than the intent."""
    mask = 0
    for f in fields:
        if str(f) != str(HashField.IPV6_FLOW_LABEL):
            mask |= KERNEL_FIELD_BITS.get(str(f), 0)
    if mask == 0x0003:
        return 0, mask
    if mask == 0x0037:
        return 1, mask
    return 3, mask
