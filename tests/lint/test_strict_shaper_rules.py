"""The strict queue's shaper in lint (FIDELITY_REVIEW JUN-3, X-1): range-checked by the schema, a stated cap refused
where the platform renders none (CAP026) and the default one noted, fractions refused where the CLI takes whole
percents (CAP027), null warned (QOS011), a cap on a DWRR class flagged as ignored (QOS012)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lint_helpers import CNP, DEFAULT, RAIL, ROCE, lint_data, merged

from netfab.core.findings import Severity


def _intent(platform: str | None = None, os_version: str | None = None, **cnp: Any) -> dict[str, Any]:
    patch: dict[str, Any] = {"qos": {"classes": [ROCE, {**CNP, **cnp}, DEFAULT]}}
    if platform:
        tier: dict[str, Any] = {"platform": platform, **({"os_version": os_version} if os_version else {})}
        patch["topology"] = {"leaf": tier, "spine": tier}
        if platform == "cisco_nxos":
            patch["underlay"] = {"addressing": "p2p31"}
    return merged(RAIL, patch)


def _found(data: dict[str, Any], rule: str, tmp_path: Path) -> list[tuple[Severity, str, str]]:
    result = lint_data(data, tmp_path)
    return [(f.severity, f.path, f.message) for f in result.findings if f.rule_id == rule]


@pytest.mark.parametrize("value", [0, -1, 100.5])
def test_out_of_range_is_a_schema_error_at_the_field(value: float, tmp_path: Path) -> None:
    result = lint_data(_intent(max_rate_percent=value), tmp_path)
    errors = [f for f in result.findings if f.rule_id.startswith("SCHEMA")]
    assert [f.path for f in errors] == ["qos.classes[1].max_rate_percent"], [(f.rule_id, f.message) for f in errors]
    assert errors[0].severity is Severity.ERROR and errors[0].location.line >= 1


def test_nxos_refuses_a_stated_cap_once(tmp_path: Path) -> None:
    found = _found(_intent("cisco_nxos", max_rate_percent=5), "CAP026", tmp_path)
    assert len(found) == 1, found
    severity, path, message = found[0]
    assert severity is Severity.ERROR and path == "qos.classes[1].max_rate_percent"
    assert "cisco_nxos" in message and "5 %" in message and "no confirmed NX-OS CLI" in message


@pytest.mark.parametrize("platform", ["cisco_nxos", "frr"])
def test_the_default_cap_is_noted_where_not_rendered(platform: str, tmp_path: Path) -> None:
    data = _intent(platform)
    if platform == "frr":
        data = merged(data, {"qos": {"pfc": {"watchdog": None}}})
    found = _found(data, "CAP026", tmp_path)
    assert [(s, p) for s, p, _ in found] == [(Severity.INFO, "qos.classes[1]")]
    assert "(the default) is not rendered" in found[0][2]


def test_cumulus_before_5_4_says_which_release_has_it(tmp_path: Path) -> None:
    result = lint_data(_intent("nvidia_cumulus", "5.3.0", max_rate_percent=5), tmp_path)
    found = [f for f in result.findings if f.rule_id == "CAP026"]
    assert len(found) == 1 and found[0].severity is Severity.ERROR
    assert "5.4" in (found[0].hint or "")


@pytest.mark.parametrize("platform", ["arista_eos", "juniper_junos", "sonic", "nvidia_cumulus"])
def test_platforms_that_render_the_cap_say_nothing(platform: str, tmp_path: Path) -> None:
    assert _found(_intent(platform, max_rate_percent=5), "CAP026", tmp_path) == []
    assert _found(_intent(platform), "CAP026", tmp_path) == []


@pytest.mark.parametrize(("platform", "refused"), [("arista_eos", True), ("juniper_junos", True), ("sonic", False),
                                                   ("nvidia_cumulus", False)])  # fmt: skip
def test_fractions_where_the_cli_takes_whole_percents(platform: str, refused: bool, tmp_path: Path) -> None:
    found = _found(_intent(platform, max_rate_percent=2.5), "CAP027", tmp_path)
    assert [p for _, p, _ in found] == (["qos.classes[1].max_rate_percent"] if refused else [])


def test_null_warns_and_a_dwrr_cap_is_ignored(tmp_path: Path) -> None:
    unshaped = _found(_intent(max_rate_percent=None), "QOS011", tmp_path)
    assert [(s, p) for s, p, _ in unshaped] == [(Severity.WARNING, "qos.classes[1].max_rate_percent")]
    dwrr = merged(RAIL, {"qos": {"classes": [ROCE, CNP, {**DEFAULT, "max_rate_percent": 10}]}})
    ignored = _found(dwrr, "QOS012", tmp_path)
    assert len(ignored) == 1 and "is ignored" in ignored[0][2]
    assert _found(_intent(), "QOS011", tmp_path) == [] and _found(_intent(), "QOS012", tmp_path) == []
