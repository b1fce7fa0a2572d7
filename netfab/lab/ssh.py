"""SSH into lab switches: keys, per-switch sshd config, known_hosts/ssh_config, and a paramiko client.

Keys are generated in-process (no ssh-keygen per switch). Host-key checking stays on: the lab writes
every switch's host key into its own known_hosts, and clients use RejectPolicy against it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from ipaddress import IPv4Address
from pathlib import Path

import paramiko
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

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


def connect(host: str, key_file: Path, known_hosts: Path, timeout: float = 10.0) -> paramiko.SSHClient:
    client = paramiko.SSHClient()
    client.load_host_keys(str(known_hosts))
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    try:
        client.connect(
            host,
            port=22,
            username="root",
            key_filename=str(key_file),
            look_for_keys=False,
            allow_agent=False,
            timeout=timeout,
            banner_timeout=timeout,
            auth_timeout=timeout,
        )
    except (paramiko.SSHException, OSError) as exc:
        client.close()
        raise LabError(f"ssh root@{host}: {exc}") from exc
    return client


def run_command(client: paramiko.SSHClient, command: str, timeout: float = 30.0) -> tuple[int, str, str]:
    _, stdout, stderr = client.exec_command(command, timeout=timeout)
    out = stdout.read().decode(errors="replace")
    err = stderr.read().decode(errors="replace")
    return stdout.channel.recv_exit_status(), out, err
