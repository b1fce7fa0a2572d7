"""Shared by the analyze tests: the example intents (designed once per session) and a miniature clos3."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from netfab.design import design
from netfab.design.plan import FabricPlan
from netfab.intent import Intent

INTENTS = Path(__file__).resolve().parents[2] / "intent"


@cache
def example(name: str) -> tuple[Intent, FabricPlan]:
    """An example intent and its plan, designed once per test session (clos3-24k takes ~1 s)."""
    intent = Intent.model_validate(yaml.safe_load((INTENTS / f"{name}.yaml").read_text()))
    return intent, design(intent)


def small_clos3(**load_balancing: Any) -> tuple[Intent, FabricPlan]:
    """2 pods x 4 racks x 2 servers x 4 GPUs; 4 spines per pod in 2 planes, 4 superspines: a clos3 in miniature."""
    doc = {
        "version": 1,
        "fabric": {"name": "mini-clos3"},
        "topology": {
            "style": "clos3",
            "pods": 2,
            "racks_per_pod": 4,
            "servers_per_rack": 2,
            "planes": 2,
            "servers": {"gpus_per_server": 4, "nic_speed": "400G"},
            "leaf": {"ports": 16, "uplinks": 8, "uplink_speed": "400G", "oversubscription": "1:1"},
            "spine": {"count": 4, "ports": 16, "uplinks": 4, "uplink_speed": "400G", "oversubscription": "2:1"},
            "superspine": {"count": 4, "ports": 16},
        },
        "load_balancing": {"hash_fields": ["src_ip", "dst_ip", "ip_protocol", "src_port", "dst_port"]} | load_balancing,
    }
    intent = Intent.model_validate(doc)
    return intent, design(intent)
