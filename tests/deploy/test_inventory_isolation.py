"""Per-host connection options: the shared-extras trap (INTEGRATION.md finding 1) is avoided.

Three hosts share one platform group whose extras carry optional_args; each host has its own port. The
connection is opened through Nornir with NAPALM's real EOSDriver constructor (its __init__ pops
enable_password, lock_disable, eos_autoComplete, ... out of the optional_args dict it is given); only
open() is replaced, to record what the driver ended up with instead of connecting.

The same assertion run against nornir_napalm's stock plugin fails (the first host's port leaks to the
others and the popped keys vanish for them), which shows the test can tell the difference.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import nornir_napalm.plugins.connections as stock_napalm
import pytest
from napalm.eos.eos import EOSDriver
from nornir.core import Nornir
from nornir.core.inventory import ConnectionOptions, Defaults, Group, Groups, Host, Hosts, Inventory
from nornir.core.plugins.connections import ConnectionPluginRegister
from nornir.core.task import Result, Task
from nornir.plugins.runners import SerialRunner

from netfab.deploy import connection
from netfab.deploy.connection import CONNECTION_NAME
from netfab.deploy.credentials import Credentials
from netfab.deploy.inventory import build_nornir

GROUP_OPTIONAL_ARGS = {
    "transport": "https",
    "lock_disable": True,
    "enable_password": "en-secret",
    "eos_autoComplete": True,
}
PORTS = {"leaf1": 50031, "leaf2": 50032, "leaf3": 50033}

OPENED: dict[str, dict[str, Any]] = {}


class RecordingEOSDriver(EOSDriver):
    """NAPALM's EOSDriver, constructed for real; open() records instead of connecting."""

    def open(self) -> None:
        OPENED[self.hostname] = {
            "port": self.eapi_kwargs.get("port"),
            "lock_disable": self.lock_disable,
            "enable_password": self.enablepwd,
            "autocomplete": self.eos_autoComplete,
            "optional_args_id": id(self.optional_args),
        }

    def close(self) -> None:
        pass


def _connect(task: Task, plugin: str) -> Result:
    task.host.get_connection(plugin, task.nornir.config)
    return Result(host=task.host)


def assert_isolated(opened: dict[str, dict[str, Any]]) -> None:
    for name, port in PORTS.items():
        got = opened[name]
        assert got["port"] == port, f"{name} connected to port {got['port']}, its own is {port}"
        assert got["lock_disable"] is True, f"{name} lost lock_disable (popped by another host's driver)"
        assert got["enable_password"] == "en-secret", f"{name} lost its enable password"
        assert got["autocomplete"] is True
    assert len({o["optional_args_id"] for o in opened.values()}) == len(PORTS), "hosts share one optional_args dict"


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    OPENED.clear()
    yield
    OPENED.clear()


def test_netfab_gives_every_host_its_own_port_and_optional_args(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "resolve_driver", lambda name: RecordingEOSDriver)
    hosts = {n: {"hostname": n, "port": p, "groups": ["platform_arista_eos"]} for n, p in PORTS.items()}
    groups = {
        "platform_arista_eos": {
            "connection_options": {
                CONNECTION_NAME: {"platform": "eos", "extras": {"optional_args": dict(GROUP_OPTIONAL_ARGS)}}
            }
        }
    }
    nr = build_nornir(hosts, groups, Credentials(username="netops", password="pw"), workers=1)
    nr = nr.with_runner(SerialRunner())  # serial: with a shared dict, the first host would win every time
    result = nr.run(task=_connect, plugin=CONNECTION_NAME)
    assert not result.failed
    assert_isolated(OPENED)
    # And the inventory itself is untouched: the group still carries every key, hosts hold their own copies.
    group_extras = nr.inventory.groups["platform_arista_eos"].connection_options[CONNECTION_NAME].extras
    assert group_extras == {"optional_args": GROUP_OPTIONAL_ARGS}
    for name in PORTS:
        host_extras = nr.inventory.hosts[name].connection_options[CONNECTION_NAME].extras
        assert host_extras["optional_args"] == GROUP_OPTIONAL_ARGS
        assert host_extras["optional_args"] is not group_extras["optional_args"]
    # A second round of connections (e.g. `netfab rollback` after a deploy) sees the same options again.
    nr.close_connections()
    OPENED.clear()
    nr.run(task=_connect, plugin=CONNECTION_NAME)
    assert_isolated(OPENED)


def test_host_level_extras_override_the_group_per_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host's own optional_args add to the group's (deep merge), unlike Nornir's whole-dict replacement."""
    monkeypatch.setattr(connection, "resolve_driver", lambda name: RecordingEOSDriver)
    hosts = {n: {"hostname": n, "port": p, "groups": ["platform_arista_eos"]} for n, p in PORTS.items()}
    hosts["leaf2"]["connection_options"] = {CONNECTION_NAME: {"extras": {"optional_args": {"lock_disable": False}}}}
    groups = {
        "platform_arista_eos": {
            "connection_options": {
                CONNECTION_NAME: {"platform": "eos", "extras": {"optional_args": dict(GROUP_OPTIONAL_ARGS)}}
            }
        }
    }
    nr = build_nornir(hosts, groups, Credentials(), workers=1).with_runner(SerialRunner())
    nr.run(task=_connect, plugin=CONNECTION_NAME)
    assert OPENED["leaf2"]["lock_disable"] is False and OPENED["leaf2"]["enable_password"] == "en-secret"
    assert OPENED["leaf1"]["lock_disable"] is True and OPENED["leaf3"]["lock_disable"] is True
    assert [OPENED[n]["port"] for n in PORTS] == list(PORTS.values())


def test_the_stock_nornir_napalm_plugin_would_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    """Control: the same hosts and group through nornir_napalm's own `napalm` plugin fail the assertion."""
    monkeypatch.setattr(stock_napalm, "get_network_driver", lambda name: RecordingEOSDriver)
    if "napalm" not in ConnectionPluginRegister.available:
        ConnectionPluginRegister.register("napalm", stock_napalm.Napalm)
    group = Group(
        "platform_arista_eos",
        connection_options={
            "napalm": ConnectionOptions(platform="eos", extras={"optional_args": dict(GROUP_OPTIONAL_ARGS)})
        },
    )
    hosts = Hosts(
        {n: Host(n, hostname=n, port=p, username="netops", password="pw", groups=[group]) for n, p in PORTS.items()}
    )
    inventory = Inventory(hosts=hosts, groups=Groups({group.name: group}), defaults=Defaults())
    nr = Nornir(inventory=inventory, runner=SerialRunner())
    result = nr.run(task=_connect, plugin="napalm")
    assert not result.failed
    with pytest.raises(AssertionError, match="leaf2 connected to port 50031, its own is 50032"):
        assert_isolated(OPENED)
    # What leaked, precisely: leaf1's port for everyone; leaf1's driver popped the keys the others needed.
    assert [OPENED[n]["port"] for n in PORTS] == [50031, 50031, 50031]
    assert OPENED["leaf1"]["lock_disable"] is True and OPENED["leaf2"]["lock_disable"] is False
    assert OPENED["leaf3"]["enable_password"] == ""
