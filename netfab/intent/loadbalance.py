"""Load balancing: ECMP hash fields (incl. RoCE BTH destination QP), seed, QPs, adaptive routing."""

from __future__ import annotations

from pydantic import Field

from netfab.intent.base import IntentModel
from netfab.intent.types import HashField


def _default_fields() -> list[HashField]:
    return [HashField.SRC_IP, HashField.DST_IP, HashField.IP_PROTOCOL, HashField.SRC_PORT, HashField.DST_PORT]


class LoadBalancing(IntentModel):
    hash_fields: list[HashField] = Field(default_factory=_default_fields, min_length=1)
    """RoCEv2 always uses UDP destination port 4791, so entropy must come from the UDP source port
    (which NICs vary per QP) or the BTH destination QP."""
    hash_seed: int | None = Field(default=None, ge=0, le=4294967295)
    """Identical seeds on every tier polarise ECMP; omitted = derived per device from its name."""
    qps_per_gpu_pair: int = Field(default=1, ge=1, le=1024)
    """Queue pairs per GPU pair the collective library opens (NCCL_IB_QPS_PER_CONNECTION); Meta used 16."""
    adaptive_routing: bool = False
    packet_spraying: bool = False
