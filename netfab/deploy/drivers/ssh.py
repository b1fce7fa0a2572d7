"""SSH command transport shared by netfab's NAPALM drivers: one exec channel per command, no shell prompts.

Exec channels (not an interactive shell) make every command's exit status and stderr exact, which is what
the drivers decide on (frr-reload's rc is the only reliable "half-applied" signal). Host keys are checked
against a known_hosts file with RejectPolicy; accepting unknown keys needs an explicit opt-in.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import paramiko
from napalm.base.exceptions import (
    CommandTimeoutException,
    ConnectAuthError,
    ConnectionClosedException,
    ConnectionException,
    ConnectTimeoutError,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CommandResult:
    command: str
    rc: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        """stdout and stderr together, for error messages."""
        return "\n".join(part for part in (self.stdout.strip(), self.stderr.strip()) if part)


class CommandChannel(Protocol):
    """What a driver needs from a transport; tests substitute a recorded/mock implementation."""

    def run(self, command: str, stdin: str | None = None, timeout: float | None = None) -> CommandResult: ...

    def close(self) -> None: ...

    def is_alive(self) -> bool: ...


@dataclass(frozen=True)
class SSHParams:
    host: str
    port: int = 22
    username: str = ""
    password: str | None = field(default=None, repr=False)
    key_file: str | None = None
    known_hosts: str | None = None
    accept_unknown_host_keys: bool = False
    allow_agent: bool = True
    timeout: float = 30.0

    @classmethod
    def from_napalm(
        cls, hostname: str, username: str, password: str | None, timeout: float, optional_args: Mapping[str, Any]
    ) -> SSHParams:
        """Map NAPALM constructor arguments + optional_args onto SSH parameters.

        Password: the constructor's (netfab's inventory fills it from NETFAB_PASSWORD only), or the environment
        variable named by optional_args['password_env']. Never read from a file.
        """
        env_name = optional_args.get("password_env")
        secret = os.environ.get(str(env_name)) if env_name else None
        key_file = optional_args.get("key_file") or optional_args.get("key_filename")
        return cls(
            host=hostname,
            port=int(optional_args.get("port") or 22),
            username=username,
            password=secret or password or None,
            key_file=str(Path(str(key_file)).expanduser()) if key_file else None,
            known_hosts=str(Path(str(optional_args["known_hosts"])).expanduser())
            if optional_args.get("known_hosts")
            else None,
            accept_unknown_host_keys=bool(optional_args.get("accept_unknown_host_keys", False)),
            allow_agent=bool(optional_args.get("allow_agent", True)),
            timeout=float(optional_args.get("conn_timeout") or timeout),
        )


class SSHChannel:
    """A paramiko client running one exec channel per command."""

    def __init__(self, client: paramiko.SSHClient, params: SSHParams) -> None:
        self._client = client
        self._params = params

    @classmethod
    def connect(cls, params: SSHParams) -> SSHChannel:
        where = f"{params.username}@{params.host}:{params.port}"
        client = paramiko.SSHClient()
        if params.known_hosts:
            try:
                client.load_host_keys(params.known_hosts)
            except OSError as exc:
                raise ConnectionException(f"{where}: cannot read known_hosts {params.known_hosts}: {exc}") from exc
        else:
            client.load_system_host_keys()
        if params.accept_unknown_host_keys:
            # Explicit opt-in only (optional_args accept_unknown_host_keys: true); a *changed* key is still refused
            # by paramiko (BadHostKeyException), only a missing one is accepted.
            client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        else:
            client.set_missing_host_key_policy(paramiko.RejectPolicy())
        try:
            client.connect(
                hostname=params.host,
                port=params.port,
                username=params.username,
                password=params.password,
                key_filename=params.key_file,
                allow_agent=params.allow_agent,
                look_for_keys=params.key_file is None and params.password is None,
                timeout=params.timeout,
                banner_timeout=params.timeout,
                auth_timeout=params.timeout,
            )
        except paramiko.BadHostKeyException as exc:
            client.close()
            raise ConnectionException(
                f"{where}: host key MISMATCH (server offered {exc.key.get_name()} "
                f"{exc.key.get_fingerprint().hex()}, known_hosts has a different key): refusing to connect"
            ) from exc
        except paramiko.AuthenticationException as exc:
            client.close()
            raise ConnectAuthError(f"{where}: authentication failed ({type(exc).__name__})") from exc
        except TimeoutError as exc:
            client.close()
            raise ConnectTimeoutError(f"{where}: unreachable (no answer within {params.timeout:g} s)") from exc
        except paramiko.SSHException as exc:
            client.close()
            if "not found in known_hosts" in str(exc):
                raise ConnectionException(
                    f"{where}: host key unknown (not in {params.known_hosts or '~/.ssh/known_hosts'}): refusing; "
                    "add the key, or opt in with optional_args accept_unknown_host_keys: true"
                ) from exc
            raise ConnectionException(f"{where}: SSH negotiation failed: {exc}") from exc
        except OSError as exc:  # refused, no route, DNS failure (NoValidConnectionsError is an OSError too)
            client.close()
            raise ConnectionException(f"{where}: unreachable: {exc.strerror or exc}") from exc
        transport = client.get_transport()
        if transport is not None and isinstance(transport.sock, socket.socket):
            # Each command is a few small packets; with Nagle + delayed ACK every channel open costs ~40 ms.
            transport.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        log.debug("connected to %s", where)  # never log credentials
        return cls(client, params)

    def run(self, command: str, stdin: str | None = None, timeout: float | None = None) -> CommandResult:
        transport = self._client.get_transport()
        if transport is None or not transport.is_active():
            raise ConnectionClosedException(f"{self._params.host}: SSH connection is closed")
        limit = timeout if timeout is not None else max(self._params.timeout, 60.0)
        started = time.monotonic()
        chan = transport.open_session(timeout=self._params.timeout)
        try:
            chan.exec_command(command)
            if stdin is not None:
                chan.sendall(stdin.encode())
            chan.shutdown_write()  # EOF on stdin: `cat > file` ends, nothing waits for input
            out, err = bytearray(), bytearray()
            deadline = time.monotonic() + limit
            while True:
                busy = False
                if chan.recv_ready():
                    out += chan.recv(65536)
                    busy = True
                if chan.recv_stderr_ready():
                    err += chan.recv_stderr(65536)
                    busy = True
                if busy:
                    continue
                # Done only at EOF *and* exit status: OpenSSH can send exit-status while the child's last output
                # is still in its pipe, so stopping at exit-status alone truncated big outputs (ip -j link).
                if (
                    chan.exit_status_ready()
                    and (chan.eof_received or chan.closed)
                    and not chan.recv_ready()
                    and not chan.recv_stderr_ready()
                ):
                    break
                if chan.closed and not chan.exit_status_ready():
                    raise ConnectionClosedException(f"{self._params.host}: channel closed while running a command")
                if time.monotonic() > deadline:
                    raise CommandTimeoutException(f"{self._params.host}: command did not finish in {limit:g} s")
                time.sleep(0.005)
            rc = chan.recv_exit_status()
        finally:
            chan.close()
        elapsed = time.monotonic() - started
        log.debug("%s rc=%d %.2fs: %s", self._params.host, rc, elapsed, command.splitlines()[0][:160])
        return CommandResult(command, rc, out.decode(errors="replace"), err.decode(errors="replace"))

    def close(self) -> None:
        self._client.close()

    def is_alive(self) -> bool:
        transport = self._client.get_transport()
        return bool(transport is not None and transport.is_active())
