"""push and pull on NetBox 4.7's own answers, recorded (tests/sot/recorded.py; re-record with
`python3 -m tests.sot.recorded`): what a push of tiny.yaml reads from an empty NetBox, and what a second push
and a pull read once it is in. Fast and offline; the live tests (test_live_netbox.py) make the same claims
against a running NetBox."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from netfab.cli.pipeline import load_plan
from netfab.sot.desired import Desired, desired_state
from netfab.sot.pull import compare, read_as_built
from netfab.sot.push import push
from tests.sot.conftest import INTENTS
from tests.sot.recorded import RECORDINGS, Replay


@pytest.fixture(scope="module")
def tiny() -> tuple[Any, Desired]:
    loaded = load_plan([INTENTS / "tiny.yaml"])
    return loaded.plan, desired_state(loaded.intent, loaded.plan)


def test_the_recordings_hold_no_secret_and_no_live_address() -> None:
    for path in RECORDINGS.glob("*.json"):
        text = path.read_text(encoding="utf-8")
        assert "nbt_" not in text and "127.0.0.1" not in text and "Bearer" not in text, path


def test_a_dry_run_on_a_netbox_without_the_fabric_creates_it_and_writes_nothing(tiny: tuple[Any, Desired]) -> None:
    """tiny-empty: a NetBox other netfab fabrics share (the tag, custom fields, RIR, ASNs, roles exist) but
    that has never seen this one, recorded before the custom field netfab_fabric covered interfaces and cables
    (the pushes before the ownership mark moved off tags)."""
    _, desired = tiny
    nb = Replay("tiny-empty")
    result = push(nb, desired, dry_run=True)
    assert nb.writes == []
    counts = result.counts()
    for kind in ("site", "device", "interface", "prefix", "ip_address", "cable"):
        assert counts[kind]["create"] == len(desired.of(kind)) > 0, (kind, counts[kind])
    for kind in ("tag", "custom_field", "rir", "asn", "manufacturer", "device_type", "device_role", "platform"):
        row = counts.get(kind, {"create": 0, "update": 0, "unchanged": 0})
        assert row["create"] + row["update"] + row["unchanged"] == len(desired.of(kind)), (kind, row)
    [update] = [c for c in result.changes if c.kind == "custom_field"]
    assert update.key == ("netfab_fabric",) and update.fields == ("description", "object_types")
    assert {"dcim.interface", "dcim.cable"} <= set(update.after["object_types"])
    assert {"dcim.interface", "dcim.cable"}.isdisjoint(update.before["object_types"])


def test_a_second_push_on_the_recorded_netbox_writes_nothing(tiny: tuple[Any, Desired]) -> None:
    _, desired = tiny
    nb = Replay("tiny-pushed")
    result = push(nb, desired)
    assert result.changes == [] and result.conflicts == [] and nb.writes == []
    assert result.unchanged["interface"] == len(desired.of("interface")) == 40
    assert result.unchanged["cable"] == len(desired.of("cable")) == 16


def test_the_pull_of_the_recorded_netbox_finds_no_difference(tiny: tuple[Any, Desired]) -> None:
    plan, desired = tiny
    built = read_as_built(Replay("tiny-pushed"), desired.site)
    result = compare(plan, desired, built)
    assert result.differences == []
    assert len(built.devices) == 8 and len(built.cables) == 16
    assert set(result.overrides) == set(plan.devices)
    assert all(result.overrides[name]["hostname"] == plan.devices[name].mgmt_ip for name in plan.devices)


def _edited(name: str, tmp_path: Path, edit: Any) -> Replay:
    answers = json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))
    for key, records in answers.items():
        for record in records:
            edit(json.loads(key), record)
    nb = Replay.__new__(Replay)
    nb.answers, nb.writes, nb._next = answers, [], 10_000_000
    return nb


def test_a_drifted_field_is_patched_alone_and_an_untagged_device_is_left_alone(
    tiny: tuple[Any, Desired], tmp_path: Path
) -> None:
    _, desired = tiny

    def edit(key: list[Any], record: dict[str, Any]) -> None:
        interface = key[0] == "dcim/interfaces" and "description" in record
        if interface and (record["device"]["name"], record["name"]) == ("su1-leaf1", "Ethernet0"):
            record["description"] = "changed by hand"
        if key[0] == "dcim/devices" and record.get("name") == "spine2" and "tags" in record:
            record["tags"] = []  # someone else's device at a planned name

    nb = _edited("tiny-pushed", tmp_path, edit)
    result = push(nb, desired)
    updates = [(c.kind, c.key, c.fields) for c in result.changes]
    assert updates == [("interface", ("su1-leaf1", "Ethernet0"), ("description",))], updates
    [(verb, path, bodies)] = nb.writes
    planned = desired.of("interface")[("su1-leaf1", "Ethernet0")].fields["description"]
    assert (verb, path, [set(b) for b in bodies]) == ("update", "dcim/interfaces", [{"id", "description"}])
    assert bodies[0]["description"] == planned != "changed by hand"
    assert [(c.kind, c.key, c.rule) for c in result.conflicts] == [("device", ("spine2",), "SOT-NOT-OWNED")]
    # Nothing hanging off spine2 is written either (its interfaces, addresses, cables are counted as skipped).
    assert result.skipped["interface"] > 0 and result.skipped["cable"] > 0


def test_a_cable_edited_in_the_recording_is_one_miswire(tiny: tuple[Any, Desired], tmp_path: Path) -> None:
    plan, desired = tiny

    def edit(key: list[Any], record: dict[str, Any]) -> None:
        # The pull reads each cable's ends from the site's cabled interfaces (kinds.site_cables): the spine end
        # of spine1 Ethernet1/1's cable now names Ethernet1/8, as if the cable had been re-landed there.
        if (
            key[0] == "dcim/interfaces"
            and key[1].get("cabled")
            and ((record.get("device") or {}).get("name"), record.get("name")) == ("spine1", "Ethernet1/1")
        ):
            record["name"] = "Ethernet1/8"

    result = compare(plan, desired, read_as_built(_edited("tiny-pushed", tmp_path, edit), desired.site))
    assert [(d.rule, d.subject) for d in result.differences] == [("SOT-CABLE-MISWIRED", "spine1")], result.differences
