"""core.ssh without a network: where a connection goes after explicit settings, ssh_config and jump hosts."""

from __future__ import annotations

from pathlib import Path

import pytest

from netfab.core import ssh
from netfab.core.ssh import SSHConfigError, SSHParams, env_options, load_ssh_config, resolve_route

CONFIG = """
Host bastion
  HostName 192.0.2.10
  User jumper
  Port 2222
  IdentityFile ~/.ssh/bastion_key

Host leaf*
  ProxyJump bastion
  User admin
  IdentityFile ~/.ssh/fabric_key
  UserKnownHostsFile ~/.ssh/fabric_known_hosts ~/.ssh/known_hosts2

Host leaf1
  HostName 10.0.0.1

Host deep
  ProxyJump bastion2

Host bastion2
  HostName 192.0.2.20
  ProxyJump bastion

Host loop-a
  ProxyJump loop-b

Host loop-b
  ProxyJump loop-a

Host *
  Port 22
"""


@pytest.fixture
def config(tmp_path: Path) -> str:
    path = tmp_path / "ssh_config"
    path.write_text(CONFIG)
    return str(path)


def test_ssh_config_fills_what_was_not_given(config: str) -> None:
    route = resolve_route(SSHParams(host="leaf1", ssh_config=config))
    home = str(Path.home())
    assert route.target == ssh.Hop(
        alias="leaf1",
        host="10.0.0.1",
        port=22,
        username="admin",
        key_files=(f"{home}/.ssh/fabric_key",),
        known_hosts=f"{home}/.ssh/fabric_known_hosts",  # the first UserKnownHostsFile
    )
    [bastion] = route.jumps
    assert (bastion.host, bastion.port, bastion.username) == ("192.0.2.10", 2222, "jumper")
    assert bastion.key_files == (f"{home}/.ssh/bastion_key",)
    assert route.describe(bastion) == "jump host jumper@192.0.2.10:2222 (on the way to admin@10.0.0.1:22)"
    assert route.describe(route.target) == "admin@10.0.0.1:22 via jump host jumper@192.0.2.10:2222"


def test_explicit_settings_win_over_ssh_config(config: str) -> None:
    params = SSHParams(
        host="leaf1", port=830, username="netops", key_file="/k", known_hosts="/kh", ssh_config=config, jump="none"
    )
    route = resolve_route(params)
    assert route.jumps == ()
    assert route.target == ssh.Hop("leaf1", "10.0.0.1", 830, "netops", ("/k",), "/kh")


def test_an_explicit_jump_chain_and_its_hops_looked_up_in_ssh_config(config: str) -> None:
    route = resolve_route(
        SSHParams(host="spine1", username="root", jump="ops@bastion,[2001:db8::5]:2200", ssh_config=config)
    )
    assert [(h.host, h.port, h.username) for h in route.jumps] == [
        ("192.0.2.10", 2222, "ops"),
        ("2001:db8::5", 2200, ""),
    ]
    assert route.target.host == "spine1" and route.target.port == 22


def test_a_jump_hosts_own_proxyjump_comes_first(config: str) -> None:
    route = resolve_route(SSHParams(host="deep", ssh_config=config))
    assert [h.alias for h in route.jumps] == ["bastion", "bastion2"]


def test_proxyjump_loops_and_bad_specs_are_config_errors(config: str) -> None:
    with pytest.raises(SSHConfigError, match="ProxyJump loop"):
        resolve_route(SSHParams(host="loop-a", ssh_config=config))
    for bad in ("user@", "host:port", "host:", "[::1]:x"):
        with pytest.raises(SSHConfigError, match="expected \\[user@\\]host\\[:port\\]"):
            resolve_route(SSHParams(host="x", jump=bad, ssh_config="none"))


def test_no_config_file_means_direct_and_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.ssh/config: not an error
    route = resolve_route(SSHParams(host="10.1.1.1"))
    assert route.jumps == () and route.target == ssh.Hop("10.1.1.1", "10.1.1.1", 22, "", (), None)
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "config").write_text("Host 10.1.1.1\n  ProxyJump gw\n")
    assert [h.host for h in resolve_route(SSHParams(host="10.1.1.1")).jumps] == ["gw"]
    assert resolve_route(SSHParams(host="10.1.1.1", ssh_config="none")).jumps == ()


def test_a_named_config_that_cannot_be_read_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SSHConfigError, match="cannot read ssh_config"):
        load_ssh_config(str(tmp_path / "missing"))


def test_environment_options() -> None:
    assert env_options({"NETFAB_SSH_JUMP": "ops@bastion", "NETFAB_SSH_CONFIG": "none"}) == {
        "jump_host": "ops@bastion",
        "ssh_config": "none",
    }
    assert env_options({}) == {}


def test_inventory_carries_env_jump_options_and_warns_about_insecure_host_keys(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from netfab.deploy.connection import CONNECTION_NAME
    from netfab.deploy.credentials import Credentials
    from netfab.deploy.inventory import build_nornir

    monkeypatch.setenv("NETFAB_SSH_JUMP", "ops@bastion")
    opts = {CONNECTION_NAME: {"platform": "netfab.frr", "extras": {"optional_args": {"jump_host": "none"}}}}
    hosts = {"leaf1": {"hostname": "10.0.0.1"}, "lab1": {"hostname": "172.31.0.2", "connection_options": opts}}
    nr = build_nornir(hosts, {}, Credentials(accept_unknown_host_keys=True))
    args = {h: nr.inventory.hosts[h].connection_options[CONNECTION_NAME].extras["optional_args"] for h in hosts}
    assert args["leaf1"]["jump_host"] == "ops@bastion"
    assert args["lab1"]["jump_host"] == "none"  # the inventory's own setting wins
    assert (
        "NETFAB_INSECURE_ACCEPT_HOST_KEYS=1: host keys missing from known_hosts are accepted" in capsys.readouterr().err
    )
    build_nornir(hosts, {}, Credentials())
    assert "WARNING" not in capsys.readouterr().err
