"""Credentials: only from the environment, an SSH key path or an agent; never from files netfab writes.

Everything printed or journaled passes through `redact`, which knows the secret values themselves (not
just patterns), so a password echoed back by a device in a diff or an error message is masked too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

ENV_USERNAME = "NETFAB_USERNAME"
ENV_PASSWORD = "NETFAB_PASSWORD"
ENV_SSH_KEY = "NETFAB_SSH_KEY"
ENV_KNOWN_HOSTS = "NETFAB_KNOWN_HOSTS"
ENV_INSECURE_HOST_KEYS = "NETFAB_INSECURE_ACCEPT_HOST_KEYS"

MASK = "********"
# Config lines that carry secrets on the platforms in scope (EOS/NX-OS 'secret'/'password'/'key',
# Junos 'encrypted-password', SONiC/FRR 'password', NVUE 'password').
# Only whole keywords (not '-key' inside 'enhanced-hash-key'): a false mask in a drift diff hides real drift.
# The value may follow an encryption-type token: a digit (IOS-style 5/7) or, fix, EOS's `secret sha512 <hash>`
# (the hash used to survive as "secret ******** $6$...").
_SECRET_LINE = re.compile(
    r"(?P<lead>(?<![\w-])(?:secret|password|encrypted-password|authentication-key|pre-shared-key|snmp-server community)"
    r"(?:\s+(?:[0-9]|sha512|sha256|md5))?\s+)(?P<value>\"[^\"]*\"|\S+)",
    re.IGNORECASE,
)


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


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Mask known secret values anywhere, and the value of any secret-bearing config keyword."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    return _SECRET_LINE.sub(lambda m: m.group("lead") + MASK, text)
