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
