"""Capability data == what the renderers can express: the contract between lint and render.

For every platform and every feature toggle, a lab-sized intent (intent/lab.yaml with every tier on that
platform) is linted (intent rules and plan rules) and then designed and rendered (every switch and every GPU
server). The contract:

- lint clean  => every device renders (no UnsupportedFeature, no crash);
- render refuses (UnsupportedFeature) => lint has an error;
- and, for these toggles, the converse: a lint error means the renderer refuses too. Lint that is stricter
  than the renderer is listed in STRICTER with the reason, so a capability switched off by mistake shows.

A failure names the platform, the toggle, the renderer's refusal and the lint findings side by side.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from lint_helpers import CNP, DEFAULT, DELETE, REPO, ROCE, merged, write_intent

from netfab.core.findings import Finding, Severity
from netfab.design import DesignError, design
from netfab.intent import HashField
from netfab.lint.api import lint_source, run_rules
from netfab.lint.context import LintContext
from netfab.lint.registry import RuleRegistry, default_registry
from netfab.load import load_intent_source
from netfab.render.device import render_device, render_server
from netfab.render.environment import UnsupportedFeature

# A release where every version-gated feature of the platform is open; frr has no release gates.
RELEASE: dict[str, str | None] = {
    "arista_eos": "4.33.1F",
    "nvidia_cumulus": "5.12.0",
    "sonic": "202511",
    "cisco_nxos": "10.5(1)F",
    "juniper_junos": "23.4R2",
    "frr": None,
}
BASE_FIELDS = ["src_ip", "dst_ip", "ip_protocol", "src_port", "dst_port"]
WATCHDOG = {"detect": "200ms", "restore": "400ms", "polling": "100ms", "action": "drop"}
STRICT_CTL = {"name": "ctl", "kind": "other", "dscp": [56], "priority": 7, "scheduling": "strict"}


@cache
def _lab() -> dict[str, Any]:
    with (REPO / "intent" / "lab.yaml").open(encoding="utf-8") as fh:
        data: dict[str, Any] = yaml.safe_load(fh)
    return data


def base_intent(platform: str) -> dict[str, Any]:
    """intent/lab.yaml with every tier on `platform` at a current release, /31 links (the addressing every
    platform renders), the RoCE/CNP/default classes and a drop watchdog where the platform has one."""
    data = copy.deepcopy(_lab())
    for tier in ("leaf", "spine"):
        data["topology"][tier]["platform"] = platform
        if RELEASE[platform] is not None:
            data["topology"][tier]["os_version"] = RELEASE[platform]
    data["underlay"]["addressing"] = "p2p31"
    data["qos"]["classes"] = [ROCE, CNP, DEFAULT]
    data["qos"]["pfc"]["watchdog"] = None if platform == "frr" else dict(WATCHDOG)
    if platform == "cisco_nxos":  # NX-OS renders no timers (CAP024): the watchdog runs at the device's own
        data["qos"]["pfc"]["watchdog"] = {"action": "drop"}
    data["load_balancing"]["hash_fields"] = list(BASE_FIELDS)
    return data


def _fields(*fields: str) -> dict[str, Any]:
    return {"load_balancing": {"hash_fields": list(fields)}}


def _classes(*classes: dict[str, Any]) -> dict[str, Any]:
    return {"qos": {"classes": list(classes)}}


def _with(cls: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {k: v for k, v in {**cls, **changes}.items() if v is not DELETE}


def _watchdog(**timers: str) -> dict[str, Any]:
    return {"qos": {"pfc": {"watchdog": {**WATCHDOG, **timers}}}}


FAST = {"topology": {"servers": {"nic_speed": "400G"}, "leaf": {"uplink_speed": "400G"}}}

# Toggle name -> patch on the platform's base intent.
TOGGLES: dict[str, dict[str, Any]] = {
    "baseline": {},
    **{f"hash-{f.value}": _fields(*BASE_FIELDS, f.value) for f in HashField if f.value not in BASE_FIELDS},
    "hash-rocev2_dest_qp-no_os_version": {
        **_fields(*BASE_FIELDS, "rocev2_dest_qp"),
        "topology": {"leaf": {"os_version": DELETE}, "spine": {"os_version": DELETE}},
    },
    "hash-qp_only_addresses": _fields("src_ip", "dst_ip", "rocev2_dest_qp"),
    "hash-single_src_port": _fields("src_ip", "dst_ip", "ip_protocol", "src_port"),
    "hash-single_src_ip": _fields("src_ip", "ip_protocol", "src_port", "dst_port"),
    "hash-ports_only": _fields("src_port", "dst_port"),
    "hash_seed": {"load_balancing": {"hash_seed": 12345}},
    "adaptive_routing": {"load_balancing": {"adaptive_routing": True}},
    "adaptive_routing-400g": {**FAST, "load_balancing": {"adaptive_routing": True}},
    "packet_spraying": {"load_balancing": {"packet_spraying": True}},
    "packet_spraying-400g": {**FAST, "load_balancing": {"packet_spraying": True}},
    **{f"watchdog-{action}": _watchdog(action=action) for action in ("drop", "forward", "alert")},
    "watchdog-off": {"qos": {"pfc": {"watchdog": None}}},
    "watchdog-fine_timers": _watchdog(detect="205ms", restore="401ms", polling="100500us"),
    "watchdog-detect_not_in_polls": _watchdog(detect="250ms", polling="100ms"),
    "watchdog-long_detect": _watchdog(detect="6s", restore="10s", polling="1s"),
    "watchdog-fast_polling": _watchdog(detect="100ms", restore="200ms", polling="50ms"),
    "trust_pcp": {"qos": {"trust": "pcp"}, "nic": {"trust": "pcp"}},
    "unnumbered": {"underlay": {"addressing": "unnumbered"}},
    "explicit_headroom": {"qos": {"buffers": {"headroom": "300KB"}}},
    "cable_150m": {"topology": {"leaf": {"uplink_cable_m": 150}}},
    "two_strict_classes": _classes(ROCE, CNP, DEFAULT, STRICT_CTL),
    "dwrr_fractional_weights": _classes(_with(ROCE, weight=50.5), CNP, _with(DEFAULT, weight=49.5)),
    "dwrr_tiny_weight": _classes(_with(ROCE, weight=99.6), CNP, _with(DEFAULT, weight=0.4)),
    "ecn_fractional_pmax": _classes(_with(ROCE, ecn={"kmin": "150KB", "kmax": "1500KB", "pmax": 12.5}), CNP, DEFAULT),
    "ecn_averaging_weight": _classes(_with(ROCE, ecn={"kmin": "150KB", "kmax": "1500KB", "weight": 3}), CNP, DEFAULT),
    "ecn_kmax_3mb": _classes(_with(ROCE, ecn={"kmin": "150KB", "kmax": "3MB"}), CNP, DEFAULT),
    "no_default_class": _classes(_with(ROCE, weight=100), CNP),
}

# Lint deliberately stricter than the renderer: (platform, toggle) -> why. Keep it short and justified.
# A design rule, not a capability: the platform can classify by PCP, but no routed (untagged) fabric hop carries it.
_PCP_ROUTED = "REV031: PCP trust on a routed fabric (a reviewer's design rule, not a platform capability)"
# NX-OS watchdog timers: the renderer sees only the plan's values (defaults included), so it cannot tell timers
# the intent states from defaulted ones; lint refuses stated timers, which NX-OS would silently replace.
_NXOS_TIMERS = "CAP024: NX-OS watchdog timers are not rendered (CLI unconfirmed, FIDELITY_REVIEW NX-1)"
STRICTER: dict[tuple[str, str], str] = {
    ("nvidia_cumulus", "trust_pcp"): _PCP_ROUTED,
    ("sonic", "trust_pcp"): _PCP_ROUTED,
    **{
        ("cisco_nxos", toggle): _NXOS_TIMERS
        for toggle in (
            "watchdog-drop",
            "watchdog-fine_timers",
            "watchdog-detect_not_in_polls",
            "watchdog-long_detect",
            "watchdog-fast_polling",
        )
    },
}


@dataclass
class Outcome:
    lint_errors: list[Finding]
    refusal: str | None

    def explain(self) -> str:
        found = "\n  ".join(f"{f.rule_id}: {f.message}" for f in self.lint_errors) or "(none)"
        return f"renderer: {self.refusal or 'rendered'}\n lint errors:\n  {found}"


def lint_and_render(data: dict[str, Any], tmp_path: Path) -> Outcome:
    source = load_intent_source([write_intent(data, tmp_path / "intent.yaml")])
    result = lint_source(source)
    errors = [f for f in result.findings if f.severity is Severity.ERROR]
    assert result.intent is not None, "the toggle must produce a schema-valid intent:\n" + "\n".join(
        f.message for f in errors
    )
    try:
        plan = design(result.intent)
    except DesignError as exc:
        return Outcome(errors + exc.findings, "design refused")
    plan_rules = RuleRegistry(r for r in default_registry() if r.needs_plan)
    plan_findings, _ = run_rules(plan_rules, LintContext.build(result.intent, source, plan))
    errors += [f for f in plan_findings if f.severity is Severity.ERROR]
    try:
        for device in plan.devices.values():
            render_device(device)
        for server in plan.servers:
            render_server(server, plan)
    except UnsupportedFeature as exc:
        return Outcome(errors, str(exc))
    return Outcome(errors, None)


CASES = [(p, t) for p in RELEASE for t in TOGGLES]


@pytest.mark.parametrize(("platform", "toggle"), CASES, ids=[f"{p}-{t}" for p, t in CASES])
def test_lint_and_render_agree(platform: str, toggle: str, tmp_path: Path) -> None:
    outcome = lint_and_render(merged(base_intent(platform), TOGGLES[toggle]), tmp_path)
    if outcome.refusal is not None:
        assert outcome.lint_errors, f"lint passed but the renderer refused:\n {outcome.explain()}"
    elif outcome.lint_errors and (platform, toggle) not in STRICTER:
        pytest.fail(f"lint failed but the renderer has no problem (capability data too strict?):\n {outcome.explain()}")


@pytest.mark.parametrize("platform", list(RELEASE))
def test_baseline_is_clean(platform: str, tmp_path: Path) -> None:
    """Every toggle is measured against an intent that lints clean and renders on its platform."""
    outcome = lint_and_render(base_intent(platform), tmp_path)
    assert not outcome.lint_errors and outcome.refusal is None, outcome.explain()


def test_stricter_entries_are_real_cases() -> None:
    assert set(STRICTER) <= set(CASES)
