"""Capability data: every platform file loads, versions compare across vendors, features gate on releases."""

from __future__ import annotations

import pytest

from netfab.capabilities import NosVersion, at_least, capabilities_for, clear_cache, parse_version
from netfab.intent import HashField
from netfab.platforms import platform_names, platform_spec

QP = HashField.ROCE_DEST_QP


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("4.32.2F", "4.33.1F"),  # EOS
        ("4.33.1F", "4.33.1.1F"),
        ("4.33", "4.33.1F"),
        ("4.9.0F", "4.10.0F"),  # numeric, not lexical
        ("10.4(3)F", "10.5(1)F"),  # NX-OS
        ("9.3(10)", "10.2(1)"),
        ("10.5(1)F", "10.5(3)F"),
        ("23.4R1", "23.4R2"),  # Junos
        ("23.4R2", "23.4R2-S3"),
        ("22.4R3-S2", "23.2R1"),
        ("5.6", "5.12.0"),  # Cumulus
        ("202311", "202411"),  # SONiC
        ("SONiC.202305.1", "SONiC-OS-202411.3"),
    ],
)
def test_versions_compare_as_numbers(older: str, newer: str) -> None:
    assert NosVersion(older) < NosVersion(newer)
    assert not at_least(older, newer)
    assert at_least(newer, older)


def test_same_release_different_train_letter_is_equal() -> None:
    assert NosVersion("4.33.1F") == NosVersion("4.33.1M")
    assert at_least("4.33.1F", "4.33.1F")


@pytest.mark.parametrize("text", [None, "latest", "", "EOS"])
def test_unknown_version_means_newest(text: str | None) -> None:
    assert parse_version(text) is None
    assert at_least(text, "99.9")


@pytest.mark.parametrize("platform", platform_names())
def test_every_platform_has_valid_data(platform: str) -> None:
    assert platform_spec(platform).name == platform
    caps = capabilities_for(platform)
    assert caps.platform == platform
    assert caps.max_ecmp_paths >= 1
    assert caps.ecn_units
    assert {HashField.SRC_IP, HashField.DST_IP, HashField.SRC_PORT} <= caps.hashes
    assert caps.watchdog_actions <= {"drop", "forward", "alert"}
    assert caps.pfc_watchdog.supported or not caps.watchdog_actions


@pytest.mark.parametrize(
    ("platform", "version", "has_qp"),
    [
        ("arista_eos", "4.32.2F", False),
        ("arista_eos", "4.33.1F", True),
        ("arista_eos", None, False),  # the EOS renderer picks the sand syntax by release: it must be stated
        ("arista_eos", "latest", False),
        ("sonic", "202305", False),  # RDMA_BTH_DEST_QP is in no SONiC release (open PR #27335)
        ("sonic", None, False),
        ("juniper_junos", "23.4R2", True),
        ("juniper_junos", "22.4R3", False),
        ("nvidia_cumulus", "5.12.0", False),
        ("cisco_nxos", "10.5(3)F", False),
        ("frr", None, False),
    ],
)
def test_rocev2_dest_qp_hashing(platform: str, version: str | None, has_qp: bool) -> None:
    caps = capabilities_for(platform, version)
    assert (QP in caps.hashes) is has_qp
    if not has_qp and platform in ("arista_eos", "juniper_junos"):
        assert "from" in caps.upgrade_hint("hash_fields.rocev2_dest_qp")
    if not has_qp and platform == "arista_eos" and version in (None, "latest"):
        assert "set the tier's os_version" in caps.upgrade_hint("hash_fields.rocev2_dest_qp")


def test_feature_facts() -> None:
    cumulus = capabilities_for("nvidia_cumulus")
    assert cumulus.adaptive_routing and cumulus.adaptive_routing_speeds == (200, 400)
    assert cumulus.watchdog_actions == {"drop"} and cumulus.ecn_units == ("bytes",)
    assert not capabilities_for("nvidia_cumulus", "5.5.0").pfc_watchdog.supported
    assert capabilities_for("juniper_junos").ecn_units == ("percent_fill",)
    assert capabilities_for("sonic").watchdog_actions == {"drop", "forward", "alert"}
    assert not capabilities_for("frr").pfc_watchdog.supported
    # NX-OS has DLB from 10.5(1)F, but its templates cannot render it (keywords unconfirmed).
    assert not capabilities_for("cisco_nxos", "10.5(1)F").adaptive_routing
    assert not capabilities_for("cisco_nxos", "10.5(1)F").packet_spraying
    assert not capabilities_for("cisco_nxos").bgp_unnumbered and capabilities_for("cisco_nxos").max_strict_queues == 1
    # ARS and RDMA BTH hashing are in no SONiC release (open sonic-buildimage PRs #22264, #27335): refused on
    # every release, the newest included, with that reason.
    sonic = capabilities_for("sonic")
    assert not (sonic.packet_spraying or sonic.adaptive_routing) and "rocev2_dest_qp" not in sonic.hashes
    assert "#22264" in sonic.why("adaptive_routing") and "#27335" in sonic.why("hash_fields.rocev2_dest_qp")
    assert not any(capabilities_for(p).explicit_headroom for p in platform_names())
    assert capabilities_for("arista_eos").commit_confirm and not capabilities_for("sonic").commit_confirm
    assert capabilities_for("frr").buffer.queue_bytes is None


def test_lookups_are_cached() -> None:
    assert capabilities_for("sonic", "202411") is capabilities_for("sonic", "202411")
    clear_cache()
    assert capabilities_for("sonic", "202411") == capabilities_for("sonic", "202411")


def test_unknown_platform_is_rejected() -> None:
    with pytest.raises(ValueError):
        capabilities_for("ios_xr")
