"""No false drift: what a device does to a config without changing it is never reported.

Per platform: stanzas and lines in another order, comments and blank lines, the device's banners and version
stamps, values the device hides because they are its defaults, key and list order in JSON/YAML.
"""

from __future__ import annotations

import json

import pytest
import yaml
from audit_helpers import (
    ALL_PLATFORMS,
    dump_json,
    frr_running,
    intended,
    kernel_state,
    leaf,
    reorder,
    reverse_keys,
    run,
    shuffle_lines,
    with_noise,
)


@pytest.mark.parametrize("platform", ALL_PLATFORMS)
def test_the_intended_config_itself_is_in_sync(platform: str) -> None:
    files = intended(platform)
    kernel = kernel_state(leaf(platform)) if platform == "frr" else None
    result = run(platform, {k: v for k, v in files.items() if k != ".sh"}, kernel)
    assert result.status == "in_sync", result.drifts
    assert not result.remediation and not result.raw


@pytest.mark.parametrize("platform", ["arista_eos", "cisco_nxos"])
def test_indented_cli_reordered_with_comments_and_banners(platform: str) -> None:
    text = intended(platform)[".cfg"]
    header = ("!Command: show running-config", "!Running configuration last done at: Sun Nov 29 10:00:00 2026")
    if platform == "cisco_nxos":
        header += ("version 10.2(5) Bios:version 05.47",)
    noisy = with_noise(reorder(text), header=header, footer=("end",))
    assert run(platform, {".cfg": noisy}).status == "in_sync"


def test_eos_hidden_defaults_are_not_drift() -> None:
    text = intended("arista_eos")[".cfg"]
    # EOS prints no `weight 0` on an instantaneous ECN queue, and may print `no shutdown` on every port
    running = text.replace(" weight 0", "").replace("   no switchport\n", "   no switchport\n   no shutdown\n")
    assert running != text
    assert run("arista_eos", {".cfg": running}).status == "in_sync"


def test_nxos_hidden_defaults_are_not_drift() -> None:
    text = intended("cisco_nxos")[".cfg"]
    # a queuing class with no share prints no `bandwidth remaining percent 0`
    running = text.replace("    bandwidth remaining percent 0\n", "")
    assert running != text
    assert run("cisco_nxos", {".cfg": running}).status == "in_sync"


def test_junos_set_lines_in_any_order_with_comments() -> None:
    text = intended("juniper_junos")[".set"]
    assert run("juniper_junos", {".set": shuffle_lines(text)}).status == "in_sync"


def test_junos_show_configuration_braces_are_the_same_config() -> None:
    """NAPALM's junos get_config returns `show configuration` (braces, a version stamp, ## comments)."""
    blocks: dict[str, list[str]] = {}
    for line in intended("juniper_junos")[".set"].splitlines():
        if line.startswith("set "):
            top, rest = line[4:].split(" ", 1)
            blocks.setdefault(top, []).append(rest)
    braces = ["## Last commit: 2026-11-29 10:00:00 UTC by netfab", "version 23.4R1.10;"]
    for top, statements in blocks.items():
        braces += [f"{top} {{", *(f"    {s};" for s in statements), "}"]
    assert run("juniper_junos", {".set": "\n".join(braces) + "\n"}).status == "in_sync"


def test_frr_show_running_config_is_the_intended_frr_conf() -> None:
    files = intended("frr")
    running = frr_running(files[".conf"])
    result = run("frr", {".conf": running}, kernel_state(leaf("frr")))
    assert result.status == "in_sync", result.drifts


def test_frr_datacenter_defaults_hidden_by_vtysh_are_not_drift() -> None:
    conf = intended("frr")[".conf"]
    # the intent spells out two datacenter-profile defaults; vtysh never prints them
    want = dict(intended("frr"))
    want[".conf"] = conf.replace(
        " bgp router-id", " bgp log-neighbor-changes\n no bgp ebgp-requires-policy\n bgp router-id", 1
    )
    result = run("frr", {".conf": frr_running(conf)}, kernel_state(leaf("frr")), want=want)
    assert result.status == "in_sync", result.drifts


def test_frr_kernel_state_in_red_mode_matches_the_same_script() -> None:
    dev = leaf("frr")
    result = run("frr", {".conf": intended("frr")[".conf"]}, kernel_state(dev, mode="red"))
    assert result.status == "in_sync", result.drifts
    assert any("tc RED" in n for n in result.notes)


def test_sonic_key_order_list_order_and_device_owned_fields() -> None:
    files = intended("sonic")
    db = json.loads(files[".json"])
    db = reverse_keys(db)
    db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"].reverse()  # a YANG leaf-list: a set
    db["DEVICE_METADATA"]["localhost"]["mac"] = "52:54:00:12:34:56"  # SONiC fills these in itself
    db["DEVICE_METADATA"]["localhost"]["platform"] = "x86_64-kvm_x86_64-r0"
    db["FEATURE"] = {"bgp": {"state": "enabled"}}  # a table netfab does not render
    running = {".json": dump_json(db), ".frr.conf": frr_running(files[".frr.conf"])}
    result = run("sonic", running)
    assert result.status == "in_sync", result.drifts


def test_nvue_key_order_split_entries_and_quoting() -> None:
    doc = yaml.safe_load(intended("nvidia_cumulus")[".yaml"])
    tree = reverse_keys(doc[0]["set"])
    # `nv config show -o yaml` style: a header entry, the tree split over two set entries, unquoted numbers
    qos = tree.pop("qos")
    text = yaml.safe_dump([{"header": {"rev-id": 7}}, {"set": tree}, {"set": {"qos": qos}}], sort_keys=False)
    text = text.replace("'3':", "3:")
    assert run("nvidia_cumulus", {".yaml": text}).status == "in_sync"
