"""The one SSH client through a bastion: a switch the driver cannot reach directly, behind a second namespace.

    root ns --veth A--> bastion ns `nfjmp<pid>` (sshd, forwarding on, IP forwarding off)
                              --veth B--> the switch ns of conftest's FrrLab (a second sshd on its B address)

The root namespace has no route to B and the bastion does not route, so the only way to the switch's B address
is an SSH forward (ProxyJump) through the bastion. Host keys are checked for both hops.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import ipaddress
import os
import pwd
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from netfab.core import ssh
from netfab.deploy.drivers.frr import FRRDriver

if TYPE_CHECKING:  # the lab fixture's type; conftest is not importable by name at runtime
    from conftest import FrrLab

JUMP_NS = f"nfjmp{os.getpid()}"
# 100.100.0.0/16 in /29 blocks by pid: A (root <-> bastion) and B (bastion <-> switch) are its two /30s.
_BLOCK = list(ipaddress.ip_network("100.100.0.0/16").subnets(new_prefix=29))[os.getpid() % 8192]
_A, _B = list(_BLOCK.subnets(new_prefix=30))
ROOT_A, BASTION_A = (str(h) for h in _A.hosts())
BASTION_B, SWITCH_B = (str(h) for h in _B.hosts())


@dataclass
class Jump:
    lab: FrrLab
    dir: Path
    bastion_pub: str
    switch_pub: str
    known_hosts: Path
    procs: list[subprocess.Popen[bytes]]

    def known(self, *lines: str) -> Path:
        path = self.dir / f"kh-{len(list(self.dir.glob('kh-*')))}"
        path.write_text("".join(f"{line}\n" for line in lines))
        return path

    def driver(self, host: str = SWITCH_B, **extra: object) -> FRRDriver:
        args = self.lab.optional_args(**{"known_hosts": str(self.known_hosts), "ssh_config": "none", **extra})
        return FRRDriver(host, "root", "", timeout=10, optional_args=args)


def sh(*args: str, check: bool = True, ns: str | None = None) -> str:
    cmd = ["ip", "netns", "exec", ns, *args] if ns else list(args)
    return subprocess.run(cmd, check=check, capture_output=True, text=True, timeout=60).stdout


def _jns(*args: str, check: bool = True) -> str:
    return subprocess.run(
        ["ip", "netns", "exec", JUMP_NS, *args], check=check, capture_output=True, text=True, timeout=30
    ).stdout


def _wait_listening(ns: str, address: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 10
    probe = ["ip", "netns", "exec", ns, "ss", "-Htln", f"src {address}:22"]
    while not subprocess.run(probe, capture_output=True, text=True, timeout=30).stdout.strip():
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError(f"sshd on {address} did not start: {log.read_text() if log.exists() else ''}")
        time.sleep(0.05)


def fingerprint(public: str) -> str:
    """ssh-keygen -lf's SHA256 form of a known_hosts key ("type base64")."""
    blob = base64.b64decode(public.split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


@pytest.fixture(scope="module")
def jump(frr_lab_module: FrrLab) -> Iterator[Jump]:
    lab = frr_lab_module
    switch_ns = lab.root.name  # conftest names the namespace and its /var/tmp dir alike
    work = lab.root / "jump"
    work.mkdir(mode=0o700, exist_ok=True)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        sh("ip", "netns", "add", JUMP_NS)
        sh("ip", "link", "add", f"{JUMP_NS}a", "type", "veth", "peer", "name", "eth0", "netns", JUMP_NS)
        sh("ip", "addr", "add", f"{ROOT_A}/30", "dev", f"{JUMP_NS}a")
        sh("ip", "link", "set", f"{JUMP_NS}a", "up")
        sh("ip", "link", "add", f"{JUMP_NS}b", "type", "veth", "peer", "name", "jmp0", "netns", switch_ns)
        sh("ip", "link", "set", f"{JUMP_NS}b", "netns", JUMP_NS)
        for cmd in (
            ["ip", "link", "set", "lo", "up"],
            ["ip", "addr", "add", f"{BASTION_A}/30", "dev", "eth0"],
            ["ip", "link", "set", "eth0", "up"],
            ["ip", "addr", "add", f"{BASTION_B}/30", "dev", f"{JUMP_NS}b"],
            ["ip", "link", "set", f"{JUMP_NS}b", "up"],
            ["sysctl", "-qw", "net.ipv4.ip_forward=0"],
        ):
            _jns(*cmd)
        # Nothing for B leaves this machine: the root namespace refuses it locally (no packet goes out by
        # the default route), so "not reachable directly" is real and harmless.
        sh("ip", "route", "add", "unreachable", str(_B))
        sh("ip", "addr", "add", f"{SWITCH_B}/30", "dev", "jmp0", ns=switch_ns)
        sh("ip", "link", "set", "jmp0", "up", ns=switch_ns)

        # The bastion: its own host key, the test client's key authorised, TCP forwarding allowed.
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(work / "bastion_key"))
        shutil.copy(f"{lab.key_file}.pub", work / "authorized_keys")
        (work / "bastion_config").write_text(
            f"ListenAddress {BASTION_A}\nPort 22\nHostKey {work / 'bastion_key'}\nPidFile {work / 'bastion.pid'}\n"
            f"AuthorizedKeysFile {work / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
            "AllowTcpForwarding yes\n"
        )
        bastion = subprocess.Popen(
            ["ip", "netns", "exec", JUMP_NS, "/usr/sbin/sshd", "-D", "-e", "-f", str(work / "bastion_config"),
             "-E", str(work / "bastion.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        procs.append(bastion)

        # A second sshd in the switch's namespace, on its B address only, with the same mounts as conftest's
        # (plain vtysh and frr-reload.py reach this switch) and the same host key.
        ssh_dir = lab.root / "ssh"
        (work / "switch_config").write_text(
            (ssh_dir / "sshd_config")
            .read_text()
            .replace(f"ListenAddress {lab.mgmt_ip}", f"ListenAddress {SWITCH_B}")
            .replace(f"PidFile {ssh_dir / 'sshd.pid'}", f"PidFile {work / 'switch.pid'}")
        )
        home_rc = Path(pwd.getpwnam("root").pw_dir) / ".bashrc"
        switch = subprocess.Popen(
            ["ip", "netns", "exec", switch_ns, "unshare", "--mount", "--uts", "sh", "-c",
             f"mount --bind {lab.run_dir} /run/frr && mount --bind {lab.etc_dir} /etc/frr && "
             f"hostname {lab.hostname} && {{ [ ! -f {home_rc} ] || mount --bind /dev/null {home_rc}; }} && "
             f"exec /usr/sbin/sshd -D -e -f {work / 'switch_config'} -E {work / 'switch.log'}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        procs.append(switch)
        _wait_listening(JUMP_NS, BASTION_A, bastion, work / "bastion.log")
        _wait_listening(switch_ns, SWITCH_B, switch, work / "switch.log")

        bastion_pub = " ".join((work / "bastion_key.pub").read_text().split()[:2])
        switch_pub = " ".join((ssh_dir / "host_key.pub").read_text().split()[:2])
        known = work / "known_hosts"
        known.write_text(f"{BASTION_A} {bastion_pub}\n{SWITCH_B} {switch_pub}\n")
        yield Jump(lab, work, bastion_pub, switch_pub, known, procs)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
        # sshd's per-connection children, by pid, in the namespace this fixture created.
        for pid in subprocess.run(["ip", "netns", "pids", JUMP_NS], capture_output=True, text=True).stdout.split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
        with contextlib.suppress(Exception):
            sh("ip", "route", "del", "unreachable", str(_B), check=False)
            sh("ip", "link", "del", f"{JUMP_NS}a", check=False)
            sh("ip", "link", "del", "jmp0", check=False, ns=switch_ns)
            sh("ip", "netns", "del", JUMP_NS, check=False)
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.lab
def test_the_switch_is_not_reachable_directly(jump: Jump) -> None:
    params = ssh.SSHParams(
        host=SWITCH_B, username="root", key_file=str(jump.lab.key_file), known_hosts=str(jump.known_hosts),
        allow_agent=False, timeout=3, ssh_config="none",
    )  # fmt: skip
    with pytest.raises(ssh.SSHUnreachable, match=f"root@{SWITCH_B}:22: unreachable"):
        ssh.SSHSession.connect(params)


@pytest.mark.lab
def test_driver_reaches_the_switch_through_an_explicit_jump_host(jump: Jump) -> None:
    dev = jump.driver(jump_host=f"root@{BASTION_A}")
    dev.open()
    try:
        assert dev.get_facts()["hostname"] == jump.lab.hostname
        assert dev.get_config(retrieve="running")["running"] == jump.lab.base_running
        # A replace with what runs diffs empty: frr-reload.py ran on the switch, through the forward.
        dev.load_replace_candidate(config=jump.lab.base_running)
        assert dev.compare_config().strip() == ""
        dev.discard_config()
    finally:
        dev.close()


@pytest.mark.lab
def test_ssh_config_proxyjump_with_its_own_host_block_for_the_bastion(jump: Jump) -> None:
    config = jump.dir / "ssh_config"
    config.write_text(
        f"Host bastion\n  HostName {BASTION_A}\n  User root\n  IdentityFile {jump.lab.key_file}\n\n"
        f"Host sw1-oob\n  HostName {SWITCH_B}\n  ProxyJump bastion\n\n"
        # Both hops read their known_hosts from here (a jump host is looked up on its own, as ssh -J does).
        f"Host *\n  UserKnownHostsFile {jump.known_hosts}\n"
    )
    args = jump.lab.optional_args(ssh_config=str(config))
    del args["known_hosts"]  # from ssh_config's UserKnownHostsFile
    dev = FRRDriver("sw1-oob", "root", "", timeout=10, optional_args=args)
    dev.open()
    try:
        assert dev.get_facts()["hostname"] == jump.lab.hostname
    finally:
        dev.close()
    # jump_host "none" overrides ssh_config's ProxyJump: straight at B, which is unreachable.
    direct = FRRDriver("sw1-oob", "root", "", timeout=3, optional_args={**args, "jump_host": "none"})
    with pytest.raises(Exception, match="unreachable"):
        direct.open()


@pytest.mark.lab
def test_the_jump_hosts_key_is_checked_too(jump: Jump) -> None:
    only_switch = jump.known(f"{SWITCH_B} {jump.switch_pub}")
    dev = jump.driver(jump_host=f"root@{BASTION_A}", known_hosts=str(only_switch))
    with pytest.raises(Exception, match=rf"jump host root@{BASTION_A}:22 .*host key unknown"):
        dev.open()
    # A bastion that presents another key than known_hosts holds is refused, even with the insecure opt-in.
    wrong = jump.known(f"{BASTION_A} {jump.switch_pub}", f"{SWITCH_B} {jump.switch_pub}")
    dev = jump.driver(jump_host=f"root@{BASTION_A}", known_hosts=str(wrong), accept_unknown_host_keys=True)
    with pytest.raises(Exception, match=rf"jump host root@{BASTION_A}:22 .*host key MISMATCH"):
        dev.open()


@pytest.mark.lab
def test_insecure_opt_in_warns_for_every_key_and_writes_no_known_hosts(
    jump: Jump, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    empty = jump.known()
    before = empty.read_bytes()
    for _ in range(2):  # every use warns, and the second run is not trusted because of the first
        dev = jump.driver(jump_host=f"root@{BASTION_A}", known_hosts=str(empty), accept_unknown_host_keys=True)
        dev.open()
        dev.close()
        err = capfd.readouterr().err
        assert err.count("ACCEPTING an unknown host key") == 2, err  # the bastion and the switch
        assert f"jump host root@{BASTION_A}:22" in err and fingerprint(jump.bastion_pub) in err
        assert fingerprint(jump.switch_pub) in err
        assert empty.read_bytes() == before
    strict = jump.driver(jump_host=f"root@{BASTION_A}", known_hosts=str(empty))
    with pytest.raises(Exception, match="host key unknown"):
        strict.open()
    # Without a known_hosts file of its own the client reads ~/.ssh/known_hosts, and must not create it either.
    monkeypatch.setenv("HOME", str(tmp_path))
    args = jump.lab.optional_args(jump_host=f"root@{BASTION_A}", accept_unknown_host_keys=True, ssh_config="none")
    del args["known_hosts"]
    dev = FRRDriver(SWITCH_B, "root", "", timeout=10, optional_args=args)
    dev.open()
    dev.close()
    assert not (tmp_path / ".ssh").exists()
