"""A replica of the Linux kernel's IPv4 multipath hash, so the check can name the uplink of each flow.

The hard part is not SipHash but the `struct flow_keys` layout it hashes; tests hold both against the SipHash
reference vectors and against next hops a real kernel chose (`ip route get`).
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Sequence

from netfab.analyze.hashing import UDP_PROTOCOL
from netfab.analyze.kernel_model import KernelFlow

# --- the kernel's multipath hash, replicated -------------------------------------------------------------
# net/ipv4/route.c fib_multipath_hash() on a forwarded IPv4 packet, kernel >= 6.11 with the seed set:
#   policy 0: addresses; policy 1: 5-tuple; policy 3: the fields_mask fields, then jhash_2words(outer, 0, 0)
#   (fib_multipath_custom_hash_skb always folds in an inner hash, 0 without encapsulation).
# Each hash is flow_hash_from_keys_seed(): zero a struct flow_keys, fill the hashed fields (addr_type IPv4),
# order addresses and ports so both directions hash alike (__flow_hash_consistentify), and siphash-2-4 the
# bytes from `basic` on (48 of them with IPv4 addresses) under the key (seed << 32 | seed) twice. The result
# (0 -> 1) is shifted right by one: a 31-bit hash that fib_select_multipath / nexthop_select_path compares
# with each next hop's upper bound in order. Checked against `ip route get` on 6.18 for all four policies.
# Policy 1 on a packet that carries an skb->hash (l4_hash; e.g. from a connected socket's sk_txhash) uses that
# instead: the flow generator sends from unconnected sockets so the headers are what is hashed.

_M64 = (1 << 64) - 1
_M32 = 0xFFFFFFFF
_FLOW_KEYS_HASH_BYTES = 48
_OFF_PROTO, _OFF_PORTS, _OFF_ADDRS = 2, 28, 36
"""Offsets from flow_keys.basic: basic.ip_proto, ports (src, dst), addrs.v4addrs (src, dst)."""


def _rotl64(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & _M64


def siphash24(k0: int, k1: int, data: bytes) -> int:
    """SipHash-2-4 (lib/siphash.c) of data under the 128-bit key (k0, k1), as a 64-bit integer."""
    v0, v1 = k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D
    v2, v3 = k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573

    def rounds(n: int) -> None:
        nonlocal v0, v1, v2, v3
        for _ in range(n):
            v0 = (v0 + v1) & _M64
            v1 = _rotl64(v1, 13) ^ v0
            v0 = _rotl64(v0, 32)
            v2 = (v2 + v3) & _M64
            v3 = _rotl64(v3, 16) ^ v2
            v0 = (v0 + v3) & _M64
            v3 = _rotl64(v3, 21) ^ v0
            v2 = (v2 + v1) & _M64
            v1 = _rotl64(v1, 17) ^ v2
            v2 = _rotl64(v2, 32)

    full = len(data) - len(data) % 8
    for i in range(0, full, 8):
        m = int.from_bytes(data[i : i + 8], "little")
        v3 ^= m
        rounds(2)
        v0 ^= m
    b = ((len(data) & 0xFF) << 56) | int.from_bytes(data[full:], "little")
    v3 ^= b
    rounds(2)
    v0 ^= b
    v2 ^= 0xFF
    rounds(4)
    return v0 ^ v1 ^ v2 ^ v3


def _rol32(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _M32


def jhash_2words(a: int, b: int, initval: int) -> int:
    """include/linux/jhash.h jhash_2words (__jhash_nwords + __jhash_final)."""
    iv = (initval + 0xDEADBEEF + (2 << 2)) & _M32
    a, b, c = (a + iv) & _M32, (b + iv) & _M32, iv
    c ^= b
    c = (c - _rol32(b, 14)) & _M32
    a ^= c
    a = (a - _rol32(c, 11)) & _M32
    b ^= a
    b = (b - _rol32(a, 25)) & _M32
    c ^= b
    c = (c - _rol32(b, 16)) & _M32
    a ^= c
    a = (a - _rol32(c, 4)) & _M32
    b ^= a
    b = (b - _rol32(a, 14)) & _M32
    c ^= b
    c = (c - _rol32(b, 24)) & _M32
    return c


def kernel_multipath_hash(seed: int, policy: int, fields_mask: int, flow: KernelFlow) -> int:
    """The 31-bit hash the kernel's fib_multipath_hash gives a forwarded IPv4 packet of `flow`."""
    if policy in (0, 2):  # 2 = L3 or inner L3: plain UDP has no inner header
        mask = 0x0003
    elif policy == 1:
        mask = 0x0037
    elif policy == 3:
        mask = fields_mask
    else:
        raise ValueError(f"fib_multipath_hash_policy {policy} is not 0-3")
    if policy == 3 and not mask & 0x0037:
        outer = 0  # fib_multipath_custom_hash_outer: no outer field selected
    else:
        src = socket.inet_aton(flow.src_ip) if mask & 0x0001 else bytes(4)
        dst = socket.inet_aton(flow.dst_ip) if mask & 0x0002 else bytes(4)
        sport = struct.pack(">H", flow.src_port) if mask & 0x0010 else bytes(2)
        dport = struct.pack(">H", flow.dst_port) if mask & 0x0020 else bytes(2)
        # __flow_hash_consistentify compares the raw network-order words as host (little-endian) integers.
        if int.from_bytes(dst, "little") < int.from_bytes(src, "little"):
            src, dst = dst, src
        if int.from_bytes(dport, "little") < int.from_bytes(sport, "little"):
            sport, dport = dport, sport
        keys = bytearray(_FLOW_KEYS_HASH_BYTES)
        if mask & 0x0004:
            keys[_OFF_PROTO] = flow.protocol or UDP_PROTOCOL
        keys[_OFF_PORTS : _OFF_PORTS + 4] = sport + dport
        keys[_OFF_ADDRS : _OFF_ADDRS + 8] = src + dst
        key = ((seed & _M32) << 32) | (seed & _M32)
        outer = (siphash24(key, key, bytes(keys)) & _M32) or 1
    h = jhash_2words(outer, 0, 0) if policy == 3 else outer
    return h >> 1


def select_member(hash31: int, weights: Sequence[int]) -> int:
    """Hash-threshold next-hop selection: the first member whose upper bound the hash does not exceed
    (upper bound = round(cumulative weight * 2**31 / total) - 1, as nh_hthr_group_rebalance sets it)."""
    total = sum(weights)
    cum = 0
    for i, w in enumerate(weights):
        cum += w
        if hash31 <= ((cum << 31) + total // 2) // total - 1:
            return i
    return len(weights) - 1
