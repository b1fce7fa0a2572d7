"""Each oracle refuses what its vendor's model refuses: a matrix of oracles that accept anything proves nothing.
Small, fast documents; the matrix itself is test_vendor_schemas.py."""

from __future__ import annotations

import json
from typing import Any

import nvue_schema
import oracle_eos
import oracle_matrix as matrix
import pytest
from oracle_matrix import Cell
from oracle_schemas import schema

LAB = "lab.yaml"


def _first(platform: str, suffix: str, release: str | None = None) -> str:
    cell = Cell(LAB, platform, release)
    return next(text for path, text in matrix.cell_documents(cell) if path.endswith(suffix))


@pytest.fixture(scope="module")
def sonic_judge() -> Any:
    s = schema("sonic-yang")
    reason = s.missing()
    if reason:
        pytest.skip(reason)
    return lambda doc: s.judge([json.dumps(doc)], s.model_of(None))[0]


@pytest.fixture(scope="module")
def config_db() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(_first("sonic", ".json"))
    return doc


def test_sonic_lab_document_is_valid(sonic_judge: Any, config_db: dict[str, Any]) -> None:
    assert sonic_judge(config_db) == []


@pytest.mark.parametrize(
    ("table", "row", "fields", "needle"),
    [
        # libyang 2.1 names the value, not always its path
        ("PORT", None, {"mtu": "abc"}, 'uint16 value "abc"'),  # a uint16 leaf given text
        ("PORT", None, {"mtu": "99999"}, '"99999" is out of type uint16'),  # out of the model's range
        ("PORT", None, {"no_such_field": "1"}, "field 'no_such_field' is not in the model"),
        ("PORT_QOS_MAP", None, {"dscp_to_tc_map": "NOPE"}, "leafref"),  # a reference to no map
        ("DEVICE_METADATA", "localhost", {"type": "NotARole"}, '"NotARole" does not conform'),
    ],
)
def test_sonic_refuses_a_bad_field(
    sonic_judge: Any, config_db: dict[str, Any], table: str, row: str | None, fields: dict[str, str], needle: str
) -> None:
    doc = json.loads(json.dumps(config_db))
    key = row or next(iter(doc[table]))
    doc[table][key].update(fields)
    problems = sonic_judge(doc)
    assert problems and any(needle.lower() in p.lower() for p in problems), problems


def test_sonic_unmodelled_table_is_a_failure(sonic_judge: Any, config_db: dict[str, Any]) -> None:
    doc = {**config_db, "ARS_PROFILE": {"x": {"algorithm": "ewma"}}, "NETFAB_INVENTED": {"a": {}}}
    problems = sonic_judge(doc)
    assert "ARS_PROFILE: table has no YANG model in SONiC (GCU refuses it)" in problems
    assert "NETFAB_INVENTED: table has no YANG model in SONiC (GCU refuses it)" in problems


def test_sonic_tells_an_incomplete_oracle_copy_from_a_missing_model(
    sonic_judge: Any, config_db: dict[str, Any]
) -> None:
    # ACL_TABLE has a model upstream (tables.tsv), just not in the oracle's copy of 40 modules.
    problems = sonic_judge({**config_db, "ACL_TABLE": {"T": {}}})
    assert problems == ["ACL_TABLE: oracle copy lacks module sonic-acl (add it to the oracle)"]


def test_nvue_lab_document_is_valid_at_512() -> None:
    assert nvue_schema.errors(_first("nvidia_cumulus", ".yaml", "5.12"), "5.12") == []


def test_nvue_release_shapes_are_not_interchangeable() -> None:
    """A file rendered for 5.12 is refused by the 5.18 model and the other way round (the 5.15 renames)."""
    assert nvue_schema.errors(_first("nvidia_cumulus", ".yaml", "5.12"), "5.18")
    assert nvue_schema.errors(_first("nvidia_cumulus", ".yaml", "5.18"), "5.12")


@pytest.mark.parametrize(
    ("text", "release", "needle"),
    [
        ("- set:\n    system:\n      hostname: a\n      no-such-object: 1\n", "5.12", "not in the model"),
        ("- set:\n    interface:\n      swp1:\n        link:\n          mtu: 99999999\n", "5.12", "mtu"),
        # 5.15 renamed `enable on|off` to `state enabled|disabled` (oracles README)
        ("- set:\n    router:\n      bgp:\n        enable: 'on'\n", "5.18", "enable: not in the model"),
        ("- set:\n    router:\n      bgp:\n        enable: 'on'\n", "5.12", None),
        ("set: {}\n", "5.12", "list of operations"),
    ],
)
def test_nvue_refuses_what_the_release_lacks(text: str, release: str, needle: str | None) -> None:
    problems = nvue_schema.errors(text, release)
    if needle is None:
        assert problems == []
    else:
        assert problems and any(needle in p for p in problems), problems


def test_forcing_puts_every_tier_on_the_platform_and_release() -> None:
    data = matrix.forced_intent("clos3-24k.yaml", "sonic", "202511")
    tiers = [data["topology"][t] for t in matrix.TIERS if t in data["topology"]]
    assert len(tiers) == 3
    assert all(t["platform"] == "sonic" and t["os_version"] == "202511" for t in tiers)


def test_releases_come_from_the_record_and_the_oracle() -> None:
    nvue = matrix.releases("nvidia_cumulus", nvue_schema.VERSIONS)
    assert nvue[0] is None and "5.6" in nvue and "5.18" in nvue and len(nvue) == len(set(nvue))
    # SONiC has no release gate left (ARS and RDMA-BTH hashing are in no release): only the newest release.
    assert matrix.releases("sonic") == [None]


# --- EOS against pyavd ----------------------------------------------------------------------------------------

_EOS_SAND = """qos profile A
   qos trust dscp
   !
   uc-tx-queue 3
      no priority
      bandwidth percent 50
   !
   priority-flow-control on
   priority-flow-control priority 3 no-drop
   priority-flow-control pause watchdog
!
load-balance policies
   load-balance sand profile default
      fields udp dst-port 4791
         payload bytes 5-7
"""


@pytest.fixture(scope="module")
def eos_cfg() -> str:
    reason = oracle_eos.missing()
    if reason:
        pytest.skip(reason)
    # rail-4su, not the lab: the lab's intent has no PFC watchdog, whose global and per-profile lines are judged
    cell = Cell("rail-4su.yaml", "arista_eos", None)
    return next(text for path, text in matrix.cell_documents(cell) if path.endswith(".cfg"))


def test_eos_lab_document_is_valid(eos_cfg: str) -> None:
    assert oracle_eos.errors(eos_cfg) == []
    assert oracle_eos.errors(_EOS_SAND) == []


@pytest.mark.parametrize(
    ("before", "after", "needle"),
    [
        # pyavd's schema: ranges, patterns, enums
        ("max-mark-probability 100", "max-mark-probability 0", "below the minimum allowed '1'"),
        ("watchdog default timeout 0.2", "watchdog default timeout 0.200", "does not match the allowed pattern"),
        ("watchdog action drop", "watchdog action shutdown", "is not among the valid values"),
        ("qos trust dscp", "qos trust dscp-exp", "is not among the valid values"),
        # statements AVD has no model of
        ("priority-flow-control priority 3 no-drop", "priority-flow-control priority 3 lossless", "no AVD model"),
        ("1500 kbytes max", "1500 mbytes max", "different units"),
        # AVD renders the same key another way (a number's format)
        ("bandwidth percent 50", "bandwidth percent 050", "netfab writes, pyavd renders otherwise"),
        # an interface bound to a profile nobody rendered
        ("service-profile NETFAB-LOSSLESS", "service-profile NETFAB-NOPE", "no such qos profile"),
    ],
)
def test_eos_refuses_what_pyavd_refuses(eos_cfg: str, before: str, after: str, needle: str) -> None:
    assert before in eos_cfg
    problems = oracle_eos.errors(eos_cfg.replace(before, after, 1))
    assert problems and any(needle in p for p in problems), problems


@pytest.mark.parametrize(
    ("before", "after", "needle"),
    [
        ("payload bytes 5-7", "payload bytes 5 to 7", "no AVD model for: fields udp"),
        (
            "priority-flow-control pause watchdog\n",
            "priority-flow-control pause watchdog port action errdisable\n",
            "is not among the valid values",
        ),
        ("fields udp dst-port 4791", "fields udp dst-port 99999", "above the maximum"),
    ],
)
def test_eos_sand_blocks_are_judged(before: str, after: str, needle: str) -> None:
    if oracle_eos.missing():
        pytest.skip(oracle_eos.missing())
    problems = oracle_eos.errors(_EOS_SAND.replace(before, after, 1))
    assert problems and any(needle in p for p in problems), problems
