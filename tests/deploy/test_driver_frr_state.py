"""FRRDriver.get_kernel_state() and get_qos_state(): recorded outputs (always run) and a real namespace (lab).

The recorded nftables table is `nft -j list table inet netfab_ecn` from a lab leaf (nftables 1.0.6, kernel
without sch_red), trimmed to two ports; the RED qdisc follows iproute2's q_red JSON (limit/min/max in bytes,
probability as a fraction, printed with -d).
"""

from __future__ import annotations

import contextlib
import json
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from netfab.deploy.drivers.frr import FRRDriver
from netfab.deploy.drivers.ssh import CommandResult

if TYPE_CHECKING:  # the lab fixture's type; conftest is not importable by name at runtime
    from conftest import FrrLab

NFT_RECORDED = (
    '{"nftables": [{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_vers'
    'ion": 1}}, {"table": {"family": "inet", "name": "netfab_ecn", "handle": 2}}, {"counter": {"family": '
    '"inet", "name": "marked_swp1", "table": "netfab_ecn", "handle": 2, "packets": 0, "bytes": 0}}, {"lim'
    'it": {"family": "inet", "name": "pq3_swp1", "table": "netfab_ecn", "handle": 3, "rate": 7916666, "pe'
    'r": "second", "inv": true, "burst": 100}}, {"counter": {"family": "inet", "name": "marked_swp2", "ta'
    'ble": "netfab_ecn", "handle": 4, "packets": 0, "bytes": 0}}, {"limit": {"family": "inet", "name": "p'
    'q3_swp2", "table": "netfab_ecn", "handle": 5, "rate": 7916666, "per": "second", "inv": true, "burst"'
    ': 100}}, {"map": {"family": "inet", "name": "marked", "table": "netfab_ecn", "type": "ifname", "hand'
    'le": 10, "map": "counter", "elem": [["swp1", "marked_swp1"], ["swp2", "marked_swp2"]]}}, {"map": {"f'
    'amily": "inet", "name": "pq3", "table": "netfab_ecn", "type": "ifname", "handle": 11, "map": "limit"'
    ', "elem": [["swp1", "pq3_swp1"], ["swp2", "pq3_swp2"]]}}, {"chain": {"family": "inet", "table": "net'
    'fab_ecn", "name": "postrouting", "handle": 1, "type": "filter", "hook": "postrouting", "prio": 0, "p'
    'olicy": "accept"}}, {"rule": {"family": "inet", "table": "netfab_ecn", "chain": "postrouting", "hand'
    'le": 13, "expr": [{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "dscp"}}, "'
    'right": "af31"}}, {"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "ecn"}}, "r'
    'ight": {"set": ["ect1", "ect0"]}}}, {"limit": {"map": {"key": {"meta": {"key": "oifname"}}, "data": '
    '"@pq3"}}}, {"mangle": {"key": {"payload": {"protocol": "ip", "field": "ecn"}}, "value": "ce"}}, {"co'
    'unter": {"map": {"key": {"meta": {"key": "oifname"}}, "data": "@marked"}}}]}}, {"rule": {"family": "'
    'inet", "table": "netfab_ecn", "chain": "postrouting", "handle": 15, "expr": [{"match": {"op": "==", '
    '"left": {"payload": {"protocol": "ip6", "field": "dscp"}}, "right": "af31"}}, {"match": {"op": "==",'
    ' "left": {"payload": {"protocol": "ip6", "field": "ecn"}}, "right": {"set": ["ect1", "ect0"]}}}, {"l'
    'imit": {"map": {"key": {"meta": {"key": "oifname"}}, "data": "@pq3"}}}, {"mangle": {"key": {"payload'
    '": {"protocol": "ip6", "field": "ecn"}}, "value": "ce"}}, {"counter": {"map": {"key": {"meta": {"key'
    '": "oifname"}}, "data": "@marked"}}}]}}]}'
)

SYSCTLS = """net.ipv4.fib_multipath_hash_policy 1
net.ipv4.fib_multipath_hash_fields 55
net.ipv4.fib_multipath_hash_seed 1031014252
net.ipv6.fib_multipath_hash_policy 1
net.ipv6.fib_multipath_hash_fields 55
net.ipv4.ip_forward 1
net.ipv6.conf.all.forwarding 1
"""
LINKS = [
    {"ifname": "lo", "mtu": 65536},
    {"ifname": "swp1", "mtu": 9216, "linkinfo": {"info_kind": "veth"}},
    {"ifname": "swp2", "mtu": 9216, "linkinfo": {"info_kind": "veth"}},
    {"ifname": "mgmt0", "mtu": 1500, "linkinfo": {"info_kind": "veth"}},
]
NOQUEUE = [{"kind": "noqueue", "handle": "0:", "dev": "swp1", "root": True, "options": {}}]
RED = [
    {"kind": "tbf", "handle": "1:", "dev": "swp1", "root": True, "options": {"rate": 2500000, "burst": 18432}},
    {"kind": "red", "handle": "10:", "dev": "swp1", "parent": "1:1",
     "options": {"limit": 6000000, "min": 150000, "max": 1500000, "ecn": True, "harddrop": False,
                 "adaptive": False, "nodrop": False, "ewma": 1, "probability": 0.99999999, "Scell_log": 20}},
    {"kind": "red", "handle": "1:", "dev": "swp2", "root": True,
     "options": {"limit": 6000000, "min": 400000, "max": 1500000, "ecn": True, "ewma": 1, "probability": 0.5}},
]  # fmt: skip
HOST_SCRIPT = """#!/bin/sh
must_sysctl net.ipv4.fib_multipath_hash_policy 1
must_sysctl net.ipv6.fib_multipath_hash_policy 1
if sysctl_set net.ipv4.fib_multipath_hash_seed 1031014252; then
	limit pq3_swp1 { rate over $(pps 100000)/second burst $(pkts 150000) packets }
"""


class Recorded:
    """A CommandChannel answering the driver's commands from recorded outputs."""

    def __init__(self, tc: list[dict[str, object]], nft: str, host_script: str | None = None) -> None:
        self.tc, self.nft, self.host_script = tc, nft, host_script
        self.commands: list[str] = []

    def run(self, command: str, stdin: str | None = None, timeout: float | None = None) -> CommandResult:
        self.commands.append(command)
        if "&& pwd" in command:
            return CommandResult(command, 0, "/root/.netfab/leaf1\n", "")
        if command.startswith("cat ") and command.endswith("host.sh"):
            if self.host_script is None:
                return CommandResult(command, 1, "", "cat: host.sh: No such file or directory")
            return CommandResult(command, 0, self.host_script, "")
        if "@@nft" in command:
            out = f"{SYSCTLS}@@links\n{json.dumps(LINKS)}\n@@tc\n{json.dumps(self.tc)}\n@@nft\n{self.nft}\n"
            return CommandResult(command, 0, out, "")
        return CommandResult(command, 127, "", f"unexpected command {command}")

    def close(self) -> None: ...

    def is_alive(self) -> bool:
        return True


def driver(channel: Recorded, **optional: object) -> FRRDriver:
    d = FRRDriver("leaf1", "root", "", optional_args={"channel": channel, **optional})
    d.open()
    return d


def test_nftables_phantom_queue_state() -> None:
    state = driver(Recorded(NOQUEUE, "".join(NFT_RECORDED))).get_kernel_state()
    assert state["sysctl"]["net.ipv4.fib_multipath_hash_policy"] == 1
    assert state["sysctl"]["net.ipv4.fib_multipath_hash_seed"] == 1031014252
    assert "net.ipv4.conf.all.rp_filter" not in state["sysctl"]  # absent from /proc here: not reported
    assert state["links"] == {
        "swp1": {"mtu": 9216, "kind": "veth"},
        "swp2": {"mtu": 9216, "kind": "veth"},
        "mgmt0": {"mtu": 1500, "kind": "veth"},
    }
    assert state["ecn"] == {
        "mode": "nftables",
        "ports": {p: {"nftables": {"3": {"rate_pps": 7916666, "burst_packets": 100}}} for p in ("swp1", "swp2")},
        "dscp": {"ipv4": {"3": [26]}, "ipv6": {"3": [26]}},  # "af31" in nft's JSON; one rule per family
    }


def test_red_under_a_shaper_and_as_root() -> None:
    state = driver(Recorded(RED, ""), host_script_env={"NETFAB_SHAPE_MBIT": 20}).get_kernel_state()
    assert state["ecn"]["mode"] == "red"
    assert state["ecn"]["ports"]["swp1"]["red"] == {
        "limit": 6000000, "min": 150000, "max": 1500000, "probability": 0.99999999, "ecn": True,
    }  # fmt: skip
    assert state["ecn"]["ports"]["swp2"]["red"]["min"] == 400000
    assert state["env"] == {"NETFAB_SHAPE_MBIT": "20"}


def test_no_marking_at_all() -> None:
    assert driver(Recorded(NOQUEUE, "")).get_kernel_state()["ecn"] == {"mode": "off", "ports": {}, "dscp": {}}


def test_each_family_rule_counts_only_for_its_own_family() -> None:
    """The IPv4 rule deleted by hand (the IPv6 one stays): only ipv6 is reported as marking. A rule that
    matches the DSCP but no longer sets CE does not count either."""
    recorded = json.loads("".join(NFT_RECORDED))
    items = recorded["nftables"]
    v4 = next(i for i in items if "rule" in i and i["rule"]["expr"][0]["match"]["left"]["payload"]["protocol"] == "ip")
    items.remove(v4)
    state = driver(Recorded(NOQUEUE, json.dumps(recorded))).get_kernel_state()
    assert state["ecn"]["dscp"] == {"ipv6": {"3": [26]}}
    v6 = next(i for i in items if "rule" in i)
    v6["rule"]["expr"] = [e for e in v6["rule"]["expr"] if "mangle" not in e]
    assert driver(Recorded(NOQUEUE, json.dumps(recorded))).get_kernel_state()["ecn"]["dscp"] == {}


def test_one_command_reads_everything_through_sudo_when_asked() -> None:
    channel = Recorded(NOQUEUE, "")
    driver(channel, sudo=True).get_kernel_state()
    [command] = [c for c in channel.commands if "@@nft" in c]
    assert command.startswith("sudo -n sh -c ")
    assert "nft -j list table inet netfab_ecn" in shlex.split(command)[-1]


def test_qos_state_against_the_applied_host_script() -> None:
    state = driver(Recorded(NOQUEUE, "".join(NFT_RECORDED), HOST_SCRIPT)).get_qos_state()
    assert (
        state["expected"]
        == state["actual"]
        == {
            "ipv4 ECMP hash policy": 1,
            "ipv6 ECMP hash policy": 1,
            "ECMP hash seed": 1031014252,
            "ECN marking mode": "nftables",
        }
    )
    [pfc] = state["notes"]
    assert pfc.startswith("PFC not verified: 2 ports are veth (swp1, swp2)")  # mgmt0 carries no RoCE


def test_qos_state_fails_when_marking_is_off() -> None:
    state = driver(Recorded(NOQUEUE, "", HOST_SCRIPT)).get_qos_state()
    assert state["actual"]["ECN marking mode"] == "off"
    assert state["expected"]["ECN marking mode"] == "red or nftables"


def test_an_explicit_ecn_mode_is_what_is_expected() -> None:
    state = driver(Recorded(NOQUEUE, "".join(NFT_RECORDED), HOST_SCRIPT), host_script_env={"ECN_MODE": "red"})
    assert state.get_qos_state()["expected"]["ECN marking mode"] == "red"


def test_qos_state_without_a_host_script_reports_the_kernel_in_a_note() -> None:
    state = driver(Recorded(NOQUEUE, "".join(NFT_RECORDED))).get_qos_state()
    assert state["expected"] == {}
    assert any(n.startswith("no host script applied by netfab here yet") and "ECN marking mode nftables" in n
               for n in state["notes"])  # fmt: skip


# --- a real namespace ----------------------------------------------------------------------------------
@pytest.fixture
def live(frr_lab: FrrLab) -> Iterator[tuple[FRRDriver, FrrLab]]:
    d = FRRDriver(frr_lab.mgmt_ip, "root", "", timeout=20, optional_args=frr_lab.optional_args())
    d.open()
    before = frr_lab.ns("sysctl", "-n", "net.ipv4.fib_multipath_hash_policy").strip()
    yield d, frr_lab
    d.close()
    frr_lab.ns("sysctl", "-qw", f"net.ipv4.fib_multipath_hash_policy={before}")
    with contextlib.suppress(subprocess.CalledProcessError):
        frr_lab.ns("nft", "delete", "table", "inet", "netfab_ecn")
    (Path(frr_lab.work_dir) / "host.sh").unlink(missing_ok=True)


NFT_TABLE = """table inet netfab_ecn {
	limit pq3_swp1 { rate over 5000/second burst 37 packets }
	map pq3 { type ifname : limit; elements = { "swp1" : "pq3_swp1" } }
	chain postrouting {
		type filter hook postrouting priority 0; policy accept;
		ip dscp { 26, 34 } ip ecn { ect0, ect1 } limit name oifname map @pq3 ip ecn set ce
	}
}
"""


@pytest.mark.lab
def test_reads_a_real_kernel(live: tuple[FRRDriver, FrrLab]) -> None:
    dev, lab = live
    lab.ns("sysctl", "-qw", "net.ipv4.fib_multipath_hash_policy=3")
    table = lab.root / "ecn.nft"
    table.write_text(NFT_TABLE)
    lab.ns("nft", "-f", str(table))
    state = dev.get_kernel_state()
    assert state["sysctl"]["net.ipv4.fib_multipath_hash_policy"] == 3
    assert state["links"]["swp1"]["kind"] == "veth"
    assert state["ecn"]["mode"] == "nftables"
    assert state["ecn"]["ports"] == {"swp1": {"nftables": {"3": {"rate_pps": 5000, "burst_packets": 37}}}}
    assert state["ecn"]["dscp"] == {"ipv4": {"3": [26, 34]}}  # the table above has no ip6 rule
    (Path(lab.work_dir) / "host.sh").write_text(HOST_SCRIPT)
    qos = dev.get_qos_state()
    assert qos["actual"]["ipv4 ECMP hash policy"] == 3 and qos["expected"]["ipv4 ECMP hash policy"] == 1
