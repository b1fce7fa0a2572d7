"""Online collection reads each part with the getter its platform record names, through the driver's own
settings: SONiC's FRR config comes from the bgp container the driver deploys to (optional_args bgp_container),
not from a container name the audit assumes."""

from __future__ import annotations

import json
import re
from typing import Any

from audit_helpers import intended, leaf

from netfab.audit.collect import collect_device
from netfab.deploy.drivers.sonic import SonicDriver
from netfab.deploy.drivers.ssh import CommandResult

VTYSH_SHOW = r"sudo -n docker exec -e VTYSH_HISTFILE=/dev/null -i (\S+) vtysh -c 'show running-config'"


class Channel:
    """Answers the two reads of a SONiC audit; records every command."""

    def __init__(self, running: str, frr: str) -> None:
        self.running, self.frr = running, frr
        self.commands: list[str] = []

    def run(self, command: str, stdin: str | None = None, timeout: float | None = None) -> CommandResult:
        self.commands.append(command)
        if command.startswith("umask 077 && mkdir -p "):  # open(): the driver's work dir
            return CommandResult(command, 0, "/home/admin/.netfab/leaf1\n", "")
        if command == "show runningconfiguration all":
            return CommandResult(command, 0, self.running, "")
        if re.fullmatch(VTYSH_SHOW, command):
            return CommandResult(command, 0, self.frr, "")
        return CommandResult(command, 1, "", f"unexpected command {command!r}")

    def is_alive(self) -> bool:
        return True

    def close(self) -> None:
        pass


def _driver(channel: Channel, **options: Any) -> SonicDriver:
    driver = SonicDriver("leaf1", "admin", "", optional_args={"channel": channel, **options})
    driver.open()
    return driver


def test_sonic_frr_part_is_read_from_the_drivers_container() -> None:
    files = intended("sonic")
    channel = Channel(files[".json"], files[".frr.conf"])
    got = collect_device(_driver(channel, bgp_container="bgp1"), leaf("sonic"))
    assert got.files == {".json": files[".json"], ".frr.conf": files[".frr.conf"]}
    assert "sudo -n docker exec -e VTYSH_HISTFILE=/dev/null -i bgp1 vtysh -c 'show running-config'" in channel.commands
    assert not any("exec -i bgp " in c for c in channel.commands)


def test_an_unreadable_companion_is_not_collected_not_a_failure() -> None:
    files = intended("sonic")
    channel = Channel(files[".json"], "")
    got = collect_device(_driver(channel), leaf("sonic"))
    assert set(got.files) == {".json"}  # the audit then notes the part as not collected
    assert json.loads(got.files[".json"]) == json.loads(files[".json"])
