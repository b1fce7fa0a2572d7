"""A one-switch FRR lab reached over real SSH, for the frr driver tests (self-contained: not netfab.lab).

One network namespace `nfdrv<pid>` with zebra+bgpd+staticd running as user frr (LAB.md command shapes: a
private run dir owned by frr under /var/tmp, not pytest's 0700 tmp) and sshd inside it, started under
`unshare --mount` with the switch's dirs bind-mounted on /etc/frr and /run/frr so plain `vtysh` and
frr-reload.py reach this switch. Keys and known_hosts are generated per run. Everything is torn down by pid
and by name, even when a test fails.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import pwd
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

FRR_BIN = Path("/usr/lib/frr")
NAME = f"nfdrv{os.getpid()}"
HOSTNAME = "sw1"

# Inside the namespace only. The management /29 is derived from the pid so parallel runs do not collide.
_MGMT_NET = ipaddress.ip_network("198.18.0.0/15")
_BASE_CONFIG = """frr defaults datacenter
hostname sw1
!
ip route 10.99.0.0/24 198.51.100.2
ip route 10.99.0.0/24 198.51.100.6
!
router bgp 65001
 bgp router-id 10.0.0.1
 neighbor swp1 interface remote-as external
 neighbor 198.51.100.6 remote-as 65002
!
"""


def lab_skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces, FRR daemons, sshd)"
    for tool in (FRR_BIN / "zebra", FRR_BIN / "bgpd", FRR_BIN / "staticd", FRR_BIN / "frr-reload.py"):
        if not tool.exists():
            return f"FRR not installed ({tool} missing)"
    for tool in ("ip", "unshare", "vtysh", "ssh-keygen", "/usr/sbin/sshd"):
        if shutil.which(tool) is None:
            return f"{tool} not found"
    try:
        pwd.getpwnam("frr")
    except KeyError:
        return "no 'frr' user (FRR daemons must not run as root)"
    return None


def sh(*args: str, check: bool = True, ns: bool = False) -> subprocess.CompletedProcess[str]:
    cmd = ["ip", "netns", "exec", NAME, *args] if ns else list(args)
    return subprocess.run(cmd, check=check, capture_output=True, text=True, timeout=60)


@dataclass
class FrrLab:
    root: Path
    mgmt_ip: str
    unused_ip: str
    key_file: Path
    known_hosts: Path
    base_running: str = ""
    hostname: str = HOSTNAME
    pids: list[int] = field(default_factory=list)
    sshd: subprocess.Popen[bytes] | None = None

    def ns(self, *args: str) -> str:
        """Run a command inside the switch's namespace (root side: checks what the driver did)."""
        return sh(*args, ns=True).stdout

    def keygen(self, name: str) -> Path:
        path = self.root / name
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path))
        return path

    @property
    def run_dir(self) -> Path:
        return self.root / "run"

    @property
    def etc_dir(self) -> Path:
        return self.root / "etc"

    @property
    def work_dir(self) -> str:
        return str(self.root / "work")

    def optional_args(self, **extra: object) -> dict[str, object]:
        args: dict[str, object] = {
            "key_file": str(self.key_file),
            "known_hosts": str(self.known_hosts),
            "allow_agent": False,
            "remote_dir": self.work_dir,
        }
        args.update(extra)
        return args

    def vtysh(self, *args: str) -> str:
        return sh("vtysh", "--vty_socket", str(self.run_dir), "--config_dir", str(self.etc_dir), *args).stdout

    def running(self) -> str:
        from netfab.deploy.drivers.parsers import strip_frr_header

        return strip_frr_header(self.vtysh("-c", "show running-config"))

    def reload(self, text: str) -> None:
        """Put a config in place directly (no SSH): resets the switch between tests."""
        path = self.root / "reset.conf"
        path.write_text(text)
        subprocess.run(
            [str(FRR_BIN / "frr-reload.py"), "--reload", "--stdout", "--vty_socket", str(self.run_dir),
             "--confdir", str(self.etc_dir), "--rundir", str(self.run_dir), str(path)],
            check=True, capture_output=True, text=True, timeout=60,
        )  # fmt: skip

    def stop_timer(self) -> None:
        """Disarm a revert timer a failed test may have left (by pid, from the driver's pid files)."""
        for name in ("revert.pid", "revert.fired"):
            pidfile = Path(self.work_dir) / name
            if pidfile.exists():
                _kill(int(pidfile.read_text().strip() or 0))


def _kill(pid: int) -> None:
    if pid <= 1:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _gone(pid: int) -> bool:
    # PID 1 reaps late here (LAB.md): a zombie counts as gone
    try:
        return Path(f"/proc/{pid}/status").read_text().find("\nState:\tZ") >= 0
    except FileNotFoundError:
        return True


def _teardown(lab: FrrLab) -> None:
    if lab.sshd is not None and lab.sshd.poll() is None:
        lab.sshd.kill()
        lab.sshd.wait(timeout=10)
    lab.stop_timer()
    for pid in lab.pids:
        _kill(pid)
    listed = sh("ip", "netns", "pids", NAME, check=False).stdout.split()
    for pid in map(int, listed):
        _kill(pid)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(_gone(p) for p in [*lab.pids, *map(int, listed)]):
        time.sleep(0.1)
    sh("ip", "link", "del", f"{NAME}m", check=False)
    sh("ip", "netns", "del", NAME, check=False)
    shutil.rmtree(lab.root, ignore_errors=True)


def _mgmt_addresses() -> tuple[str, str, str]:
    block = list(_MGMT_NET.subnets(new_prefix=29))[os.getpid() % 16384]
    hosts = list(block.hosts())
    return str(hosts[0]), str(hosts[1]), str(hosts[2])


def _start(lab: FrrLab) -> None:
    frr = pwd.getpwnam("frr")
    for d in (lab.root, lab.run_dir, lab.etc_dir):
        d.mkdir(parents=True, exist_ok=True)
        os.chown(d, frr.pw_uid, frr.pw_gid)
        d.chmod(0o755)
    (lab.etc_dir / "frr.conf").write_text(_BASE_CONFIG)
    (lab.etc_dir / "vtysh.conf").write_text(f"hostname {HOSTNAME}\n")
    for f in lab.etc_dir.iterdir():
        os.chown(f, frr.pw_uid, frr.pw_gid)

    root_ip, ns_ip, _ = _mgmt_addresses()
    sh("ip", "netns", "add", NAME)
    sh("ip", "link", "add", f"{NAME}m", "type", "veth", "peer", "name", "mgmt0", "netns", NAME)
    sh("ip", "addr", "add", f"{root_ip}/29", "dev", f"{NAME}m")
    sh("ip", "link", "set", f"{NAME}m", "up")
    for cmd in (
        ["ip", "link", "set", "lo", "up"],
        ["ip", "addr", "add", f"{ns_ip}/29", "dev", "mgmt0"],
        ["ip", "link", "set", "mgmt0", "up"],
        ["ip", "link", "add", "swp1", "type", "veth", "peer", "name", "swp2"],
        ["ip", "addr", "add", "198.51.100.1/30", "dev", "swp1"],
        ["ip", "addr", "add", "198.51.100.5/30", "dev", "swp2"],
        ["ip", "link", "set", "swp1", "up"],
        ["ip", "link", "set", "swp2", "up"],
        ["sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0"],
    ):
        sh(*cmd, ns=True)

    for daemon in ("zebra", "bgpd", "staticd"):
        extra = ["-s", "16777216"] if daemon == "zebra" else []
        sh("unshare", "--uts", "sh", "-c", f'hostname {HOSTNAME} && exec "$@"', "sh", str(FRR_BIN / daemon), "-d",
           "-F", "datacenter", "--vty_socket", str(lab.run_dir), "-i", str(lab.run_dir / f"{daemon}.pid"),
           "-z", str(lab.run_dir / "zserv.api"), "-f", "/dev/null", "-P", "0",
           "--log", f"file:{lab.run_dir / 'frr.log'}", *extra, ns=True)  # fmt: skip
        lab.pids.append(int((lab.run_dir / f"{daemon}.pid").read_text().strip()))
    sh("vtysh", "-H", "/dev/null", "--vty_socket", str(lab.run_dir), "--config_dir", str(lab.etc_dir), "-b")

    ssh_dir = lab.root / "ssh"
    ssh_dir.mkdir(mode=0o700)
    sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(ssh_dir / "host_key"))
    sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(lab.key_file))
    shutil.copy(f"{lab.key_file}.pub", ssh_dir / "authorized_keys")
    host_pub = (ssh_dir / "host_key.pub").read_text().split()
    lab.known_hosts.write_text(f"{ns_ip} {host_pub[0]} {host_pub[1]}\n")
    (ssh_dir / "sshd_config").write_text(
        f"ListenAddress {ns_ip}\nPort 22\nHostKey {ssh_dir / 'host_key'}\nPidFile {ssh_dir / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {ssh_dir / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
    )
    Path("/run/sshd").mkdir(exist_ok=True)
    # bash sources ~/.bashrc for ssh commands; this machine's root .bashrc runs `pyenv init` (~0.3 s per
    # command). A switch has no such rc file: hide it inside sshd's private mount namespace only.
    home_rc = Path(pwd.getpwnam("root").pw_dir) / ".bashrc"
    # exec chain (ip netns exec -> unshare -> sh -> sshd): the Popen pid IS sshd's pid
    lab.sshd = subprocess.Popen(
        ["ip", "netns", "exec", NAME, "unshare", "--mount", "--uts", "sh", "-c",
         f"mount --bind {lab.run_dir} /run/frr && mount --bind {lab.etc_dir} /etc/frr && hostname {HOSTNAME} && "
         f"{{ [ ! -f {home_rc} ] || mount --bind /dev/null {home_rc}; }} && "
         f"exec /usr/sbin/sshd -D -e -f {ssh_dir / 'sshd_config'} -E {ssh_dir / 'sshd.log'}"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while sh("ss", "-Htln", f"src {ns_ip}:22", ns=True, check=False).stdout.strip() == "":
        if time.monotonic() > deadline or lab.sshd.poll() is not None:
            raise RuntimeError(f"sshd did not start: {(ssh_dir / 'sshd.log').read_text() if ssh_dir.exists() else ''}")
        time.sleep(0.05)
    lab.base_running = lab.running()


@pytest.fixture(scope="module")
def frr_lab_module() -> Iterator[FrrLab]:
    reason = lab_skip_reason()
    if reason:
        pytest.skip(reason)
    root = Path("/var/tmp") / NAME
    if root.exists() or Path(f"/run/netns/{NAME}").exists():
        raise RuntimeError(f"{root} or netns {NAME} left over from an earlier run: remove them first")
    _, ns_ip, unused = _mgmt_addresses()
    lab = FrrLab(root=root, mgmt_ip=ns_ip, unused_ip=unused, key_file=root / "client_key", known_hosts=root / "kh")
    try:
        _start(lab)
        yield lab
    finally:
        _teardown(lab)


@pytest.fixture
def frr_lab(frr_lab_module: FrrLab) -> Iterator[FrrLab]:
    """The module's lab, reset to the base config with an empty driver work dir before each test."""
    lab = frr_lab_module
    lab.stop_timer()
    shutil.rmtree(lab.work_dir, ignore_errors=True)
    lab.reload(lab.base_running)
    yield lab
    lab.stop_timer()
