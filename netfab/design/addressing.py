"""Address carving. Every allocation is a pure function of a stable index, so growth only appends.

Addresses in the plan are strings ("10.64.0.0/31"): a 24k-GPU fabric has >100,000 of them and
ipaddress objects cost ~5 us each to build, which was most of the design stage's time.
"""

from __future__ import annotations

import socket
import struct
from ipaddress import IPv4Network

from netfab.design.plan import AddressLedger

_pack = struct.Struct("!I").pack


def ip_str(value: int) -> str:
    return socket.inet_ntoa(_pack(value))


_OCTETS = tuple(str(i) for i in range(256))
_OCTETS31 = tuple(f"{i}/31" for i in range(256))


class PoolText:
    """One pool's addresses as text, its bounds read once: `num_addresses` and `network_address` are computed
    on every read (224,312 allocations at 100k GPUs). Every result is a pure function of its index, as growth
    needs, and an index beyond the pool raises PoolExhausted.

    A 100k-GPU design writes ~210,000 /31s; both ends share their first three octets, so the "a.b.c." prefix
    is formatted once per /24 (`prefixes`, shared by the fabric's pools) and each string is one concatenation
    (~4x cheaper than two inet_ntoa calls and two f-strings).

    Each index handed out is entered in `ledger` (an append, ~2 % of the design's time), so PLAN005 can check
    the allocation as integers."""

    __slots__ = ("_base", "_hosts", "_pairs", "_prefixes", "_size", "ledger", "pool")

    def __init__(self, pool: IPv4Network, prefixes: dict[int, str]) -> None:
        self.pool = pool
        self._base = int(pool.network_address)
        self._size = pool.num_addresses
        self._prefixes = prefixes
        self.ledger = AddressLedger(str(pool), self._base)
        self._hosts, self._pairs = self.ledger.hosts.append, self.ledger.pairs.append

    def host(self, index: int, what: str) -> str:
        """The index-th usable address (0-based); the network address is skipped."""
        if index + 1 >= self._size:
            raise PoolExhausted(self.pool, what, index + 2)
        self._hosts(index)
        return ip_str(self._base + index + 1)

    def p2p(self, index: int, what: str) -> tuple[str, str, str, str]:
        """The index-th /31: its even address, its odd address, and both as CIDRs."""
        if 2 * index + 1 >= self._size:
            raise PoolExhausted(self.pool, what, 2 * index + 2)
        self._pairs(index)
        even = self._base + 2 * index
        if even & 1:  # never (a pool's network address is even unless it is a /32, which has no /31)
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


def split_blocks(pool: IPv4Network, blocks: int) -> list[IPv4Network]:
    """Split a pool into the smallest power-of-two number of equal blocks >= blocks."""
    extra_bits = max(0, (blocks - 1).bit_length())
    if pool.prefixlen + extra_bits > 31:
        raise PoolExhausted(pool, f"{blocks} equal blocks", blocks * 2)
    return list(pool.subnets(prefixlen_diff=extra_bits))[:blocks]
