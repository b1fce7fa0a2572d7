"""The SSH transport of netfab's NAPALM drivers: core.ssh's client, with NAPALM's exception types.

The client itself (one exec channel per command, ssh_config, jump hosts, host-key policy) lives in
netfab.core.ssh, shared with the lab; this module maps NAPALM constructor arguments onto it and its errors
onto the exceptions NAPALM callers expect.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from napalm.base.exceptions import (
    CommandTimeoutException,
    ConnectAuthError,
    ConnectionClosedException,
    ConnectionException,
    ConnectTimeoutError,
)

from netfab.core import ssh as core
from netfab.core.ssh import CommandChannel, CommandResult, SSHParams

__all__ = ["CommandChannel", "CommandResult", "SSHChannel", "SSHParams", "params_from_napalm"]


def params_from_napalm(
    hostname: str, username: str, password: str | None, timeout: float, optional_args: Mapping[str, Any]
) -> SSHParams:
    """Map NAPALM constructor arguments + optional_args onto SSH parameters.

    Password: the constructor's (netfab's inventory fills it from NETFAB_PASSWORD only), or the environment
    variable named by optional_args['password_env']. Never read from a file. A port, key or known_hosts left
    out here is taken from ssh_config (optional_args['ssh_config'], default ~/.ssh/config), as is the jump
    host unless optional_args['jump_host'] names one ("none": connect directly).
    """
    env_name = optional_args.get("password_env")
    secret = os.environ.get(str(env_name)) if env_name else None
    key_file = optional_args.get("key_file") or optional_args.get("key_filename")
    known_hosts = optional_args.get("known_hosts")
    jump = optional_args.get("jump_host")
    ssh_config = optional_args.get("ssh_config")
    return SSHParams(
        host=hostname,
        port=int(optional_args["port"]) if optional_args.get("port") else None,
        username=username or None,
        password=secret or password or None,
        key_file=str(Path(str(key_file)).expanduser()) if key_file else None,
        known_hosts=str(Path(str(known_hosts)).expanduser()) if known_hosts else None,
        accept_unknown_host_keys=bool(optional_args.get("accept_unknown_host_keys", False)),
        allow_agent=bool(optional_args.get("allow_agent", True)),
        timeout=float(optional_args.get("conn_timeout") or timeout),
        jump=str(jump) if jump else None,
        ssh_config=str(ssh_config) if ssh_config else None,
    )


_CONNECT_ERRORS: tuple[tuple[type[core.SSHError], type[Exception]], ...] = (
    (core.SSHTimeout, ConnectTimeoutError),
    (core.SSHAuthFailed, ConnectAuthError),
    (core.SSHError, ConnectionException),
)
_RUN_ERRORS: tuple[tuple[type[core.SSHError], type[Exception]], ...] = (
    (core.SSHCommandTimeout, CommandTimeoutException),
    (core.SSHError, ConnectionClosedException),
)


def _napalm_error(exc: core.SSHError, table: tuple[tuple[type[core.SSHError], type[Exception]], ...]) -> Exception:
    napalm_type = next(n for c, n in table if isinstance(exc, c))
    return napalm_type(str(exc))


class SSHChannel:
    """A CommandChannel over core.ssh.SSHSession that raises NAPALM's exceptions."""

    def __init__(self, session: core.SSHSession) -> None:
        self._session = session

    @classmethod
    def connect(cls, params: SSHParams) -> SSHChannel:
        try:
            return cls(core.SSHSession.connect(params))
        except core.SSHError as exc:
            raise _napalm_error(exc, _CONNECT_ERRORS) from exc

    def run(self, command: str, stdin: str | None = None, timeout: float | None = None) -> CommandResult:
        try:
            return self._session.run(command, stdin=stdin, timeout=timeout)
        except core.SSHError as exc:
            raise _napalm_error(exc, _RUN_ERRORS) from exc

    def close(self) -> None:
        self._session.close()

    def is_alive(self) -> bool:
        return self._session.is_alive()
