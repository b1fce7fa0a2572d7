"""Address carving. Every allocation is a pure function of a stable index, so growth only appends.

Addresses in the plan are strings ("10.64.0.0/31"): a 24k-GPU fabric has >100,000 of them and
ipaddress objects cost ~5 us each to build, which was most of the design stage's time.
"""

from __future__ import annotations

import socket
import struct
from ipaddress import IPv4Network

_pack = struct.Struct("!I").pack


def ip_str(value: int) -> str:
    return socket.inet_ntoa(_pack(value))


_OCTETS = tuple(str(i) for i in range(256))
_OCTETS31 = tuple(f"{i}/31" for i in range(256))


class P2pText:
    """The four strings of a /31 (both addresses, both CIDRs) from its even address. A 100k-GPU design writes
    ~210,000 of them; both ends share their first three octets, so the "a.b.c." prefix is formatted once per
    /24 and each string is one concatenation (~4x cheaper than two inet_ntoa calls and two f-strings)."""

    def __init__(self) -> None:
        self._prefixes: dict[int, str] = {}

    def __call__(self, even: int) -> tuple[str, str, str, str]:
        if even & 1:  # never from p2p31 (a pool's network address is even); kept exact all the same
            a, b = ip_str(even), ip_str(even + 1)
            return a, b, f"{a}/31", f"{b}/31"
        prefix = self._prefixes.get(even >> 8)
        if prefix is None:
            prefix = self._prefixes[even >> 8] = ip_str(even)[: -len(_OCTETS[even & 255])]
        last = even & 255  # even, so last + 1 <= 255: the odd end never carries into the third octet
        odd = last + 1
        return prefix + _OCTETS[last], prefix + _OCTETS[odd], prefix + _OCTETS31[last], prefix + _OCTETS31[odd]


class PoolExhausted(ValueError):
    def __init__(self, pool: IPv4Network, what: str, needed: int) -> None:
        super().__init__(f"pool {pool} has room for {pool.num_addresses} addresses, {what} needs {needed}")
        self.pool = pool
        self.what = what
        self.needed = needed


def host_address(pool: IPv4Network, index: int, what: str) -> str:
    """The index-th usable address (0-based) of a pool; the network address is skipped."""
    if index + 1 >= pool.num_addresses:
        raise PoolExhausted(pool, what, index + 2)
    return ip_str(int(pool.network_address) + index + 1)


def p2p31(pool: IPv4Network, index: int, what: str) -> tuple[int, int]:
    """The index-th /31 of a pool as (even address, odd address) integers."""
    if 2 * index + 1 >= pool.num_addresses:
        raise PoolExhausted(pool, what, 2 * index + 2)
    base = int(pool.network_address) + 2 * index
    return base, base + 1


def split_blocks(pool: IPv4Network, blocks: int) -> list[IPv4Network]:
    """Split a pool into the smallest power-of-two number of equal blocks >= blocks."""
    extra_bits = max(0, (blocks - 1).bit_length())
    if pool.prefixlen + extra_bits > 31:
        raise PoolExhausted(pool, f"{blocks} equal blocks", blocks * 2)
    return list(pool.subnets(prefixlen_diff=extra_bits))[:blocks]
