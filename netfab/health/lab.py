"""The lab as health sees it: switches over real SSH (one kept-open session each, every command of a sample in
one exec), GPU servers in their host namespaces (which have no sshd: `ip netns exec`, as `netfab lab exec`).

Only the lab named by the prefix is contacted: its management addresses and namespaces come from its state file.
"""

from __future__ import annotations

import shlex
import threading
from pathlib import Path

from netfab.core.ssh import SSHSession
from netfab.health.collect import SEPARATOR, CollectError, Target
from netfab.lab.errors import LabError
from netfab.lab.proc import in_netns, run
from netfab.lab.ssh import run_command, session
from netfab.lab.state import LabState, load_state


def joined(commands: list[str]) -> str:
    """One shell line running every command, outputs separated (stderr kept: a parser names the failure)."""
    return f"; echo {SEPARATOR}; ".join(f"{c} 2>&1" for c in commands)


def split(text: str, count: int, device: str) -> list[str]:
    parts = text.split(f"{SEPARATOR}\n")
    if len(parts) != count:
        raise CollectError(f"{device}: expected {count} outputs, got {len(parts)}")
    return parts


class LabDriver:
    """Reads a running lab; close() ends the SSH sessions."""

    def __init__(self, prefix: str) -> None:
        try:
            self.state: LabState = load_state(prefix)
        except LabError as exc:
            raise CollectError(str(exc)) from exc
        layout = self.state.layout
        self._key = Path(layout.client_key)
        self._known = Path(layout.known_hosts)
        self._sessions: dict[str, SSHSession] = {}
        self._lock = threading.Lock()

    def run(self, target: Target) -> list[str]:
        commands = [c.text for c in target.commands]
        if target.device in self.state.hosts:
            argv = in_netns(self.state.hosts[target.device], ["sh", "-c", joined(commands)])
            try:
                out = run(argv, check=False, timeout=20, what=f"{target.device}: health").stdout
            except LabError as exc:
                raise CollectError(str(exc)) from exc
            return split(out, len(commands), target.device)
        rec = self.state.switches.get(target.device)
        if rec is None:
            raise CollectError(f"lab {self.state.prefix!r} has no device {target.device!r}")
        try:
            client = self._session(target.device, rec.mgmt_ip)
            _, out, _ = run_command(client, f"sh -c {shlex.quote(joined(commands))}", timeout=20)
        except LabError as exc:
            with self._lock:
                self._sessions.pop(target.device, None)
            raise CollectError(f"{target.device}: {exc}") from exc
        return split(out, len(commands), target.device)

    def _session(self, device: str, host: str) -> SSHSession:
        with self._lock:
            client = self._sessions.get(device)
        if client is None:
            client = session(host, self._key, self._known, timeout=10)
            with self._lock:
                self._sessions[device] = client
        return client

    def close(self) -> None:
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for client in sessions:
            client.close()
