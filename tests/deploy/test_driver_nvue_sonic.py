"""nvue and sonic drivers against MOCK devices: no NVUE or SONiC switch runs here.

MockNvueDevice / MockSonicDevice are fake command channels (the drivers' CommandChannel seam): each command
string the driver sends is matched against a table of regexes and answered from a small in-memory model of
the device (applied/pending revision, CONFIG_DB + checkpoints, the device-side timer). They prove the command
sequences and the drivers' decisions; they do NOT prove the platforms accept these commands - see the
[U] markers in nvue.py/sonic.py. Unknown commands fail the test.

Recorded outputs: IP_LINK and the FRR JSON are captured from this machine's iproute2 / FRR 8.4.4; the lldpd
json0 and SONiC `show version` samples are written to those tools' documented formats (not device captures).
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import Callable
from typing import Any

import jsonpatch
import pytest
from napalm.base.exceptions import (
    CommitConfirmException,
    CommitError,
    MergeConfigException,
    ReplaceConfigException,
)

from netfab.deploy.drivers.nvue import NVUEDriver
from netfab.deploy.drivers.sonic import SonicDriver
from netfab.deploy.drivers.ssh import CommandResult

# Every vtysh the drivers start keeps no history on the device (VTYSH_HISTFILE, base.VTYSH_NO_HISTORY).
IN_BGP = "docker exec -e VTYSH_HISTFILE=/dev/null"
VTYSH = rf"(env VTYSH_HISTFILE=/dev/null |{IN_BGP} -i \S+ )vtysh"
IP_LINK = [
    {"ifindex": 1, "ifname": "lo", "flags": ["LOOPBACK", "UP", "LOWER_UP"], "mtu": 65536, "operstate": "UNKNOWN",
     "address": "00:00:00:00:00:00"},
    {"ifindex": 3, "ifname": "swp1", "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "mtu": 9216,
     "operstate": "UP", "address": "f2:7c:56:46:34:48", "ifalias": "to spine1"},
    {"ifindex": 4, "ifname": "Ethernet0", "flags": ["BROADCAST", "MULTICAST", "UP"], "mtu": 9100,
     "operstate": "DOWN", "address": "aa:bb:cc:00:00:01"},
]  # fmt: skip
SPEEDS = "lo -1\nswp1 400000\nEthernet0 -1\n"
FRR_NEIGHBORS = {
    "default": {"vrfId": 0, "vrfName": "default", "swp1": {
        "remoteAs": 65100, "localAs": 65001, "remoteRouterId": "10.0.0.100", "localRouterId": "10.0.0.1",
        "bgpState": "Established", "bgpTimerUpMsec": 61000,
        "addressFamilyInfo": {"ipv4Unicast": {"acceptedPrefixCounter": 12, "sentPrefixCounter": 3}}}}
}  # fmt: skip
FRR_ROUTES = {
    "10.99.0.0/24": [{"prefix": "10.99.0.0/24", "selected": True, "installed": True, "nexthops": [
        {"fib": True, "ip": "fe80::1", "interfaceName": "swp1", "active": True},
        {"fib": True, "ip": "fe80::2", "interfaceName": "swp2", "active": True},
        {"ip": "fe80::3", "interfaceName": "swp3", "active": False}]}]
}  # fmt: skip
LLDP_JSON0 = {"lldp": [{"interface": [
    {"name": "swp1", "chassis": [{"name": [{"value": "spine1"}]}],
     "port": [{"id": [{"type": "ifname", "value": "swp17"}], "descr": [{"value": "to leaf1"}]}]},
    {"name": "swp2", "chassis": [{"name": [{"value": "spine2"}]}],
     "port": [{"id": [{"type": "mac", "value": "aa:bb:cc:dd:ee:ff"}], "descr": [{"value": "Ethernet8"}]}]},
]}]}  # fmt: skip
SHOW_VERSION = """SONiC Software Version: SONiC.202311.1
Distribution: Debian 12.5
Kernel: 6.1.0-11-2-amd64
Platform: x86_64-mlnx_msn4700-r0
HwSKU: ACS-MSN4700
ASIC: mellanox
Serial Number: MT2211X01234
Uptime: 10:00:00 up 3 days
"""

Handler = Callable[[re.Match[str], str | None], tuple[int, str] | str]


class MockDevice:
    """A fake CommandChannel: regex -> handler over an in-memory device model. Records every command."""

    def __init__(self, home: str) -> None:
        self.home = home
        self.files: dict[str, str] = {}
        self.commands: list[str] = []
        self.timer = "none"  # the device-side revert timer: none / pending / fired
        self.timer_script = ""
        self.revert_rc = 0
        self.routes: list[tuple[str, Handler]] = [
            (r"^umask 077 && mkdir -p (\S+) && cd \S+ && pwd$", lambda m, _: f"{self.home}/{m[1]}\n"),
            (r"^umask 077 && cat > (\S+)\.tmp && mv -f \S+ \S+$", self._upload),
            (r"^cat (\S+)$", lambda m, _: (0, self.files[m[1]]) if m[1] in self.files else (1, "")),
            (r"^test -f (\S+)$", lambda m, _: (0 if m[1] in self.files else 1, "")),
            (r"^rm -f (\S+)$", lambda m, _: self.files.pop(m[1], "") and ""),
            (r"^ip -j -d link show$", lambda m, _: json.dumps(IP_LINK)),
            (r"^for i in /sys/class/net/\*", lambda m, _: SPEEDS),
            (r"^hostname; hostname -f", lambda m, _: "leaf1\nleaf1.fab\n1234.5\nx86_64\nDebian\n\n\n"),
            (rf"^sudo -n {VTYSH} -c 'show bgp vrf all neighbors json'$",
             lambda m, _: json.dumps(FRR_NEIGHBORS)),
            (rf"^sudo -n {VTYSH} -c 'show ip route json'$", lambda m, _: json.dumps(FRR_ROUTES)),
            (rf"^sudo -n {VTYSH} -c 'show ipv6 route json'$", lambda m, _: "{}"),
            (r"^sudo -n (docker exec -i lldp )?lldpctl -f json0$", lambda m, _: json.dumps(LLDP_JSON0)),
            (r"^is_timer\(\).*kill -USR1", self._fire),
            (r"cat revert\.rc 2>/dev/null \|\| echo missing; echo @@log", lambda m, _: f"{self.revert_rc}\n@@log\n"),
            (r"^is_timer\(\).*echo pending", lambda m, _: self.timer),
            (r"^is_timer\(\).*mv revert\.pid revert\.cancel", self._cancel),
            (r"setsid sh revert\.sh", self._arm),
            (r"^cd \S+ && rm -f revert\.rc revert\.log$", lambda m, _: ""),
        ]  # fmt: skip

    def _upload(self, m: re.Match[str], stdin: str | None) -> str:
        self.files[m[1]] = stdin or ""
        if m[1].endswith("/revert.sh"):
            self.timer_script = stdin or ""
        return ""

    def _arm(self, m: re.Match[str], _: str | None) -> str:
        self.timer = "pending"
        return "4242\n"

    def _fire(self, m: re.Match[str], _: str | None) -> str:
        """A rollback fires the armed timer: the device runs the timer's own revert snippet now."""
        if self.timer != "pending":
            return self.timer
        self.expire_timer()
        return "signalled"

    def expire_timer(self) -> None:
        """What the detached script on the device does when nobody confirms: run its revert snippet."""
        assert self.timer == "pending"
        revert = re.search(r"\( (.*) \) >revert\.log", self.timer_script, re.S)
        assert revert is not None
        self.revert_rc = self.run(revert[1]).rc
        self.timer = "fired"

    def _cancel(self, m: re.Match[str], _: str | None) -> str:
        state, self.timer = self.timer, ("none" if self.timer == "pending" else self.timer)
        return "cancelled" if state == "pending" else state

    def run(self, command: str, stdin: str | None = None, timeout: float | None = None) -> CommandResult:
        self.commands.append(command)
        for pattern, handler in self.routes:
            m = re.search(pattern, command, re.S)
            if m:
                out = handler(m, stdin)
                rc, text = out if isinstance(out, tuple) else (0, out)
                return CommandResult(command, rc, text, "" if rc == 0 else text)
        raise AssertionError(f"mock device: unexpected command {command!r}")

    def close(self) -> None:
        pass

    def is_alive(self) -> bool:
        return True

    def issued(self, pattern: str) -> list[str]:
        return [c for c in self.commands if re.search(pattern, c)]


# --- NVUE -------------------------------------------------------------------------------------------------
class MockNvueDevice(MockDevice):
    """Applied/pending revisions and NVUE's own confirm timer."""

    def __init__(self) -> None:
        super().__init__("/home/cumulus")
        self.applied = "- set:\n    system:\n      hostname: leaf1\n"
        self.pending: str | None = None
        self.before_confirm: str | None = None
        self.routes[:0] = [
            (r"^nv config replace (\S+)$", self._replace),
            (r"^nv config diff -o commands$", lambda m, _: self._diff()),
            (r"^nv config detach$", lambda m, _: setattr(self, "pending", None) or ""),
            (r"^umask 077 && nv config show -o yaml > (\S+)\.tmp && mv -f \S+ \S+$",
             lambda m, _: self.files.__setitem__(m[1], self.applied) or ""),
            (r"^nv config apply --confirm-yes$", lambda m, _: setattr(self, "before_confirm", None) or ""),
            (r"^nv config apply --confirm-no$", self._confirm_no),
            (r"^nv config apply -y(.*)$", self._apply),
            (r"^nv config show -o yaml$", lambda m, _: self.applied),
            (r"^cat /etc/nvue.d/startup.yaml$", lambda m, _: self.applied),
            (r"^echo \$\(\( \$\(date \+%s\) \+ (\d+) \)\) > (\S+)$",
             lambda m, _: self.files.__setitem__(m[2], str(int(time.time()) + int(m[1]))) or ""),
            (r"^f=(\S+); \[ -f \$f \] && \[ \$\(date \+%s\) -lt \$\(cat \$f\) \] && echo yes$", self._pending),
        ]  # fmt: skip

    def _replace(self, m: re.Match[str], _: str | None) -> tuple[int, str]:
        text = self.files[m[1]]
        if "bogus" in text:
            return 1, "Error: Invalid config: 'bogus' is not a valid key"
        self.pending = text
        return 0, ""

    def _diff(self) -> str:
        if self.pending is None or self.pending == self.applied:
            return ""
        return "nv set interface swp1 link mtu 9216\n"

    def _apply(self, m: re.Match[str], _: str | None) -> tuple[int, str]:
        if self.pending is None:
            return 0, "Warning: no pending changes"
        if "--confirm" in m[1]:
            self.before_confirm = self.applied
        self.applied, self.pending = self.pending, None
        return 0, "applied"

    def _confirm_no(self, m: re.Match[str], _: str | None) -> str:
        assert self.before_confirm is not None
        self.applied, self.before_confirm = self.before_confirm, None
        return ""

    def _pending(self, m: re.Match[str], _: str | None) -> tuple[int, str]:
        deadline = self.files.get(m[1])
        return (0, "yes\n") if deadline and time.time() < int(deadline) else (1, "")


NEW_NVUE = "- set:\n    interface:\n      swp1:\n        link:\n          mtu: 9216\n"


@pytest.fixture
def nvue() -> tuple[NVUEDriver, MockNvueDevice]:
    mock = MockNvueDevice()
    dev = NVUEDriver("leaf1", "cumulus", "", optional_args={"channel": mock})
    dev.open()
    return dev, mock


def test_nvue_commit_confirm_sequence(nvue: tuple[NVUEDriver, MockNvueDevice]) -> None:
    dev, mock = nvue
    assert dev.workdir == "/home/cumulus/.netfab/leaf1"
    dev.load_replace_candidate(config=NEW_NVUE)
    assert dev.compare_config() == "nv set interface swp1 link mtu 9216"
    dev.commit_config(message="rail 0 wave", revert_in=120)
    assert mock.issued(r"^nv config apply -y --confirm 120s -m 'rail 0 wave'$")
    assert mock.files[f"{dev.workdir}/rollback.yaml"].startswith("- set:\n    system:")  # saved before apply
    assert dev.has_pending_commit()
    with pytest.raises(CommitError, match="pending"):
        dev.load_replace_candidate(config=NEW_NVUE)
        dev.commit_config()
    dev.confirm_commit()
    assert mock.issued(r"^nv config apply --confirm-yes$")
    assert not dev.has_pending_commit()
    assert mock.applied == NEW_NVUE
    with pytest.raises(CommitConfirmException, match="no pending commit"):
        dev.confirm_commit()


def test_nvue_commit_without_timer_and_in_sync_diff(nvue: tuple[NVUEDriver, MockNvueDevice]) -> None:
    dev, mock = nvue
    dev.load_replace_candidate(config=NEW_NVUE)
    dev.commit_config()
    assert mock.issued(r"^nv config apply -y$") and not mock.issued("--confirm")
    assert not dev.has_pending_commit()
    dev.load_replace_candidate(config=NEW_NVUE)
    assert dev.compare_config() == ""
    dev.discard_config()
    assert mock.issued(r"^nv config detach$")
    assert dev.get_config()["running"] == NEW_NVUE


def test_nvue_rollback_pending_uses_confirm_no_else_reapplies_saved(nvue: tuple[NVUEDriver, MockNvueDevice]) -> None:
    dev, mock = nvue
    original = mock.applied
    dev.load_replace_candidate(config=NEW_NVUE)
    dev.commit_config(revert_in=60)
    dev.rollback()
    assert mock.issued(r"^nv config apply --confirm-no$")
    assert mock.applied == original and not dev.has_pending_commit()
    dev.load_replace_candidate(config=NEW_NVUE)
    dev.commit_config()
    dev.rollback()  # no timer involved any more: re-apply what the commit saved
    assert mock.issued(r"^nv config replace \S+/rollback\.yaml$")
    assert mock.applied == original


def test_nvue_rejects_bad_candidates(nvue: tuple[NVUEDriver, MockNvueDevice]) -> None:
    dev, mock = nvue
    with pytest.raises(ReplaceConfigException, match="not YAML"):
        dev.load_replace_candidate(config="- set: [unclosed")
    with pytest.raises(ReplaceConfigException, match="not a valid key"):
        dev.load_replace_candidate(config="- set:\n    bogus: 1\n")
    assert mock.issued(r"^nv config detach$")  # partial staging dropped
    with pytest.raises(CommitError, match="nothing to commit"):
        dev.commit_config()


def test_nvue_getters_read_linux_frr_and_lldpd(nvue: tuple[NVUEDriver, MockNvueDevice]) -> None:
    dev, _ = nvue
    swp1 = dev.get_interfaces()["swp1"]
    assert swp1 == {"is_up": True, "is_enabled": True, "description": "to spine1", "last_flapped": -1.0,
                    "mtu": 9216, "speed": 400000.0, "mac_address": "F2:7C:56:46:34:48"}  # fmt: skip
    assert dev.get_interfaces()["lo"]["is_up"]  # operstate UNKNOWN + LOWER_UP
    peer = dev.get_bgp_neighbors()["global"]["peers"]["swp1"]
    assert peer["is_up"] and peer["uptime"] == 61 and peer["address_family"]["ipv4"]["sent_prefixes"] == 3
    assert dev.get_lldp_neighbors() == {
        "swp1": [{"hostname": "spine1", "port": "swp17"}],
        "swp2": [{"hostname": "spine2", "port": "Ethernet8"}],  # MAC port id: fall back to the description
    }
    assert dev.get_route_ecmp_width() == {"10.99.0.0/24": 2}  # the inactive third next hop is not in the FIB
    facts = dev.get_facts()
    assert (facts["hostname"], facts["vendor"], facts["uptime"]) == ("leaf1", "NVIDIA", 1234.5)


# --- SONiC ------------------------------------------------------------------------------------------------
RUNNING_DB: dict[str, Any] = {
    "DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "hwsku": "ACS-MSN4700",
                                      "docker_routing_config_mode": "split"}},
    "MGMT_INTERFACE": {"eth0|10.0.0.5/24": {"gwaddr": "10.0.0.1"}},
    "PORT": {"Ethernet0": {"admin_status": "up", "mtu": "9100", "speed": "400000", "alias": "etp1"}},
}  # fmt: skip


BGPCFGD_FRR = "frr version 8.5\nrouter bgp 65001\n! generated by bgpcfgd\n"


class MockSonicDevice(MockDevice):
    """CONFIG_DB with GCU checkpoints, config save, and FRR in a bgp container."""

    def __init__(self) -> None:
        super().__init__("/home/admin")
        self.running = copy.deepcopy(RUNNING_DB)
        self.saved = copy.deepcopy(RUNNING_DB)
        self.checkpoints: dict[str, dict[str, Any]] = {}
        self.container: dict[str, str] = {}
        self.frr_running = "frr version 8.5\nrouter bgp 65001\n"
        self.routes[:0] = [
            (r"^show runningconfiguration all$", lambda m, _: json.dumps(self.running)),
            (r"^show version$", lambda m, _: SHOW_VERSION),
            (r"^cat /etc/sonic/config_db.json$", lambda m, _: json.dumps(self.saved)),
            (r"^sudo -n config checkpoint (\S+)$",
             lambda m, _: self.checkpoints.__setitem__(m[1], copy.deepcopy(self.running)) or ""),
            (r"^sudo -n config apply-patch (\S+)$", self._apply_patch),
            (r"sudo -n config rollback ([^\s;]+)", self._rollback),
            (r"^sudo -n config save -y$", lambda m, _: setattr(self, "saved", copy.deepcopy(self.running)) or ""),
            (r"^sudo -n docker exec -i bgp sh -c '.*cat > /var/tmp/netfab/(\S+)'$",
             lambda m, stdin: self.container.__setitem__(m[1], stdin or "") or ""),
            (rf"^sudo -n {IN_BGP} -i bgp vtysh -c 'show running-config'$",
             lambda m, _: "Building configuration...\n\nCurrent configuration:\n" + self.frr_running),
            (rf"^sudo -n {IN_BGP} bgp /usr/lib/frr/frr-reload.py --(test|reload) --stdout /var/tmp/netfab/(\S+)$",
             self._frr_reload),
            (r"^sudo -n systemctl restart bgp$", lambda m, _: self._restart_bgp() or ""),
            (r"^sudo -n docker exec -i bgp vtysh -c 'show version'$", lambda m, _: "FRRouting 8.5\n"),
        ]  # fmt: skip
        self.bgp_restarts = 0

    def _restart_bgp(self) -> None:
        """bgp reads docker_routing_config_mode when it starts: without split mode bgpcfgd writes FRR's config."""
        self.bgp_restarts += 1
        if self.running["DEVICE_METADATA"]["localhost"].get("docker_routing_config_mode") not in (
            "split",
            "split-unified",
        ):
            self.frr_running = BGPCFGD_FRR

    def _apply_patch(self, m: re.Match[str], _: str | None) -> tuple[int, str]:
        ops = json.loads(self.files[m[1]])
        good = [op for op in ops if "BOGUS" not in op["path"]]
        self.running = jsonpatch.apply_patch(self.running, good)
        if len(good) < len(ops):  # GCU fails mid-way: the other changes are already in CONFIG_DB
            return 1, "Error: Failed to apply patch: /BOGUS failed YANG validation"
        return 0, "Patch applied successfully."

    def _rollback(self, m: re.Match[str], _: str | None) -> tuple[int, str]:
        name = m[1].strip("'")
        self.running = copy.deepcopy(self.checkpoints[name])
        if "systemctl restart bgp" in m.string and any(f.endswith("/mode.switched") for f in self.files):
            self._restart_bgp()
        elif "rollback.conf" in m.string and any(f.endswith("/frr.saved") for f in self.files):
            self.frr_running = self.container["rollback.conf"]
        return 0, "Config rolled back successfully."

    def _frr_reload(self, m: re.Match[str], _: str | None) -> str:
        text = self.container[m[2]]
        if m[1] == "reload":
            self.frr_running = text
            return ""
        return "" if text == self.frr_running else "Lines To Add\n============\nrouter bgp 65001\n neighbor x\n"


NEW_PORT = {"PORT": {"Ethernet0": {"admin_status": "up", "mtu": "9216", "speed": "400000", "alias": "etp1"}},
            "WRED_PROFILE": {"ROCE": {"ecn": "ecn_all", "green_min_threshold": "150000"}}}  # fmt: skip


@pytest.fixture
def sonic() -> tuple[SonicDriver, MockSonicDevice]:
    mock = MockSonicDevice()
    dev = SonicDriver("leaf1", "admin", "", optional_args={"channel": mock})
    dev.open()
    return dev, mock


def ops(diff: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in diff.splitlines() if line.startswith("{")]


def test_sonic_diff_is_the_json_patch_scoped_to_candidate_tables(sonic: tuple[SonicDriver, MockSonicDevice]) -> None:
    dev, _ = sonic
    dev.load_replace_candidate(config=json.dumps(NEW_PORT))
    assert sorted(op["path"] for op in ops(dev.compare_config())) == ["/PORT/Ethernet0/mtu", "/WRED_PROFILE"]
    full = SonicDriver("leaf1", "admin", "", optional_args={"channel": sonic[1], "sonic_replace_scope": "full"})
    full.open()
    full.load_replace_candidate(config=json.dumps(NEW_PORT))
    assert {"op": "remove", "path": "/DEVICE_METADATA"} in ops(full.compare_config())
    dev.load_merge_candidate(config=json.dumps({"PORT": {"Ethernet0": {"mtu": "9216"}}}))
    assert ops(dev.compare_config()) == [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9216"}]
    with pytest.raises(MergeConfigException, match="not JSON"):
        dev.load_merge_candidate(config="{")


def test_sonic_commit_confirm_checkpoints_then_saves(sonic: tuple[SonicDriver, MockSonicDevice]) -> None:
    dev, mock = sonic
    dev.load_replace_candidate(config=json.dumps(NEW_PORT))
    dev.commit_config(revert_in=300)
    (checkpoint,) = mock.checkpoints
    assert checkpoint.startswith("netfab-") and mock.checkpoints[checkpoint] == RUNNING_DB
    assert f"config rollback {checkpoint}" in mock.timer_script and "sleep 300" in mock.timer_script
    order = [c for c in mock.commands if re.search(r"config checkpoint|setsid|apply-patch", c)]
    assert ["checkpoint" in order[0], "setsid" in order[1], "apply-patch" in order[2]] == [True] * 3
    assert mock.running["PORT"]["Ethernet0"]["mtu"] == "9216"
    assert mock.saved == RUNNING_DB  # not persisted before the confirm
    assert dev.has_pending_commit()
    dev.confirm_commit()
    assert not dev.has_pending_commit() and mock.saved == mock.running


def test_sonic_unconfirmed_commit_is_reverted_by_the_device_timer(sonic: tuple[SonicDriver, MockSonicDevice]) -> None:
    dev, mock = sonic
    dev.load_replace_candidate(config=json.dumps(NEW_PORT))
    dev.commit_config(revert_in=5)
    mock.expire_timer()
    assert mock.running == RUNNING_DB
    with pytest.raises(CommitConfirmException, match="reverted"):
        dev.confirm_commit()


def test_sonic_failed_patch_restores_the_checkpoint(sonic: tuple[SonicDriver, MockSonicDevice]) -> None:
    dev, mock = sonic
    bad = dict(NEW_PORT, BOGUS={"x": {"y": "1"}})
    dev.load_replace_candidate(config=json.dumps(bad))
    with pytest.raises(CommitError, match=r"(?s)YANG validation.*Restored checkpoint"):
        dev.commit_config(revert_in=300)
    assert mock.running == RUNNING_DB and mock.timer == "fired"  # restored by the device-side timer


def test_sonic_rollback_of_a_pending_commit_fires_its_timer(sonic: tuple[SonicDriver, MockSonicDevice]) -> None:
    """F1-A for SONiC: the rollback never cancels the timer first (a client dying in between left the device on
    the unconfirmed config with nothing armed); it fires it, so the revert runs on the device."""
    dev, mock = sonic
    dev.load_replace_candidate(config=json.dumps(NEW_PORT))
    dev.commit_config(revert_in=300)
    dev.rollback()
    assert mock.running == RUNNING_DB
    assert mock.issued("kill -USR1") and not mock.issued("mv revert.pid revert.cancel")


def test_sonic_rollback_after_confirm(sonic: tuple[SonicDriver, MockSonicDevice]) -> None:
    dev, mock = sonic
    dev.load_replace_candidate(config=json.dumps(NEW_PORT))
    dev.commit_config()  # no timer: saved at once
    assert mock.saved["PORT"]["Ethernet0"]["mtu"] == "9216"
    dev.rollback()
    assert mock.running == RUNNING_DB and mock.saved == RUNNING_DB


def test_sonic_frr_companion_goes_through_the_bgp_container(sonic: tuple[SonicDriver, MockSonicDevice]) -> None:
    dev, mock = sonic
    new_frr = "frr version 8.5\nrouter bgp 65001\n neighbor Ethernet0 interface remote-as external\n"
    dev.load_replace_candidate(config=json.dumps(NEW_PORT))
    dev.load_companions({"leaf1.frr.conf": new_frr})
    assert "# FRR (bgp container)" in dev.compare_config()
    dev.commit_config(revert_in=60)
    assert mock.frr_running == new_frr
    assert mock.container["rollback.conf"] == "frr version 8.5\nrouter bgp 65001\n"  # banner stripped
    mock.expire_timer()
    assert mock.frr_running == "frr version 8.5\nrouter bgp 65001\n" and mock.running == RUNNING_DB
    with pytest.raises(ReplaceConfigException, match="no way to apply"):
        dev.load_companions({"leaf1.sh": "echo"})


def test_sonic_refuses_frr_config_that_bgpcfgd_owns(sonic: tuple[SonicDriver, MockSonicDevice]) -> None:
    dev, mock = sonic
    mock.running["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] = "unified"
    dev.load_frr_candidate("router bgp 65001\n")
    with pytest.raises(CommitError, match="needs 'split'"):
        dev.commit_config()
    assert not mock.checkpoints  # refused before touching anything


def test_sonic_first_deploy_on_a_stock_switch_switches_bgpcfgd_off_then_pushes_frr(
    sonic: tuple[SonicDriver, MockSonicDevice],
) -> None:
    # SON-6: a stock switch runs bgpcfgd (mode 'separated'); the candidate sets split-unified, which bgp reads
    # only when it starts. The commit applies CONFIG_DB, restarts bgp, waits for its vtysh, then pushes FRR.
    dev, mock = sonic
    mock.running["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] = "separated"
    stock = copy.deepcopy(mock.running)
    candidate = copy.deepcopy(NEW_PORT)
    candidate["DEVICE_METADATA"] = {"localhost": {"hostname": "leaf1", "docker_routing_config_mode": "split-unified"}}
    new_frr = "frr version 8.5\nrouter bgp 65001\n neighbor Ethernet0 interface remote-as external\n"
    dev.load_replace_candidate(config=json.dumps(candidate))
    dev.load_companions({"leaf1.frr.conf": new_frr})
    dev.commit_config(revert_in=60)
    order = [c for c in mock.commands if re.search(r"apply-patch|systemctl restart bgp|'show version'|--reload", c)]
    assert [re.sub(r"^sudo -n (\S+ \S+).*", r"\1", c) for c in order] == [
        "config apply-patch", "systemctl restart", "docker exec", "docker exec",
    ]  # fmt: skip
    assert "frr-reload.py --reload" in order[-1]
    assert mock.running["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] == "split-unified"
    assert mock.running["DEVICE_METADATA"]["localhost"]["hwsku"] == "ACS-MSN4700"  # never deleted
    assert mock.frr_running == new_frr and mock.bgp_restarts == 1
    # Unconfirmed: the checkpoint brings 'separated' back and a second restart hands FRR back to bgpcfgd.
    mock.expire_timer()
    assert mock.running == stock and mock.bgp_restarts == 2 and mock.frr_running == BGPCFGD_FRR


def test_sonic_getters(sonic: tuple[SonicDriver, MockSonicDevice]) -> None:
    dev, _ = sonic
    facts = dev.get_facts()
    assert (facts["os_version"], facts["model"], facts["serial_number"]) == (
        "SONiC.202311.1", "ACS-MSN4700", "MT2211X01234")  # fmt: skip
    eth0 = dev.get_interfaces()["Ethernet0"]
    # admin state, speed, MTU from CONFIG_DB; oper state from the kernel netdev
    assert (eth0["is_enabled"], eth0["is_up"], eth0["speed"], eth0["mtu"]) == (True, False, 400000.0, 9100)
    assert "swp1" in dev.get_bgp_neighbors()["global"]["peers"]
    assert dev.get_route_ecmp_width(["10.99.0.0/24"]) == {"10.99.0.0/24": 2}
    assert dev.get_lldp_neighbors()["swp1"] == [{"hostname": "spine1", "port": "swp17"}]
