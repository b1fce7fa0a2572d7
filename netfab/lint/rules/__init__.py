"""Lint rules, one module per topic. Each module lists its rules in RULES; nothing registers itself on import."""

from __future__ import annotations

from importlib import import_module

from netfab.lint.rule import Rule

TOPICS = ("qos", "ecn", "watchdog", "headroom", "mtu", "nic", "loadbalance", "platform", "topology",
          "addressing", "asn", "platform_gates", "platform_hashing", "platform_qos", "platform_pfc",
          "plan_ports", "plan_paths", "plan_addressing",
          "review_priority", "review_buffer", "review_hygiene", "model", "network", "strict_shaper")  # fmt: skip


def all_rules() -> list[type[Rule]]:
    rules: list[type[Rule]] = []
    for topic in TOPICS:
        rules.extend(import_module(f"netfab.lint.rules.{topic}").RULES)
    return rules
