"""GPU server NICs: trust, PFC vector, RoCE MTU and DCQCN congestion control (ConnectX semantics)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from netfab.intent.base import IntentModel
from netfab.intent.types import Dscp, Mbps, Microseconds, Mtu, Percent, Priority, mbps, us


class ReactionPoint(IntentModel):
    """DCQCN reaction point (the sender's rate limiter). Defaults are the ConnectX firmware defaults."""

    rate_reduce_monitor_period: Microseconds = us("4us")
    time_reset: Microseconds = us("300us")
    """rpg_time_reset: time between rate increases without CNPs."""
    byte_reset: int = Field(default=32767, ge=0)
    """rpg_byte_reset in bytes (0 = off)."""
    threshold: int = Field(default=1, ge=1, le=31)
    ai_rate: Mbps = mbps("5Mbps")
    hai_rate: Mbps = mbps("50Mbps")
    max_rate: Mbps = mbps("0Mbps")
    """0 = line rate."""
    min_rate: Mbps = mbps("1Mbps")
    min_dec_fac: Percent = 50
    gd: int = Field(default=11, ge=0, le=15)
    initial_alpha: int = Field(default=1023, ge=1, le=1023)
    dce_tcp_g: int = Field(default=1019, ge=0, le=1023)
    dce_tcp_rtt: Microseconds = us("1us")
    clamp_tgt_rate: bool = False
    clamp_tgt_rate_after_time_inc: bool = True


class NotificationPoint(IntentModel):
    """DCQCN notification point (the receiver that generates CNPs)."""

    min_time_between_cnps: Microseconds = us("4us")
    cnp_dscp: Dscp = 48
    cnp_priority: Priority = 6


class Dcqcn(IntentModel):
    enabled: bool = True
    """false = run without DCQCN (PFC plus the collective library's own congestion control)."""
    priorities: list[Priority] | None = None
    """Priorities DCQCN acts on. Omitted = the lossless priorities."""
    rp: ReactionPoint = ReactionPoint()
    np: NotificationPoint = NotificationPoint()


class Nic(IntentModel):
    trust: Literal["dscp", "pcp"] = "dscp"
    pfc_priorities: list[Priority] | None = None
    """PFC vector on the NIC. Omitted = follow the fabric's PFC priorities."""
    roce_mtu: Literal[256, 512, 1024, 2048, 4096] = 4096
    mtu: Mtu | None = None
    """Netdev (IP) MTU of the servers' NICs on this network. Omitted = roce_mtu + 104 (the RoCEv2 headers
    mlx5 reserves; NVIDIA's 4200 for a 4096 path MTU), at least 1500. Never above the switches' link MTU."""
    roce_dscp: Dscp | None = None
    """DSCP the NIC stamps on RoCE traffic (ToS for rdma_cm). Omitted = the RoCE class's first DSCP."""
    dcqcn: Dcqcn = Dcqcn()
