"""SSH into lab switches: keys, per-switch sshd config, known_hosts/ssh_config; sessions via core.ssh.

Keys are generated in-process (no ssh-keygen per switch). Host-key checking stays on: the lab writes
every switch's host key into its own known_hosts, and the one SSH client (netfab.core.ssh) uses
RejectPolicy against it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from ipaddress import IPv4Address
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from netfab.core.ssh import SSHError, SSHParams, SSHSession
from netfab.lab.errors import LabError
from netfab.lab.layout import Layout

SSHD = "/usr/sbin/sshd"


def write_keypair(path: Path, comment: str) -> str:
    """Write an OpenSSH ed25519 private key (0600) and its .pub; return the public key line."""
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(private)
    line = f"{public.decode()} {comment}"
    path.with_name(path.name + ".pub").write_text(line + "\n")
    return line


def sshd_config_text(layout: Layout, switch: str, mgmt_ip: IPv4Address) -> str:
    # StrictModes off: authorized_keys lives under /var/tmp (world-writable parent), which sshd would refuse.
    # UsePAM off: no PAM session work per login in a namespace without systemd/logind.
    return "\n".join(
        [
            f"ListenAddress {mgmt_ip}",
            "Port 22",
            f"HostKey {layout.host_key(switch)}",
            f"PidFile {layout.pidfile(switch, 'sshd')}",
            f"AuthorizedKeysFile {layout.authorized_keys}",
            "PermitRootLogin prohibit-password",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "StrictModes no",
            "UsePAM no",
            "UseDNS no",
            "PrintMotd no",
            "AcceptEnv LANG LC_*",
            "Subsystem sftp internal-sftp",
            "",
        ]
    )


def write_client_files(layout: Layout, switches: Iterable[tuple[str, IPv4Address, str]]) -> None:
    """known_hosts (mgmt IP -> host key) and an ssh_config with one Host block per switch name."""
    known, config = [], []
    for name, ip, host_pub in switches:
        keytype, blob = host_pub.split()[:2]
        known.append(f"{ip} {keytype} {blob}")
        config += [
            f"Host {name} {ip}",
            f"    HostName {ip}",
            "    User root",
            f"    IdentityFile {layout.client_key}",
            "    IdentitiesOnly yes",
            f"    UserKnownHostsFile {layout.known_hosts}",
            "    StrictHostKeyChecking yes",
            "",
        ]
    layout.known_hosts.write_text("\n".join(known) + "\n")
    layout.ssh_config.write_text("\n".join(config))


def session(host: str, key_file: Path, known_hosts: Path, timeout: float = 10.0) -> SSHSession:
    """Connect to a lab switch as root with the lab's key: the lab's own known_hosts (RejectPolicy), and
    neither the user's ~/.ssh/config nor a jump host, which are for real management networks."""
    params = SSHParams(
        host=host,
        port=22,
        username="root",
        key_file=str(key_file),
        known_hosts=str(known_hosts),
        allow_agent=False,
        timeout=timeout,
        jump="none",
        ssh_config="none",
    )
    try:
        return SSHSession.connect(params)
    except SSHError as exc:
        raise LabError(f"ssh {exc}") from exc


def run_command(client: SSHSession, command: str, timeout: float = 30.0) -> tuple[int, str, str]:
    try:
        res = client.run(command, timeout=timeout)
    except SSHError as exc:
        raise LabError(f"ssh {exc}") from exc
    return res.rc, res.stdout, res.stderr
