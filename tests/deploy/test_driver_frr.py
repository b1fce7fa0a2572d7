"""The frr NAPALM driver against real FRR 8.4 over real SSH (tests/deploy/conftest.py builds the switch).

Lab tests skip with the stated reason where root/FRR/sshd are missing; the lookup and parser tests always run.
"""

from __future__ import annotations

import inspect
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import napalm
import pytest
from napalm.base.base import NetworkDriver
from napalm.base.exceptions import (
    CommitConfirmException,
    CommitError,
    ConnectionException,
    ReplaceConfigException,
)

import netfab.deploy.drivers as drivers
from netfab.deploy.drivers import frr as frr_module
from netfab.deploy.drivers import nvue as nvue_module
from netfab.deploy.drivers import parsers
from netfab.deploy.drivers import sonic as sonic_module
from netfab.deploy.drivers.frr import FRRDriver

if TYPE_CHECKING:  # the lab fixture's type; conftest is not importable by name at runtime
    from conftest import FrrLab


CHANGED = "neighbor 198.51.100.6 remote-as 65002", "neighbor 198.51.100.6 remote-as 65003"


# --- lookup (INTEGRATION.md finding 6) ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("napalm_name", "module", "cls_name"),
    [("netfab_frr", frr_module, "FRRDriver"), ("netfab_nvue", nvue_module, "NVUEDriver"),
     ("netfab_sonic", sonic_module, "SonicDriver")],
)  # fmt: skip
def test_get_network_driver_returns_our_class(napalm_name: str, module: object, cls_name: str) -> None:
    cls = napalm.get_network_driver(napalm_name)
    assert cls is getattr(module, cls_name)
    assert cls is not NetworkDriver
    # exactly one NetworkDriver subclass in the module namespace, and not the base under its own name
    found = [n for n, o in inspect.getmembers(module) if inspect.isclass(o) and issubclass(o, NetworkDriver)]
    assert found == [cls_name]
    assert drivers.driver_class(cls.platform) is cls


# --- parsers on outputs recorded from FRR 8.4.4 (an Established unnumbered peer) ---------------------------
RECORDED_NEIGHBORS = {
    "default": {
        "vrfId": 0,
        "vrfName": "default",
        "swp3": {
            "bgpNeighborAddr": "fe80::848:8fff:fe85:df50", "remoteAs": 65002, "localAs": 65001,
            "remoteRouterId": "10.0.0.2", "localRouterId": "10.0.0.1", "bgpState": "Established",
            "bgpTimerUpMsec": 7000, "hostname": "sw2",
            "addressFamilyInfo": {
                "ipv4Unicast": {"acceptedPrefixCounter": 1, "sentPrefixCounter": 1},
                "ipv6Unicast": {"acceptedPrefixCounter": 0, "sentPrefixCounter": 0},
            },
        },
        "192.0.2.6": {
            "remoteAs": 65002, "localAs": 65001, "remoteRouterId": "0.0.0.0", "localRouterId": "10.0.0.1",
            "bgpState": "Active", "addressFamilyInfo": {"ipv4Unicast": {"acceptedPrefixCounter": 0}},
        },
    }
}  # fmt: skip


def test_bgp_parser_keys_unnumbered_peers_by_interface() -> None:
    vrf = parsers.bgp_neighbors_from_frr(RECORDED_NEIGHBORS)["global"]
    assert vrf["router_id"] == "10.0.0.1"
    up = vrf["peers"]["swp3"]
    assert (up["is_up"], up["remote_as"], up["remote_id"], up["uptime"]) == (True, 65002, "10.0.0.2", 7)
    assert up["address_family"]["ipv4"] == {"received_prefixes": 1, "accepted_prefixes": 1, "sent_prefixes": 1}
    down = vrf["peers"]["192.0.2.6"]
    assert (down["is_up"], down["is_enabled"], down["uptime"]) == (False, True, -1)


def test_strip_header_makes_running_config_loadable() -> None:
    text = "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\n!\nend\n"
    assert parsers.strip_frr_header(text) == "!\nfrr version 8.4.4\n!\nend\n"


def test_secrets_stay_out_of_reprs_and_diffs() -> None:
    from netfab.core.redact import redact
    from netfab.deploy.drivers.ssh import params_from_napalm

    params = params_from_napalm("leaf1", "root", "s3cret", 30, {"port": 2222, "key_file": "~/k"})
    assert (
        "s3cret" not in repr(params) and params.port == 2222 and params.key_file and not params.key_file.startswith("~")
    )
    text = redact(' neighbor swp1 password s3cret\n  password: s3cret\n"password": "s3cret"\n')
    assert "s3cret" not in text and text.count("********") == 3
    assert redact("load-balance enhanced-hash-key x") == "load-balance enhanced-hash-key x"


def test_companions_dispatch_on_suffix_or_bare_key() -> None:
    staged: list[str] = []
    dev = FRRDriver("leaf1", "root", "", optional_args={})
    dev.load_host_script = staged.append  # type: ignore[method-assign]
    dev.load_companions({"leaf1.sh": "a", "sh": "b"})
    assert staged == ["a", "b"]
    with pytest.raises(ReplaceConfigException, match="no way to apply"):
        dev.load_companions({"leaf1.frr.conf": "c"})


# --- real FRR over real SSH ------------------------------------------------------------------------------
@pytest.fixture
def dev(frr_lab: FrrLab) -> Iterator[FRRDriver]:
    d = FRRDriver(frr_lab.mgmt_ip, "root", "", timeout=20, optional_args=frr_lab.optional_args())
    d.open()
    yield d
    d.close()


def changed(lab: FrrLab) -> str:
    assert CHANGED[0] in lab.base_running
    return lab.base_running.replace(*CHANGED)


def in_sync(dev: FRRDriver, text: str) -> bool:
    """frr-reload --test of `text` against running is empty (the LAB.md definition of "in sync")."""
    dev.load_replace_candidate(config=text)
    try:
        return dev.compare_config() == ""
    finally:
        dev.discard_config()


def wait_until(predicate: Callable[[], bool], limit: float) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.25)
    return False


@pytest.mark.lab
def test_diff_nonempty_for_change_and_empty_after_commit(dev: FRRDriver, frr_lab: FrrLab) -> None:
    new = changed(frr_lab)
    dev.load_replace_candidate(config=new)
    diff = dev.compare_config()
    assert "65003" in diff and "65002" in diff
    dev.commit_config()
    assert not dev.has_pending_commit()
    assert "remote-as 65003" in frr_lab.running()
    assert in_sync(dev, new)


@pytest.mark.lab
def test_commit_confirm_keeps_the_change(dev: FRRDriver, frr_lab: FrrLab) -> None:
    dev.load_replace_candidate(config=changed(frr_lab))
    # 10 s, not 2: on a loaded 2-core runner the commit alone can outlast a 2 s timer (seen in CI)
    dev.commit_config(message="netfab test", revert_in=10)
    assert dev.has_pending_commit()
    dev.confirm_commit()
    assert not dev.has_pending_commit()
    time.sleep(11)  # past the timer: a confirmed commit must stay
    assert "remote-as 65003" in frr_lab.running()
    with pytest.raises(CommitConfirmException, match="no pending commit"):
        dev.confirm_commit()


@pytest.mark.lab
def test_unconfirmed_commit_reverts_on_the_device(dev: FRRDriver, frr_lab: FrrLab) -> None:
    dev.load_replace_candidate(config=changed(frr_lab))
    dev.commit_config(revert_in=3)
    assert "remote-as 65003" in frr_lab.running()
    with pytest.raises(CommitError, match="pending"):  # no second commit on top of an unconfirmed one
        dev.load_replace_candidate(config=frr_lab.base_running)
        dev.commit_config()
    assert wait_until(lambda: not dev.has_pending_commit(), 10)
    assert in_sync(dev, frr_lab.base_running)
    with pytest.raises(CommitConfirmException, match="expired"):
        dev.confirm_commit()


CHILD = """
import sys, json, time
from netfab.deploy.drivers.frr import FRRDriver
host, args, config = json.loads(sys.stdin.read())
d = FRRDriver(host, "root", "", timeout=20, optional_args=args)
d.open()
d.load_replace_candidate(config=config)
d.commit_config(revert_in=3)
print("COMMITTED", flush=True)
time.sleep(120)
"""


@pytest.mark.lab
def test_revert_survives_the_deployer_being_killed(frr_lab: FrrLab) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(json.dumps([frr_lab.mgmt_ip, frr_lab.optional_args(), changed(frr_lab)]))
        child.stdin.close()
        line = child.stdout.readline()
        assert line.strip() == "COMMITTED", child.stderr.read() if child.stderr else ""
        assert "remote-as 65003" in frr_lab.running()
        os.kill(child.pid, signal.SIGKILL)  # the deploy side dies with its SSH session open
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)
    assert wait_until(lambda: "remote-as 65002" in frr_lab.running(), 10)
    with FRRDriver(frr_lab.mgmt_ip, "root", "", optional_args=frr_lab.optional_args()) as fresh:
        # The old config shows while frr-reload is still finishing inside the timer: settled soon after.
        assert wait_until(lambda: not fresh.has_pending_commit(), 10)
        assert in_sync(fresh, frr_lab.base_running)


@pytest.mark.lab
def test_rollback_restores_exactly(dev: FRRDriver, frr_lab: FrrLab) -> None:
    dev.load_replace_candidate(config=changed(frr_lab) + "ip route 10.98.0.0/24 198.51.100.2\n")
    dev.commit_config()
    assert "10.98.0.0/24" in frr_lab.running()
    dev.rollback()
    assert in_sync(dev, frr_lab.base_running)
    assert frr_lab.running() == frr_lab.base_running  # byte-identical, as LAB.md measured


@pytest.mark.lab
def test_rollback_of_pending_commit_cancels_the_timer(dev: FRRDriver, frr_lab: FrrLab) -> None:
    dev.load_replace_candidate(config=changed(frr_lab))
    dev.commit_config(revert_in=30)
    assert dev.has_pending_commit()
    dev.rollback()
    assert not dev.has_pending_commit()
    assert frr_lab.running() == frr_lab.base_running


@pytest.mark.lab
def test_config_rejected_by_parser_raises_and_changes_nothing(dev: FRRDriver, frr_lab: FrrLab) -> None:
    bad = frr_lab.base_running.replace("remote-as 65002", "remotexx-as 65002")
    with pytest.raises(ReplaceConfigException, match="Unknown command"):
        dev.load_replace_candidate(config=bad)
    with pytest.raises(CommitError, match="nothing to commit"):
        dev.commit_config()
    assert frr_lab.running() == frr_lab.base_running


@pytest.mark.lab
def test_error_seen_only_while_applying_is_restored(dev: FRRDriver, frr_lab: FrrLab) -> None:
    # Parses fine (vtysh -C), but bgpd refuses it mid-reload after other lines went in: LAB.md's half-apply.
    half = (
        changed(frr_lab).replace(
            " neighbor swp1 interface remote-as external\n",
            " neighbor swp1 interface remote-as external\n neighbor 198.51.100.10 peer-group NOPE\n",
        )
        + "ip route 10.98.0.0/24 198.51.100.2\n"
    )
    dev.load_replace_candidate(config=half)
    with pytest.raises(CommitError, match=r"(?s)peer-group.*Restored the previous config"):
        dev.commit_config(revert_in=30)
    assert not dev.has_pending_commit()
    assert frr_lab.running() == frr_lab.base_running


@pytest.mark.lab
def test_host_script_is_applied_after_frr_and_rolled_back(dev: FRRDriver, frr_lab: FrrLab) -> None:
    def policy() -> str:
        return frr_lab.ns("sysctl", "-n", "net.ipv4.fib_multipath_hash_policy").strip()

    script = "#!/bin/sh\nset -e\nsysctl -qw net.ipv4.fib_multipath_hash_policy={}\n"
    dev.load_replace_candidate(config=frr_lab.base_running)
    dev.load_companions({f"{frr_lab.hostname}.sh": script.format(1)})
    assert "+sysctl -qw net.ipv4.fib_multipath_hash_policy=1" in dev.compare_config()  # FRR part in sync
    dev.commit_config()
    assert policy() == "1"
    dev.load_host_script(script.format(3))
    assert "-sysctl -qw net.ipv4.fib_multipath_hash_policy=1" in dev.compare_config()
    dev.commit_config()
    assert policy() == "3"
    dev.rollback()  # re-runs the previous script
    assert policy() == "1"


@pytest.mark.lab
def test_getters(dev: FRRDriver, frr_lab: FrrLab) -> None:
    facts = dev.get_facts()
    assert facts["hostname"] == frr_lab.hostname and facts["os_version"].startswith("FRRouting 8.")
    assert {"swp1", "swp2", "mgmt0", "lo"} <= set(facts["interface_list"])
    swp1 = dev.get_interfaces()["swp1"]
    assert swp1["is_up"] and swp1["is_enabled"] and swp1["mtu"] == 1500 and swp1["speed"] == 10000.0
    peers = dev.get_bgp_neighbors()["global"]["peers"]
    assert {"swp1", "198.51.100.6"} <= set(peers)  # unnumbered peer keyed by its interface
    assert peers["198.51.100.6"]["remote_as"] == 65002 and not peers["198.51.100.6"]["is_up"]
    assert dev.get_route_ecmp_width(["10.99.0.0/24", "10.97.0.0/24"]) == {"10.99.0.0/24": 2, "10.97.0.0/24": 0}
    assert dev.get_lldp_neighbors() == {}  # no lldpd in the lab
    cfg = dev.get_config()
    assert cfg["running"] == frr_lab.base_running and "Building configuration" not in cfg["running"]
    assert "router bgp 65001" in cfg["startup"]


# --- connection failures -------------------------------------------------------------------------------
@pytest.mark.lab
def test_unreachable_host_raises_a_clear_connection_error(frr_lab: FrrLab) -> None:
    closed = FRRDriver(frr_lab.mgmt_ip, "root", "", timeout=3, optional_args=frr_lab.optional_args(port=2222))
    with pytest.raises(ConnectionException, match=f"{frr_lab.mgmt_ip}:2222: unreachable"):
        closed.open()
    silent = FRRDriver(frr_lab.unused_ip, "root", "", timeout=2, optional_args=frr_lab.optional_args())
    with pytest.raises(ConnectionException, match="unreachable"):
        silent.open()


@pytest.mark.lab
def test_host_key_mismatch_and_unknown_key_are_refused(frr_lab: FrrLab, tmp_path: Path) -> None:
    other = frr_lab.keygen("other_host_key")
    fake = tmp_path / "known_hosts"  # the right address, somebody else's key
    fake.write_text(f"{frr_lab.mgmt_ip} " + " ".join((other.parent / "other_host_key.pub").read_text().split()[:2]))
    mismatch = FRRDriver(frr_lab.mgmt_ip, "root", "", optional_args=frr_lab.optional_args(known_hosts=str(fake)))
    with pytest.raises(ConnectionException, match="host key MISMATCH"):
        mismatch.open()
    empty = tmp_path / "empty"
    empty.write_text("")
    unknown = FRRDriver(frr_lab.mgmt_ip, "root", "", optional_args=frr_lab.optional_args(known_hosts=str(empty)))
    with pytest.raises(ConnectionException, match="host key unknown"):
        unknown.open()
