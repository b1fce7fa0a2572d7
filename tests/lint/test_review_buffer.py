"""REV020 and analyze sum the same headroom: lint's per-switch figure from the intent's counts equals analyze's
busiest switch of the role from the expanded plan (device by device, port by port)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lint_helpers import CLOS3, RAIL, REPO, merged, write_intent

from netfab.analyze.lossless_budget import analyze_lossless
from netfab.design import design
from netfab.lint.api import validate
from netfab.lint.context import LintContext
from netfab.lint.rules.review_buffer import headroom_reservations
from netfab.load import load_intent_source

LONG = {"topology": {"leaf": {"uplink_cable_m": 2000}, "servers": {"cable_m": 50}}}
STORAGE = {"name": "storage", "dscp": [24], "priority": 4, "lossless": True, "weight": 10,
           "ecn": {"kmin": "150KB", "kmax": "1500KB"}}  # fmt: skip


def _two_lossless(base: dict[str, Any]) -> dict[str, Any]:
    classes = [dict(c) for c in base["qos"]["classes"]]
    classes[0]["weight"] = 40
    return merged(base, {"qos": {"classes": [*classes, STORAGE]}})


CASES = {"rail": RAIL, "clos3": CLOS3, "rail-long": merged(RAIL, LONG), "clos3-two-lossless": _two_lossless(CLOS3)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lint_and_analyze_reserve_the_same_bytes(name: str, tmp_path: Path) -> None:
    source = load_intent_source([write_intent(CASES[name], tmp_path / "i.yaml")])
    intent, problems = validate(source)
    assert intent is not None, problems
    ctx = LintContext.build(intent, source)
    prios = len(intent.qos.pfc_priorities)
    budget = analyze_lossless(intent, design(intent, "i.yaml"))
    analyzed = {s.role: s.reserved_bytes for s in budget.switches}
    linted = {t.role: round(sum(p.ports * p.per_port for p in headroom_reservations(ctx, t.role)) * prios)
              for t in ctx.tiers}  # fmt: skip
    assert linted == analyzed


def test_the_example_fabric_agrees_too(tmp_path: Path) -> None:
    source = load_intent_source([REPO / "intent" / "rail-4su.yaml"])
    intent, _ = validate(source)
    assert intent is not None
    ctx = LintContext.build(intent, source)
    prios = len(intent.qos.pfc_priorities)
    budget = analyze_lossless(intent, design(intent, "rail-4su.yaml"))
    for s in budget.switches:
        assert round(sum(p.ports * p.per_port for p in headroom_reservations(ctx, s.role)) * prios) == s.reserved_bytes
