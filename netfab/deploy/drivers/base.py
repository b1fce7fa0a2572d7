"""Common plumbing of netfab's SSH-driven NAPALM drivers: connection, private work dir, uploads, timer calls.

Not a driver itself and deliberately not imported by name into the driver modules: napalm.get_network_driver
returns the first NetworkDriver subclass of a module in alphabetical order (INTEGRATION.md finding 6), so each
driver module holds exactly one such class and refers to this module as `_base`.
"""

from __future__ import annotations

import logging
import re
import shlex
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from napalm.base import base as napalm_base
from napalm.base import models
from napalm.base.exceptions import (
    CommandErrorException,
    CommitConfirmException,
    ConnectionClosedException,
    ReplaceConfigException,
)

from netfab.core.redact import redact as redact  # re-exported: drivers call _base.redact
from netfab.deploy.drivers import parsers, ssh, timer

log = logging.getLogger(__name__)

# vtysh appends every command it is given (passwords included: `neighbor X password S`) to the login user's
# ~/.history_frr, and frr-reload.py drives vtysh. VTYSH_HISTFILE wins over vtysh's -H and reaches the vtysh
# that frr-reload spawns, so every vtysh netfab starts, directly or not, keeps no history on the device.
VTYSH_NO_HISTORY = "VTYSH_HISTFILE=/dev/null"


class SSHDriverBase(napalm_base.NetworkDriver):
    """Shared NAPALM plumbing; subclasses implement the platform's config cycle and getters.

    optional_args understood by every netfab driver:
      port, key_file, known_hosts, accept_unknown_host_keys (default False), allow_agent (default True),
      password_env (name of an env var holding the password), conn_timeout,
      jump_host ("[user@]host[:port],..." or "none"; default: ssh_config's ProxyJump),
      ssh_config (file, default ~/.ssh/config; "none" reads none): see netfab.core.ssh,
      remote_dir (private work dir on the device, default ~/.netfab/<hostname>[-<port>], created 0700),
      sudo (prefix privileged commands with `sudo -n`; platform default),
      channel (a ready CommandChannel: recorded/mock channels in tests, or a caller-owned session).
    """

    platform: ClassVar[str] = ""
    default_sudo: ClassVar[bool] = False
    extra_artifacts: ClassVar[Mapping[str, str]] = {}
    """Build-output suffix -> the extra load method that stages it (e.g. {".sh": "load_host_script"})."""

    def __init__(
        self,
        hostname: str,
        username: str,
        password: str,
        timeout: int = 60,
        optional_args: dict[str, Any] | None = None,
    ) -> None:
        # No super().__init__: NAPALM's base raises NotImplementedError there.
        self.hostname = hostname
        self.username = username
        self.timeout = timeout
        # A private copy: nornir_napalm hands every host of a group the same dict (INTEGRATION.md finding 1).
        self.optional_args: dict[str, Any] = dict(optional_args or {})
        self._params = ssh.params_from_napalm(hostname, username, password, timeout, self.optional_args)
        self._injected: ssh.CommandChannel | None = self.optional_args.pop("channel", None)
        self._channel: ssh.CommandChannel | None = None
        # One dir per target: the namespace lab's switches all share one filesystem and one root home.
        target = re.sub(
            r"[^A-Za-z0-9_.-]",
            "_",
            f"{hostname}" + (f"-{self._params.port}" if self._params.port not in (None, 22) else ""),
        )
        self._remote_dir = str(self.optional_args.get("remote_dir", f".netfab/{target}"))
        self._sudo = bool(self.optional_args.get("sudo", self.default_sudo))
        self.workdir = ""
        self._candidate: str | None = None
        vty = ["--vty_socket", str(self.optional_args["vty_socket"])] if self.optional_args.get("vty_socket") else []
        self._vtysh: list[str] = ["env", VTYSH_NO_HISTORY, str(self.optional_args.get("vtysh", "vtysh")), *vty]

    # --- connection -------------------------------------------------------------------------------------
    def open(self) -> None:
        self._channel = self._injected or ssh.SSHChannel.connect(self._params)
        # Relative paths resolve in the login user's home: exec channels start there.
        res = self._run(
            f"umask 077 && mkdir -p {shlex.quote(self._remote_dir)} && cd {shlex.quote(self._remote_dir)} && pwd",
            what="create the work dir",
        )
        self.workdir = res.stdout.strip().splitlines()[-1]

    def close(self) -> None:
        # Deliberately leaves a pending commit alone: its timer lives on the device (unlike EOS, where
        # close() aborts the session, INTEGRATION.md finding 3).
        if self._channel is not None:
            self._channel.close()
            self._channel = None

    def is_alive(self) -> models.AliveDict:
        return {"is_alive": bool(self._channel is not None and self._channel.is_alive())}

    # --- command helpers --------------------------------------------------------------------------------
    def _run(
        self,
        command: str,
        stdin: str | None = None,
        check: bool = True,
        what: str = "",
        timeout: float | None = None,
        error: type[Exception] = CommandErrorException,
    ) -> ssh.CommandResult:
        if self._channel is None:
            raise ConnectionClosedException(f"{self.hostname}: not connected (call open() first)")
        res = self._channel.run(command, stdin=stdin, timeout=timeout)
        if check and res.rc != 0:
            raise error(f"{self.hostname}: {what or 'command'} failed (rc={res.rc}): {redact(res.output)[:2000]}")
        return res

    def _priv(self, command: str) -> str:
        return f"sudo -n {command}" if self._sudo else command

    def _path(self, name: str) -> str:
        return f"{self.workdir}/{name}"

    def _upload(self, name: str, text: str) -> str:
        """Write `text` to a private file in the work dir (atomic rename), via stdin: no SFTP needed."""
        path = self._path(name)
        tmp = shlex.quote(path + ".tmp")
        self._run(f"umask 077 && cat > {tmp} && mv -f {tmp} {shlex.quote(path)}", stdin=text, what=f"upload {name}")
        return path

    @staticmethod
    def _text_from(filename: str | None, config: str | None) -> str:
        # NAPALM: the file wins when both are given.
        if filename is not None:
            return Path(filename).read_text()
        if config is None:
            raise ReplaceConfigException("load_replace_candidate needs filename= or config=")
        return config

    # --- Linux + FRR state: every platform here is Linux with kernel netdevs and FRR -----------------------
    def _vtysh_cmd(self, *args: str) -> str:
        return self._priv(shlex.join([*self._vtysh, *args]))

    def _show(self, command: str) -> str:
        return self._run(self._vtysh_cmd("-c", command), what=command).stdout

    def _frr_json(self, command: str) -> Any:
        return parsers.loads_json(self._show(command), command)

    def _linux_interfaces(self) -> dict[str, models.InterfaceDict]:
        links = parsers.loads_json(self._run("ip -j -d link show", what="ip link").stdout, "ip -j link")
        speeds = self._run(
            'for i in /sys/class/net/*; do echo "${i##*/} $(cat $i/speed 2>/dev/null || echo -1)"; done',
            check=False,
        ).stdout
        return parsers.interfaces_from_ip_link(links, parsers.parse_speeds(speeds))

    def _linux_facts(self) -> dict[str, str]:
        """hostname, fqdn, uptime, machine, os (PRETTY_NAME), serial, product (DMI; "" when unreadable)."""
        res = self._run(
            "hostname; hostname -f 2>/dev/null || hostname; cut -d' ' -f1 /proc/uptime; uname -m; "
            '(. /etc/os-release 2>/dev/null; echo "$PRETTY_NAME"); '
            "cat /sys/class/dmi/id/product_serial 2>/dev/null || echo; "
            "cat /sys/class/dmi/id/product_name 2>/dev/null || echo",
            what="facts",
        )
        keys = ("hostname", "fqdn", "uptime", "machine", "os", "serial", "product")
        values = [line.strip() for line in res.stdout.splitlines()] + [""] * len(keys)
        return dict(zip(keys, values, strict=False))

    def get_interfaces(self) -> dict[str, models.InterfaceDict]:
        return self._linux_interfaces()

    def get_bgp_neighbors(self) -> dict[str, models.BGPStateNeighborsPerVRFDict]:
        return parsers.bgp_neighbors_from_frr(self._frr_json("show bgp vrf all neighbors json"))

    def get_route_ecmp_width(self, prefixes: Iterable[str] | None = None) -> dict[str, int]:
        """netfab extra: {prefix: next hops installed in the FIB} (all routes, or just `prefixes`; absent = 0)."""
        tables = [self._frr_json("show ip route json"), self._frr_json("show ipv6 route json")]
        return parsers.ecmp_width_from_frr(tables, prefixes)

    _lldpctl: ClassVar[str] = "lldpctl -f json0"

    def get_lldp_neighbors(self) -> dict[str, list[models.LLDPNeighborDict]]:
        """lldpd's neighbours; {} where lldpd does not run (e.g. the namespace lab: no LLDP on its veths)."""
        res = self._run(self._priv(self._lldpctl), check=False)
        if res.rc != 0 or not res.stdout.strip():
            return {}
        return parsers.lldp_from_lldpctl(parsers.loads_json(res.stdout, self._lldpctl))

    # --- the device-side commit-confirm timer (FRR and SONiC; NVUE has its own) -------------------------
    def _timer_state(self) -> timer.TimerState:
        return timer.parse_state(self._run(timer.status_command(self.workdir), what="read timer").stdout)

    def _arm_timer(self, delay_s: int, revert_command: str) -> None:
        self._upload(timer.SCRIPT, timer.script(self.workdir, delay_s, revert_command))
        self._run(timer.arm_command(self.workdir), what="arm the revert timer")

    def _revert_now(self, revert_command: str, limit_s: float = 300.0) -> tuple[int, str]:
        """Run a restore as the device-side timer: (its exit status, the tail of its log).

        An armed timer is fired (its own revert is the restore); otherwise a fresh timer is armed with
        `revert_command` and fired at once. Either way the restore runs detached on the device and completes
        there if this client dies mid-way (timer.py); this call only waits for it. -1: never finished.
        """
        said = self._run(timer.fire_command(self.workdir), what="fire the revert timer").stdout.split()
        if (said[-1] if said else "") not in ("signalled", "running"):
            self._arm_timer(1, revert_command)
            self._run(timer.fire_command(self.workdir), what="fire the revert timer")
        started = time.monotonic()
        while (state := self._timer_state()) is not timer.TimerState.FIRED:
            waited = time.monotonic() - started
            if state in (timer.TimerState.LOST, timer.TimerState.NONE) and waited > 5:
                return -1, f"the revert on the device did not run (its timer reads {state.value})"
            if waited >= limit_s:
                return -1, f"the revert on the device did not finish within {limit_s:.0f} s (still running there)"
            time.sleep(0.2)
        out = self._run(timer.result_command(self.workdir), check=False).stdout
        head, _, log = out.partition("@@log\n")
        word = head.strip().splitlines()[-1] if head.strip() else ""
        return (int(word) if word.lstrip("-").isdigit() else -1), log

    def _cancel_timer(self) -> timer.TimerState:
        return timer.parse_state(self._run(timer.cancel_command(self.workdir), what="cancel timer").stdout)

    def _confirm_with_timer(self, after_cancel: Callable[[], None] | None = None) -> None:
        state = self._cancel_timer()
        if state is timer.TimerState.CANCELLED:
            if after_cancel is not None:
                after_cancel()
            return
        reasons = {
            timer.TimerState.RUNNING: "the revert timer already expired and is reverting the commit now",
            timer.TimerState.FIRED: "the revert timer already expired: the commit has been reverted",
            timer.TimerState.LOST: "the revert timer vanished (device rebooted?): the commit is applied but "
            "unconfirmed; confirm by committing again or call rollback()",
            timer.TimerState.NONE: "no pending commit to confirm",
        }
        raise CommitConfirmException(f"{self.hostname}: {reasons.get(state, state.value)}")

    def has_pending_commit(self) -> bool:
        # RUNNING (expired, reverting right now) counts as pending: the device is not settled, so nobody may
        # back it up or commit on top of it; rollback() waits for the revert to finish.
        return self._timer_state() in (timer.TimerState.PENDING, timer.TimerState.RUNNING)

    # --- NAPALM surface shared by all ------------------------------------------------------------------
    def cli(self, commands: list[str], encoding: str = "text") -> dict[str, str | dict[str, Any]]:
        if encoding != "text":
            raise NotImplementedError("netfab drivers return text; parse JSON outputs yourself")
        return {cmd: self._run(cmd, check=False).stdout for cmd in commands}

    def get_config(
        self, retrieve: str = "all", full: bool = False, sanitized: bool = False, format: str = "text"
    ) -> models.ConfigDict:
        want = {"running", "startup", "candidate"} if retrieve == "all" else {retrieve}
        out: models.ConfigDict = {"running": "", "startup": "", "candidate": ""}
        if "running" in want:
            out["running"] = self._running_config(full)
        if "startup" in want:
            out["startup"] = self._startup_config()
        if "candidate" in want:
            out["candidate"] = self._candidate or ""
        if sanitized:
            out = {
                "running": redact(out["running"]),
                "startup": redact(out["startup"]),
                "candidate": redact(out["candidate"]),
            }
        return out

    def _running_config(self, full: bool) -> str:
        raise NotImplementedError

    def _startup_config(self) -> str:
        raise NotImplementedError

    def load_companions(self, companions: Mapping[str, str]) -> None:
        """Stage the platform's extra build outputs, keyed by file name or bare suffix ("leaf1.sh" or "sh").

        Dispatches on `extra_artifacts`, e.g. frr: {"leaf1.sh": text} -> load_host_script(text).
        """
        for key, text in companions.items():
            method = next((m for suffix, m in self.extra_artifacts.items() if f".{key}".endswith(suffix)), None)
            if method is None:
                raise ReplaceConfigException(
                    f"{self.hostname}: no way to apply {key!r} on {self.platform}; "
                    f"expected one of {sorted(self.extra_artifacts)}"
                )
            getattr(self, method)(text)
