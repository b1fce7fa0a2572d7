"""CAP024: a PFC watchdog timer the rendered configuration does not carry is never silent (FIDELITY_REVIEW NV-3,
NX-1). Cumulus has no restore timer (documented: it restores after one clean poll): an info note. NX-OS timer
CLI is unconfirmed, so netfab renders none: timers the intent states are refused, omitted ones are noted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lint_helpers import DELETE, RAIL, lint_data, merged

from netfab.core.findings import Severity


def _tiers(**tier: Any) -> dict[str, Any]:
    return {"topology": {"leaf": tier, "spine": tier}}


NXOS = {**_tiers(platform="cisco_nxos"), "underlay": {"addressing": "p2p31"}}
TIMERS = {"qos": {"pfc": {"watchdog": {"detect": "200ms", "restore": "400ms", "polling": "100ms"}}}}
NO_TIMERS = {"qos": {"pfc": {"watchdog": {"detect": DELETE, "restore": DELETE}}}}  # RAIL states these two


def _cap024(*patches: dict[str, Any], tmp_path: Path) -> list[tuple[Severity, str, str]]:
    data = RAIL
    for patch in patches:  # in order: a DELETE removes what an earlier patch (or RAIL) wrote
        data = merged(data, patch)
    result = lint_data(data, tmp_path)
    return [(f.severity, f.path, f.message) for f in result.findings if f.rule_id == "CAP024"]


def test_nxos_refuses_stated_timers_once(tmp_path: Path) -> None:
    found = _cap024(NXOS, TIMERS, tmp_path=tmp_path)
    assert len(found) == 1, found
    severity, path, message = found[0]
    assert severity is Severity.ERROR
    assert path == "qos.pfc.watchdog.detect"
    for timer in ("detect 200 ms", "polling 100 ms", "restore 400 ms", "cisco_nxos", "NX-1"):
        assert timer in message


def test_nxos_notes_its_own_timers_when_the_intent_leaves_them_out(tmp_path: Path) -> None:
    found = _cap024(NXOS, NO_TIMERS, tmp_path=tmp_path)
    assert [(s, p) for s, p, _ in found] == [(Severity.INFO, "qos.pfc.watchdog")]
    assert "detect, polling, restore" in found[0][2]


def test_cumulus_notes_that_restore_is_one_clean_poll(tmp_path: Path) -> None:
    found = _cap024(_tiers(platform="nvidia_cumulus"), tmp_path=tmp_path)
    assert [(s, p) for s, p, _ in found] == [(Severity.INFO, "qos.pfc.watchdog.restore")]
    assert "restore 400 ms" in found[0][2] and "one polling interval" in found[0][2]


def test_platforms_that_render_every_timer_say_nothing(tmp_path: Path) -> None:
    for platform in ("sonic", "arista_eos", "juniper_junos"):
        assert _cap024(_tiers(platform=platform), TIMERS, tmp_path=tmp_path) == [], platform


def test_no_watchdog_no_note(tmp_path: Path) -> None:
    assert _cap024(NXOS, {"qos": {"pfc": {"watchdog": None}}}, tmp_path=tmp_path) == []
