"""Credentials: only from the environment, an SSH key path or an agent; never from files netfab writes.

`Credentials.secrets()` hands the values themselves to netfab.core.redact (the one redaction), so a password
echoed back by a device in a diff or an error message is masked too, not only keyword-shaped lines.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

ENV_USERNAME = "NETFAB_USERNAME"
ENV_PASSWORD = "NETFAB_PASSWORD"
ENV_SSH_KEY = "NETFAB_SSH_KEY"
ENV_KNOWN_HOSTS = "NETFAB_KNOWN_HOSTS"
ENV_INSECURE_HOST_KEYS = "NETFAB_INSECURE_ACCEPT_HOST_KEYS"


@dataclass(frozen=True)
class Credentials:
    username: str = "root"
    password: str | None = field(default=None, repr=False)
    ssh_key: Path | None = None
    known_hosts: Path | None = None
    accept_unknown_host_keys: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, username: str | None = None) -> Credentials:
        """`username` given wins over NETFAB_USERNAME (the lab always logs in as root)."""
        env = os.environ if environ is None else environ
        return cls(
            username=username if username is not None else env.get(ENV_USERNAME, "root"),
            password=env.get(ENV_PASSWORD) or None,
            ssh_key=Path(env[ENV_SSH_KEY]) if env.get(ENV_SSH_KEY) else None,
            known_hosts=Path(env[ENV_KNOWN_HOSTS]) if env.get(ENV_KNOWN_HOSTS) else None,
            accept_unknown_host_keys=env.get(ENV_INSECURE_HOST_KEYS, "") == "1",
        )

    def secrets(self) -> tuple[str, ...]:
        return (self.password,) if self.password else ()
