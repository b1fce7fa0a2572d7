"""The one SSH client: deploy drivers and the lab both run commands through it.

One exec channel per command (no shell prompts), so every command's exit status and stderr are exact: the
drivers decide on them (frr-reload's rc is the only reliable "half-applied" signal).

Where to connect follows OpenSSH: explicit settings first (inventory, NETFAB_* environment), then the
ssh_config file (~/.ssh/config unless another or "none" is named): HostName, Port, User, IdentityFile,
UserKnownHostsFile, ProxyJump and ProxyCommand. GPU-cluster management networks usually sit behind a bastion,
so a jump host can also be given explicitly (`jump_host`, NETFAB_SSH_JUMP: "[user@]host[:port][,next...]",
or "none"); each hop is itself looked up in ssh_config, as `ssh -J` does.

Host keys are checked for every hop, the jump hosts included, against known_hosts with paramiko's
RejectPolicy. ssh_config's StrictHostKeyChecking is deliberately not read: only the explicit insecure opt-in
(NETFAB_INSECURE_ACCEPT_HOST_KEYS=1, optional_args accept_unknown_host_keys) accepts an *unknown* key, with a
warning each time, for that connection only: nothing is written to any known_hosts file. A *changed* key is
refused always.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import select
import socket
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import paramiko

log = logging.getLogger(__name__)

ENV_JUMP = "NETFAB_SSH_JUMP"
ENV_SSH_CONFIG = "NETFAB_SSH_CONFIG"
DEFAULT_SSH_CONFIG = "~/.ssh/config"
NONE = "none"
MAX_HOPS = 8  # a ProxyJump chain longer than this is a loop in ssh_config


# --- errors: one type per way a connection fails; adapters map them (NAPALM exceptions, LabError) -------------
class SSHError(Exception):
    """A connection or command failed; the message names user@host:port (and the jump host, if any)."""


class SSHUnreachable(SSHError):
    pass


class SSHTimeout(SSHUnreachable):
    pass


class SSHAuthFailed(SSHError):
    pass


class SSHHostKeyRefused(SSHError):
    pass


class SSHConfigError(SSHError):
    """The ssh_config or jump-host setting cannot be used (unreadable file, a loop, a bad hop spec)."""


class SSHChannelClosed(SSHError):
    pass


class SSHCommandTimeout(SSHError):
    pass


# --- parameters and where they resolve to --------------------------------------------------------------------
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
    """What the caller knows. None means "not given": ssh_config, then OpenSSH's default, fills it in."""

    host: str
    port: int | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    key_file: str | None = None
    known_hosts: str | None = None
    accept_unknown_host_keys: bool = False
    allow_agent: bool = True
    timeout: float = 30.0
    jump: str | None = None
    """Explicit jump host chain "[user@]host[:port],..." (overrides ssh_config's ProxyJump); "none" = direct."""
    ssh_config: str | None = None
    """ssh_config file; None = ~/.ssh/config if it exists; "none" = no file."""


@dataclass(frozen=True)
class Hop:
    """One resolved SSH connection: the target, or a jump host on the way to it."""

    alias: str
    """The name as given (a Host pattern in ssh_config may map it to another address)."""
    host: str
    port: int
    username: str
    key_files: tuple[str, ...] = ()
    known_hosts: str | None = None
    proxy_command: str | None = None

    @property
    def where(self) -> str:
        return f"{self.username}@{self.host}:{self.port}" if self.username else f"{self.host}:{self.port}"


@dataclass(frozen=True)
class Route:
    jumps: tuple[Hop, ...]
    target: Hop

    def describe(self, hop: Hop) -> str:
        if hop is self.target:
            via = f" via jump host {', '.join(j.where for j in self.jumps)}" if self.jumps else ""
            return f"{hop.where}{via}"
        return f"jump host {hop.where} (on the way to {self.target.where})"


def env_options(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The SSH settings the environment gives every host (inventory values win over them)."""
    env = os.environ if environ is None else environ
    out = {}
    if env.get(ENV_JUMP):
        out["jump_host"] = env[ENV_JUMP]
    if env.get(ENV_SSH_CONFIG):
        out["ssh_config"] = env[ENV_SSH_CONFIG]
    return out


def load_ssh_config(name: str | None) -> paramiko.SSHConfig:
    if name is not None and name.lower() == NONE:
        return paramiko.SSHConfig()
    path = Path(name or DEFAULT_SSH_CONFIG).expanduser()
    if name is None and not path.is_file():
        return paramiko.SSHConfig()
    try:
        return paramiko.SSHConfig.from_path(str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise SSHConfigError(f"cannot read ssh_config {path}: {exc}") from exc
    except Exception as exc:  # paramiko's parser raises ConfigParseError (a bare Exception subclass) and others
        raise SSHConfigError(f"ssh_config {path} does not parse: {exc}") from exc


def _parse_hop(spec: str) -> tuple[str | None, str, int | None]:
    """[user@]host[:port] (and [IPv6]:port) -> (user, host, port)."""
    user, _, hostport = spec.strip().rpartition("@")
    host, port = hostport, None
    if hostport.startswith("["):
        host, _, rest = hostport[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else None
    elif hostport.count(":") == 1:
        host, port = hostport.split(":")
    if not host or (port is not None and not port.isdigit()):
        raise SSHConfigError(f"jump host {spec!r}: expected [user@]host[:port]")
    return user or None, host, int(port) if port is not None else None


def resolve_route(params: SSHParams, config: paramiko.SSHConfig | None = None) -> Route:
    """Where a connection goes, hop by hop, after the explicit settings and ssh_config are applied."""
    config = config if config is not None else load_ssh_config(params.ssh_config)
    target, jump_spec = _resolve_hop(
        config, params.host, params.username, params.port, params.key_file, params.known_hosts
    )
    if params.jump is not None:
        jump_spec = params.jump
    jumps = _jump_chain(config, jump_spec, params.known_hosts, depth=0)
    return Route(jumps=tuple(jumps), target=target)


def _resolve_hop(
    config: paramiko.SSHConfig,
    alias: str,
    username: str | None,
    port: int | None,
    key_file: str | None,
    known_hosts: str | None,
) -> tuple[Hop, str | None]:
    entry = config.lookup(alias)
    keys = [key_file] if key_file else [str(Path(k).expanduser()) for k in entry.get("identityfile", [])]
    kh = known_hosts or _first_known_hosts(entry.get("userknownhostsfile"))
    try:
        resolved_port = port if port is not None else int(entry.get("port", 22))
    except ValueError:
        raise SSHConfigError(f"ssh_config: Port {entry.get('port')!r} for {alias} is not a number") from None
    hop = Hop(
        alias=alias,
        host=str(entry.get("hostname", alias)),
        port=resolved_port,
        username=username if username else str(entry.get("user", "")),
        key_files=tuple(keys),
        known_hosts=kh,
        proxy_command=entry.get("proxycommand") if entry.get("proxycommand", NONE).lower() != NONE else None,
    )
    jump = entry.get("proxyjump")
    return hop, jump


def _first_known_hosts(value: str | None) -> str | None:
    # UserKnownHostsFile may list several files; the first is the user's own (OpenSSH reads them all, but the
    # second is usually ~/.ssh/known_hosts2, long deprecated). "none" means no user file.
    if not value:
        return None
    first = value.split()[0]
    return None if first.lower() == NONE else str(Path(first).expanduser())


def _jump_chain(config: paramiko.SSHConfig, spec: str | None, known_hosts: str | None, depth: int) -> list[Hop]:
    if not spec or spec.strip().lower() == NONE:
        return []
    if depth >= MAX_HOPS:
        raise SSHConfigError(f"more than {MAX_HOPS} jump hosts: is there a ProxyJump loop in ssh_config?")
    hops: list[Hop] = []
    for part in spec.split(","):
        user, host, port = _parse_hop(part)
        hop, own_jump = _resolve_hop(config, host, user, port, None, known_hosts)
        # A jump host's own ProxyJump comes before it (as with ssh -J); the first hop's only, which is what
        # OpenSSH does too: a chain "a,b" already says how b is reached.
        if not hops:
            hops += _jump_chain(config, own_jump, known_hosts, depth + 1)
        hops.append(hop)
        if len(hops) > MAX_HOPS:
            raise SSHConfigError(f"more than {MAX_HOPS} jump hosts: is there a ProxyJump loop in ssh_config?")
    return hops


# --- host keys -----------------------------------------------------------------------------------------------
def fingerprint(key: paramiko.PKey) -> str:
    """SHA256:base64, as `ssh-keygen -lf` prints it (not paramiko's MD5 hex), so operators can compare."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


Warn = Callable[[str], None]


def _stderr_warning(message: str) -> None:
    # Straight to stderr as well as the log: a security downgrade must be seen even where no logging is set up.
    log.warning("%s", message)
    sys.stderr.write(f"netfab: WARNING: {message}\n")
    sys.stderr.flush()


def insecure_host_keys_warning(warn: Warn = _stderr_warning) -> None:
    """Said once per run that opts in, before anything connects (and again for every key it accepts)."""
    warn(
        "NETFAB_INSECURE_ACCEPT_HOST_KEYS=1: host keys missing from known_hosts are accepted WITHOUT verification "
        "for this run (never saved); a changed key is still refused. Unset it once the keys are in known_hosts."
    )


class _AcceptUnknownWithWarning(paramiko.MissingHostKeyPolicy):
    """The insecure opt-in: accept a key that is not in known_hosts, warn, and remember it for this connection
    only. Unlike paramiko's AutoAddPolicy nothing is saved, so one opt-in never becomes permanent trust."""

    def __init__(self, describe: str, warn: Warn) -> None:
        self._describe = describe
        self._warn = warn

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        self._warn(
            f"{self._describe}: ACCEPTING an unknown host key {key.get_name()} {fingerprint(key)} without "
            "verification (NETFAB_INSECURE_ACCEPT_HOST_KEYS / accept_unknown_host_keys); not saved to known_hosts"
        )


def _client_for(hop: Hop, params: SSHParams, describe: str, warn: Warn) -> paramiko.SSHClient:
    client = paramiko.SSHClient()
    if hop.known_hosts:
        try:
            # get_host_keys().load, not load_host_keys(): the latter remembers the file name, and paramiko saves
            # accepted keys back into it (the reliability trial's F6-B).
            client.get_host_keys().load(hop.known_hosts)
        except OSError as exc:
            client.close()
            raise SSHConfigError(f"{describe}: cannot read known_hosts {hop.known_hosts}: {exc}") from exc
    else:
        try:
            client.load_system_host_keys()
        except OSError as exc:
            client.close()
            raise SSHConfigError(f"{describe}: cannot read ~/.ssh/known_hosts: {exc}") from exc
    if params.accept_unknown_host_keys:
        client.set_missing_host_key_policy(_AcceptUnknownWithWarning(describe, warn))
    else:
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
    return client


def _open_hop(
    hop: Hop,
    params: SSHParams,
    describe: str,
    sock: paramiko.Channel | paramiko.ProxyCommand | None,
    warn: Warn,
    is_target: bool,
) -> paramiko.SSHClient:
    client = _client_for(hop, params, describe, warn)
    # A jump host without an IdentityFile of its own is tried with the target's key (NETFAB_SSH_KEY is usually
    # the operator's one key, authorised on the bastion too) and the agent. paramiko tries every file in a
    # list; its stubs only admit one str.
    files = hop.key_files or ((params.key_file,) if params.key_file and not is_target else ())
    keys: Any = list(files) or None
    if hop.proxy_command and sock is None:
        sock = paramiko.ProxyCommand(hop.proxy_command)
    try:
        client.connect(
            hostname=hop.host,
            port=hop.port,
            username=hop.username or None,
            # The device password is the target's, never offered to a jump host.
            password=params.password if is_target else None,
            key_filename=keys,
            allow_agent=params.allow_agent,
            look_for_keys=not files and not (is_target and params.password),
            timeout=params.timeout,
            banner_timeout=params.timeout,
            auth_timeout=params.timeout,
            channel_timeout=params.timeout,
            sock=sock,
        )
    except paramiko.BadHostKeyException as exc:
        client.close()
        raise SSHHostKeyRefused(
            f"{describe}: host key MISMATCH (server offered {exc.key.get_name()} {fingerprint(exc.key)}, "
            f"known_hosts has {fingerprint(exc.expected_key)}): refusing to connect"
        ) from exc
    except paramiko.AuthenticationException as exc:
        client.close()
        raise SSHAuthFailed(f"{describe}: authentication failed ({type(exc).__name__})") from exc
    except TimeoutError as exc:
        client.close()
        raise SSHTimeout(f"{describe}: unreachable (no answer within {params.timeout:g} s)") from exc
    except paramiko.SSHException as exc:
        client.close()
        if "not found in known_hosts" in str(exc):
            raise SSHHostKeyRefused(
                f"{describe}: host key unknown (not in {hop.known_hosts or '~/.ssh/known_hosts'}): refusing; "
                "add the key (ssh-keyscan, checked out of band), or opt in with NETFAB_INSECURE_ACCEPT_HOST_KEYS=1"
            ) from exc
        if isinstance(exc, paramiko.ChannelException):  # the jump host could not open the forward
            raise SSHUnreachable(f"{describe}: unreachable from the jump host: {exc}") from exc
        raise SSHUnreachable(f"{describe}: SSH negotiation failed: {exc}") from exc
    except OSError as exc:  # refused, no route, DNS failure (NoValidConnectionsError is an OSError too)
        client.close()
        raise SSHUnreachable(f"{describe}: unreachable: {exc.strerror or exc}") from exc
    transport = client.get_transport()
    if transport is not None and isinstance(transport.sock, socket.socket):
        # Each command is a few small packets; with Nagle + delayed ACK every channel open costs ~40 ms.
        transport.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return client


def _forward(client: paramiko.SSHClient, hop: Hop, describe: str, timeout: float) -> paramiko.Channel:
    transport = client.get_transport()
    if transport is None or not transport.is_active():
        raise SSHUnreachable(f"{describe}: the jump host's connection closed")
    try:
        return transport.open_channel("direct-tcpip", (hop.host, hop.port), ("127.0.0.1", 0), timeout=timeout)
    except paramiko.ChannelException as exc:  # administratively prohibited, connect failed...
        raise SSHUnreachable(f"{describe}: unreachable from the jump host: {exc.text or exc}") from exc
    except (paramiko.SSHException, OSError) as exc:
        raise SSHUnreachable(f"{describe}: the jump host could not forward: {exc}") from exc


# --- the session ---------------------------------------------------------------------------------------------
class SSHSession:
    """An open connection (through its jump hosts) that runs one exec channel per command."""

    def __init__(self, client: paramiko.SSHClient, route: Route, params: SSHParams, hops: list[paramiko.SSHClient]):
        self._client = client
        self._hops = hops
        self.route = route
        self.params = params

    @classmethod
    def connect(cls, params: SSHParams, warn: Warn = _stderr_warning) -> SSHSession:
        route = resolve_route(params)
        opened: list[paramiko.SSHClient] = []
        sock: paramiko.Channel | None = None
        try:
            for hop in (*route.jumps, route.target):
                describe = route.describe(hop)
                if opened:
                    sock = _forward(opened[-1], hop, describe, params.timeout)
                opened.append(_open_hop(hop, params, describe, sock, warn, is_target=hop is route.target))
        except BaseException:
            for client in reversed(opened):
                client.close()
            raise
        log.debug("connected to %s", route.describe(route.target))  # never log credentials
        return cls(opened[-1], route, params, opened[:-1])

    def run(self, command: str, stdin: str | None = None, timeout: float | None = None) -> CommandResult:
        """Run one command; rc, stdout and stderr exactly as the device produced them.

        timeout: seconds for the whole command (default: the connect timeout, at least 60 s)."""
        where = self.route.target.where
        transport = self._client.get_transport()
        if transport is None or not transport.is_active():
            raise SSHChannelClosed(f"{where}: SSH connection is closed")
        limit = timeout if timeout is not None else max(self.params.timeout, 60.0)
        started = time.monotonic()
        deadline = started + limit
        try:
            chan = transport.open_session(timeout=self.params.timeout)
        except (paramiko.SSHException, OSError) as exc:
            raise SSHChannelClosed(f"{where}: cannot open a channel: {exc}") from exc
        try:
            chan.exec_command(command)
            if stdin is not None:
                chan.sendall(stdin.encode())
            chan.shutdown_write()  # EOF on stdin: `cat > file` ends, nothing waits for input
            out, err = _read_to_eof(chan, deadline, where, limit)
            # OpenSSH may send exit-status just before or after EOF; it always comes before the close.
            if not chan.status_event.wait(max(0.0, deadline - time.monotonic())):
                raise SSHCommandTimeout(f"{where}: command did not finish in {limit:g} s")
            rc = chan.recv_exit_status()
            if rc == -1:
                raise SSHChannelClosed(f"{where}: channel closed without an exit status (connection lost?)")
        finally:
            chan.close()
        log.debug("%s rc=%d %.2fs: %s", where, rc, time.monotonic() - started, command.splitlines()[0][:160])
        return CommandResult(command, rc, out.decode(errors="replace"), err.decode(errors="replace"))

    def close(self) -> None:
        self._client.close()
        for client in reversed(self._hops):
            client.close()

    def is_alive(self) -> bool:
        transport = self._client.get_transport()
        return bool(transport is not None and transport.is_active())


def _read_to_eof(chan: paramiko.Channel, deadline: float, where: str, limit: float) -> tuple[bytes, bytes]:
    """Both streams until EOF, waiting on the channel (select wakes on stdout, stderr and EOF alike): no busy
    loop, and neither stream can stall the other by filling the shared channel window."""
    out, err = bytearray(), bytearray()
    while True:
        while chan.recv_ready():
            out += chan.recv(65536)
        while chan.recv_stderr_ready():
            err += chan.recv_stderr(65536)
        if chan.eof_received or chan.closed:
            # EOF follows all data on the channel: drain what arrived with it.
            while chan.recv_ready():
                out += chan.recv(65536)
            while chan.recv_stderr_ready():
                err += chan.recv_stderr(65536)
            if chan.closed and not chan.eof_received and not chan.exit_status_ready():
                raise SSHChannelClosed(f"{where}: channel closed while running a command")
            return bytes(out), bytes(err)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise SSHCommandTimeout(f"{where}: command did not finish in {limit:g} s")
        select.select([chan], [], [], min(remaining, 1.0))
