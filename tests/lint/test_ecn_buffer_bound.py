"""ECN004's Kmax bound comes from the switch model's buffer where one is known (issue 15 point 5): a hint never
suggests a Kmax the queue could not reach, and a Kmax above the buffer is named as such."""

from __future__ import annotations

from pathlib import Path

from lint_helpers import RAIL, lint_data, merged

SMALL_BUFFER = {"hardware": {"buffer": "8MB"}}


def _ecn004(result: object) -> list[object]:
    return [f for f in result.findings if f.rule_id == "ECN004"]  # type: ignore[attr-defined]


def _with_kmax(kmax: str, *, buffer: bool, cable_m: int = 30) -> dict[str, object]:
    classes = [dict(c) for c in RAIL["qos"]["classes"]]
    roce = next(c for c in classes if c.get("ecn"))
    roce["ecn"] = {**roce["ecn"], "kmax": kmax}
    patch: dict[str, object] = {"qos": {"classes": classes}, "topology": {"leaf": {"uplink_cable_m": cable_m}}}
    if buffer:
        patch = merged(patch, {"topology": {"leaf": SMALL_BUFFER, "spine": SMALL_BUFFER}})
    return merged(RAIL, patch)


def test_kmax_above_the_buffer_is_named(tmp_path: Path) -> None:
    # 12 MB is inside 50x the BDP at 400G over this path, so only the 8 MB buffer makes it wrong.
    [finding] = _ecn004(lint_data(_with_kmax("12MB", buffer=True), tmp_path))
    assert "shared buffer" in finding.message and "never marked" in finding.message  # type: ignore[attr-defined]
    assert "8 MB" in finding.hint or "8.0 MB" in finding.hint  # type: ignore[attr-defined]
    assert _ecn004(lint_data(_with_kmax("12MB", buffer=False), tmp_path)) == []


def test_the_hint_range_stops_at_the_buffer(tmp_path: Path) -> None:
    # 2 km of uplink: 50x the BDP is far above 8 MB; a too-small Kmax gets a range that ends at the buffer.
    [bounded] = _ecn004(lint_data(_with_kmax("20KB", buffer=True, cable_m=2000), tmp_path))
    [unbounded] = _ecn004(lint_data(_with_kmax("20KB", buffer=False, cable_m=2000), tmp_path))
    assert "buffer)" in bounded.hint  # type: ignore[attr-defined]
    assert "buffer" not in unbounded.hint  # type: ignore[attr-defined]
    assert bounded.hint != unbounded.hint  # type: ignore[attr-defined]
