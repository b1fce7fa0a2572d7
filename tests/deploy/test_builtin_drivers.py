"""NAPALM's real EOSDriver, JunOSDriver and NXOSDriver driven by netfab's Deployer, each over a mock transport.

Only the wire is replaced; everything above it is the installed libraries' own code:

* EOS: MockEapiConnection is a pyeapi `EapiConnection` registered as the "https" transport. pyeapi's own
  `send()` builds the JSON-RPC request and parses the reply (CommandError and all); the reply comes from
  MockEos, an in-memory switch with config sessions, `commit timer`, abort, rollback-0 and write memory.
* Junos: `ncclient.manager.connect` returns a MockNetconfManager. PyEZ's Device/Config build the real RPC
  XML (`<commit-configuration><confirmed/><confirm-timeout>5</...>`) and parse the replies through ncclient's
  own NCElement/XSLT; MockJunos keeps the committed history, the candidate and the confirmed-commit timer.
* NX-OS: nxapi_plumbing's `requests.post` and napalm's netmiko SCP `file_transfer` are replaced; MockNxos
  answers NX-API JSON-RPC (`cli`/`cli_ascii`) with checkpoints, `rollback running-config file` and `dir`.

Fixed replies come from tests/deploy/recorded/<driver>/ (see its README: written to the documented wire
formats, not captured from a device). Each mock logs every command/RPC it receives, so the tests assert the
exact sequence the engine caused, e.g. that no `abort` reaches an EOS session between `commit timer` and the
confirming `commit` (INTEGRATION.md finding 3). Post-checks are a stand-in run_checks that calls the real
NAPALM `get_interfaces()` getter on the same connection (Ethernet1 / et-0/0/0 / Ethernet1/1 up, MTU 9216).
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlparse

import napalm.nxos.nxos as napalm_nxos
import pyeapi.client
import pytest
import requests
from lxml import etree
from napalm.nxapi_plumbing import api_client
from ncclient import manager as ncclient_manager
from ncclient.devices.junos import JunosDeviceHandler
from ncclient.operations.rpc import RPCReply
from ncclient.transport.errors import SSHError
from ncclient.xml_ import NCElement
from pyeapi.eapilib import EapiConnection

from netfab.deploy import engine
from netfab.deploy.credentials import Credentials
from netfab.deploy.engine import Deployer, DeployOutcome, DeviceArtifacts
from netfab.deploy.inventory import build_nornir
from netfab.deploy.journal import DeviceRecord, Journal, RunRecord, load_run
from netfab.deploy.waves import Wave
from netfab.platforms import platform_spec
from netfab.verify.checks import CheckResult
from netfab.verify.results import check_result

RECORDED = Path(__file__).parent / "recorded"


def recorded(driver: str, name: str) -> str:
    return (RECORDED / driver / name).read_text(encoding="utf-8")


def _diff(old: list[str], new: list[str]) -> list[str]:
    """The +/- lines of a unified diff (no headers, no context)."""
    return [
        line
        for line in difflib.unified_diff(old, new, lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


# === EOS over eAPI ================================================================================
class EapiFailure(Exception):
    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind


EOS_SECTIONS = ("interface ", "router ", "management ", "vlan ")
EOS_TOP = (*EOS_SECTIONS, "hostname ", "username ", "ip routing", "no ip routing", "ntp ", "logging ")


def eos_lines(text: str) -> list[str]:
    """Config lines as NAPALM sends them into a session: stripped, no `!` comments, no `end`."""
    return [s for s in (raw.strip() for raw in text.splitlines()) if s and not s.startswith("!") and s != "end"]


def eos_render(lines: list[str]) -> list[str]:
    out, in_section = [], False
    for line in lines:
        if line.startswith(EOS_TOP):
            in_section = line.startswith(EOS_SECTIONS)
            out.append(line)
        else:
            out.append(("   " if in_section else "") + line)
    return out


@dataclass
class EosSession:
    lines: list[str]
    state: str = "pending"
    commit_by: float = 0.0
    revert_to: list[str] | None = None


@dataclass
class MockEos:
    """An EOS switch as seen through eAPI. `log` holds every command received, in order."""

    name: str
    running: list[str]
    startup: list[str] = field(default_factory=list)
    flash_rollback0: list[str] = field(default_factory=list)
    sessions: dict[str, EosSession] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    uptime: float = 86400.0
    reachable: bool = True
    fail: dict[str, str] = field(default_factory=dict)
    """regex on a command -> error text: that command is rejected (failure injection)."""
    _session: str | None = None

    def __post_init__(self) -> None:
        self.startup = list(self.running)

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        fmt, cmds = request["params"]["format"], request["params"]["cmds"]
        results: list[Any] = []
        try:
            for i, item in enumerate(cmds):
                cmd = item["cmd"] if isinstance(item, dict) else item
                self.log.append(cmd)
                try:
                    results.append(self.run(cmd, fmt))
                except EapiFailure as exc:
                    # eAPI stops at the failing command; the session it was filling stays pending.
                    reply = json.loads(recorded("eos", "error_invalid_input.json"))
                    reply["id"] = request["id"]
                    reply["error"]["message"] = f"CLI command {i + 1} of {len(cmds)} '{cmd}' failed: {exc.kind}"
                    reply["error"]["data"] = [*results, {"errors": [str(exc)]}]
                    return reply
            return {"jsonrpc": "2.0", "id": request["id"], "result": results}
        finally:
            self._session = None  # every eAPI request is a fresh CLI context

    def expire_timer(self) -> None:
        """What EOS does when a commit timer runs out: the session's change is reverted."""
        for name, s in list(self.sessions.items()):
            if s.state == "pendingCommitTimer":
                assert s.revert_to is not None
                self.running = s.revert_to
                del self.sessions[name]

    def run(self, cmd: str, fmt: str) -> dict[str, Any]:
        def text(out: str = "") -> dict[str, Any]:
            return {"output": out} if fmt == "text" else {}

        for pattern, message in self.fail.items():
            if re.search(pattern, cmd):
                raise EapiFailure("error", message)
        if self._session is not None:
            session = self.sessions[self._session]
            if cmd == "end":
                self._session = None
            elif cmd == "rollback clean-config":
                session.lines = []
            elif cmd.startswith("bogus"):
                raise EapiFailure("invalid command", "Invalid input (at token 0: 'bogus')")
            else:
                session.lines.append(cmd)
            return {}
        if cmd == "enable":
            return {}
        if cmd == "show version":
            return json.loads(recorded("eos", "show_version.json")) | {"uptime": self.uptime}
        if cmd in ("show configuration sessions", "show configuration sessions detail"):
            return self._sessions_json(detail=cmd.endswith("detail"))
        if m := re.fullmatch(r"configure session (\S+)(?: (.+))?", cmd):
            return text(self._session_cmd(m.group(1), m.group(2)))
        if m := re.fullmatch(r"show session-config named (\S+) diffs", cmd):
            s = self.sessions[m.group(1)]
            diff = difflib.unified_diff(
                eos_render(self.running), eos_render(s.lines), "system:/running-config",
                f"session:/{m.group(1)}-session-config", lineterm="",
            )  # fmt: skip
            return text("\n".join(diff) + "\n")
        if cmd == "copy startup-config flash:rollback-0":
            self.flash_rollback0 = list(self.startup)
            return text("Copy completed successfully.\n")
        if cmd == "write memory":
            self.startup = list(self.running)
            return text("Copy completed successfully.\n")
        if cmd == "configure replace flash:rollback-0":
            self.running = list(self.flash_rollback0)
            return text()
        if cmd == "show running-config":
            body = "\n".join(eos_render(self.running))
            return text(f"! Command: show running-config\n! device: {self.name}\n!\n{body}\n!\nend\n")
        if cmd == "show interfaces":
            data = json.loads(recorded("eos", "show_interfaces.json"))
            eth = data["interfaces"]["Ethernet1"]
            eth["mtu"] = _section_value(self.running, "interface Ethernet1", r"mtu (\d+)", default=1500)
            if "shutdown" in _section(self.running, "interface Ethernet1"):
                eth["lineProtocolStatus"], eth["interfaceStatus"] = "down", "disabled"
            return data
        raise EapiFailure("invalid command", "Invalid input")

    def _session_cmd(self, name: str, rest: str | None) -> str:
        if rest is None:
            self.sessions.setdefault(name, EosSession(list(self.running)))  # a new session starts as running
            self._session = name
            return ""
        s = self.sessions.get(name)
        if s is None:
            raise EapiFailure("error", f"Session {name} not found")
        if rest == "abort":
            if s.state == "pendingCommitTimer":
                assert s.revert_to is not None
                self.running = s.revert_to
            del self.sessions[name]
        elif rest == "commit":
            if s.state != "pendingCommitTimer":  # a timer commit is just confirmed; otherwise apply now
                s.revert_to, self.running = self.running, list(s.lines)
            s.state = "completed"
        elif m := re.fullmatch(r"commit timer (\d\d):(\d\d):(\d\d)", rest):
            seconds = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3))
            s.revert_to, self.running = self.running, list(s.lines)
            s.state, s.commit_by = "pendingCommitTimer", self.uptime + seconds
        else:
            raise EapiFailure("invalid command", "Invalid input")
        return ""

    def _sessions_json(self, detail: bool) -> dict[str, Any]:
        data = json.loads(recorded("eos", "show_configuration_sessions_detail.json"))
        template = next(iter(data["sessions"].values()))
        data["sessions"] = {}
        for name, s in self.sessions.items():
            entry = copy.deepcopy(template) | {"state": s.state}
            if s.state == "pendingCommitTimer" and detail:
                entry["commitBy"] = s.commit_by
            else:
                entry.pop("commitBy", None)
            data["sessions"][name] = entry
        return data

    def pending_session(self) -> str | None:
        return next((n for n, s in self.sessions.items() if s.state == "pendingCommitTimer"), None)


def _section(lines: list[str], header: str) -> list[str]:
    if header not in lines:
        return []
    out = []
    for line in lines[lines.index(header) + 1 :]:
        if line.startswith(EOS_TOP) or line.startswith(("interface ", "router ")):
            break
        out.append(line)
    return out


def _section_value(lines: list[str], header: str, pattern: str, default: int) -> int:
    for line in _section(lines, header):
        if m := re.fullmatch(pattern, line.strip().rstrip(";")):
            return int(m.group(1))
    return default


MOCK_EOS: dict[int, MockEos] = {}


class _MockHttpResponse:
    status, reason = 200, "OK"

    def __init__(self, body: bytes) -> None:
        self._body = body

    def read(self) -> bytes:
        return self._body


class _MockHttp:
    """Stands in for http.client.HTTPSConnection under pyeapi's EapiConnection.send()."""

    def __init__(self, dev: MockEos) -> None:
        self.dev, self.body = dev, b""

    def putrequest(self, method: str, url: str) -> None:
        assert (method, url) == ("POST", "/command-api")

    def putheader(self, *header: str) -> None:
        pass

    def endheaders(self, message_body: bytes = b"") -> None:
        if not self.dev.reachable:
            raise ConnectionRefusedError(111, "Connection refused")
        self.body = message_body

    def getresponse(self) -> _MockHttpResponse:
        return _MockHttpResponse(json.dumps(self.dev.handle(json.loads(self.body))).encode())

    def close(self) -> None:
        pass


class MockEapiConnection(EapiConnection):
    """A pyeapi transport class (what `transport: https` resolves to) answering from MockEos by port."""

    def __init__(
        self,
        host: str,
        port: int | None = None,
        path: str | None = None,
        username: str | None = None,
        password: str | None = None,
        timeout: int = 60,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        assert host == "127.0.0.1" and port is not None
        self.transport = _MockHttp(MOCK_EOS[port])
        self.authentication(username, password)


# === Junos over NETCONF ===========================================================================
NETCONF_NS = "urn:ietf:params:xml:ns:netconf:base:1.0"
JUNOS_NS = "http://xml.juniper.net/junos/23.4R1/junos"


def junos_lines(text: str) -> list[str]:
    return [s for s in (raw.rstrip() for raw in text.splitlines()) if s.strip() and not s.lstrip().startswith("#")]


@dataclass
class MockJunos:
    """A Junos router as seen through NETCONF. `rpcs` holds every RPC received, serialized."""

    name: str
    history: list[str]
    """history[0] is the committed configuration, history[n] is `rollback n`."""
    candidate: str = ""
    pending_minutes: int | None = None
    locked: bool = False
    rpcs: list[str] = field(default_factory=list)
    reachable: bool = True
    fail_commit: bool = False
    clock: int = 1700086000
    closed_sessions: int = 0

    def __post_init__(self) -> None:
        self.candidate = self.history[0]

    def tags(self) -> list[str]:
        return [etree.fromstring(r).tag for r in self.rpcs]

    def expire_timer(self) -> None:
        if self.pending_minutes is not None:
            self.history.insert(0, self.history[1])
            self.candidate, self.pending_minutes = self.history[0], None

    def rpc(self, cmd: etree._Element) -> str:
        self.rpcs.append(etree.tostring(cmd).decode())
        tag, attrs = cmd.tag, dict(cmd.attrib)
        if tag in ("lock-configuration", "unlock-configuration"):
            self.locked = tag == "lock-configuration"
            return "<ok/>"
        if tag == "load-configuration":
            if attrs.get("compare") == "rollback":
                self.candidate = self.history[int(attrs["rollback"])]
            else:
                text = cmd.findtext("configuration-text") or ""
                if "bogus" in text:  # the error travels in the reply; ncclient raises it
                    error = recorded("junos", "load_error.xml")
                    return f"<load-configuration-results>{error}</load-configuration-results>"
                assert attrs.get("action") == "override" and attrs.get("format") == "text"
                self.candidate = text
            return "<load-configuration-results><ok/></load-configuration-results>"
        if tag == "get-configuration":
            out = etree.Element("configuration-text")
            if attrs.get("compare") == "rollback":
                diff = _diff(junos_lines(self.history[int(attrs["rollback"])]), junos_lines(self.candidate))
                wrap = etree.Element("configuration-information")
                output = etree.SubElement(wrap, "configuration-output")
                output.text = "\n[edit]\n" + "\n".join(diff) + "\n" if diff else "\n"
                return etree.tostring(wrap).decode()
            out.text = self.history[0] if attrs.get("database") == "committed" else self.candidate
            return etree.tostring(out).decode()
        if tag == "commit-configuration":
            if self.fail_commit:
                return f"<commit-results>{recorded('junos', 'commit_error.xml')}</commit-results>"
            if cmd.find("check") is not None:
                return recorded("junos", "commit_results.xml")
            self.clock += 60
            if self.candidate != self.history[0]:
                self.history.insert(0, self.candidate)
            confirmed = cmd.find("confirmed") is not None
            self.pending_minutes = int(cmd.findtext("confirm-timeout") or 10) if confirmed else None
            return recorded("junos", "commit_results.xml")
        if tag == "get-commit-revision-information":
            info = etree.fromstring(recorded("junos", "get_commit_revision_information.xml"))
            info.find("date-time").set(f"{{{JUNOS_NS}}}seconds", str(self.clock))
            comment = info.find("comment")
            if self.pending_minutes is None:
                info.remove(comment)  # no comment: no confirmed commit pending
            else:
                comment.text = f"commit confirmed, rollback in {self.pending_minutes}mins"
            return etree.tostring(info).decode()
        if tag == "get-system-uptime-information":
            info = etree.fromstring(recorded("junos", "get_system_uptime_information.xml"))
            info.find(f"{{{info.nsmap[None]}}}current-time/{{{info.nsmap[None]}}}date-time").set(
                f"{{{JUNOS_NS}}}seconds", str(self.clock + 60)
            )
            return etree.tostring(info).decode()
        if tag == "get-interface-information":
            info = etree.fromstring(recorded("junos", "get_interface_information.xml"))
            ns = f"{{{info.nsmap[None]}}}"
            phy = info.find(f"{ns}physical-interface")
            lines = [line.strip() for line in junos_lines(self.history[0])]
            mtu = next((m.group(1) for line in lines if (m := re.fullmatch(r"mtu (\d+);", line))), "1514")
            phy.find(f"{ns}mtu").text = mtu
            if "disable;" in lines:
                phy.find(f"{ns}oper-status").text = "down"
            return etree.tostring(info).decode()
        raise AssertionError(f"MockJunos: unexpected RPC {etree.tostring(cmd).decode()}")


MOCK_JUNOS: dict[int, MockJunos] = {}


class MockNetconfManager:
    """What ncclient.manager.connect returns to PyEZ: replies go through ncclient's own NCElement and the
    Junos device handler's namespace-stripping XSLT, as on a real session."""

    def __init__(self, dev: MockJunos) -> None:
        self.dev = dev
        self._device_handler = JunosDeviceHandler({"name": "junos", "local": False, "use_filter": False})
        transport = SimpleNamespace(set_keepalive=lambda interval: None, is_active=lambda: True)
        self._session = SimpleNamespace(add_listener=lambda listener: None, transport=transport)
        self.timeout = 30
        self.huge_tree = False

    def rpc(self, rpc_cmd: etree._Element, filter_xml: Any = None) -> NCElement:
        body = self.dev.rpc(rpc_cmd)
        head = f'<rpc-reply xmlns="{NETCONF_NS}" xmlns:junos="{JUNOS_NS}" message-id="urn:uuid:1">'
        reply = RPCReply(f"{head}{body}</rpc-reply>")
        # What ncclient's RPC._request does with a reply (raise_mode ERRORS, as PyEZ opens sessions).
        reply.parse()
        if reply.error is not None and reply.error.severity == "error":
            raise reply.error
        return NCElement(reply, self._device_handler.transform_reply(), huge_tree=False)

    def close_session(self) -> None:
        self.dev.closed_sessions += 1


def mock_netconf_connect(**kwargs: Any) -> MockNetconfManager:
    dev = MOCK_JUNOS[kwargs["port"]]
    if not dev.reachable:
        raise SSHError(f"Could not open socket to {kwargs['host']}:{kwargs['port']}")
    return MockNetconfManager(dev)


# === NX-OS over NX-API (+ SCP) ====================================================================
def nx_lines(text: str) -> list[str]:
    """NX-OS config lines, indentation kept (it is what nests them); no blank or `!` lines."""
    return [s for s in (raw.rstrip() for raw in text.splitlines()) if s.strip() and not s.lstrip().startswith("!")]


class NxapiFailure(Exception):
    pass


@dataclass
class MockNxos:
    """An NX-OS switch as seen through NX-API and SCP. `log` holds every command (and SCP) received."""

    name: str
    running: list[str]
    startup: list[str] = field(default_factory=list)
    files: dict[str, list[str]] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    reachable: bool = True
    scp_ok: bool = True

    def __post_init__(self) -> None:
        self.startup = list(self.running)

    def handle(self, payload: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for req in payload:
            cmd, method = req["params"]["cmd"], req["method"]
            self.log.append(cmd)
            try:
                result = self.run(cmd)
            except NxapiFailure:
                out.append(json.loads(recorded("nxos", "error_rollback_failed.json")) | {"id": req["id"]})
                break
            if isinstance(result, str):
                result = {"msg": result} if method == "cli_ascii" else None
            elif result is not None:
                result = {"body": result}
            out.append({"jsonrpc": "2.0", "result": result, "id": req["id"]})
        return out

    def run(self, cmd: str) -> Any:
        if cmd == "show hostname":
            return json.loads(recorded("nxos", "show_hostname.json")) | {"hostname": self.name}
        if cmd == "show running-config":
            header = "\n".join(recorded("nxos", "running_config.txt").splitlines()[:5])
            return header + "\n\n" + "\n".join(self.running) + "\n"
        if cmd in ("terminal dont-ask", "no terminal dont-ask"):
            return None
        if m := re.fullmatch(r"delete (\S+)", cmd):
            self.files.pop(m.group(1), None)
            return None
        if m := re.fullmatch(r"checkpoint file (\S+)", cmd):
            self.files[m.group(1)] = list(self.running)
            return None
        if m := re.fullmatch(r"show diff rollback-patch file (\S+) file (\S+)", cmd):
            old, new = self.files[m.group(1)], self.files[m.group(2)]
            patch = [re.sub(r"^-(\s*)", r"\1no ", line) if line[0] == "-" else line[1:] for line in _diff(old, new)]
            body = "\n".join(patch) if patch else "Rollback Patch is Empty"
            return f"Collecting Running-Config\nCollecting Target-Config\nGenerating Rollback Patch\n!!\n{body}\n"
        if m := re.fullmatch(r"rollback running-config file (\S+)", cmd):
            target = self.files[m.group(1)]
            if any(line.startswith("bogus") for line in target):
                raise NxapiFailure
            self.running = list(target)
            return ""
        if cmd == "copy run startup-config":
            self.startup = list(self.running)
            return "Copy complete.\n"
        if m := re.fullmatch(r"dir (\S+)", cmd):
            if m.group(1) not in self.files:
                return "No such file or directory\n"
            return f"       1543    Nov 15 22:07:40 2023  {m.group(1)}\n\nUsage for bootflash://sup-local\n"
        if cmd == "show interface":
            data = json.loads(recorded("nxos", "show_interface.json"))
            eth = next(r for r in data["TABLE_interface"]["ROW_interface"] if r["interface"] == "Ethernet1/1")
            section = _nx_section(self.running, "interface Ethernet1/1")
            eth["eth_mtu"] = next((line.split()[1] for line in section if line.startswith("mtu ")), "1500")
            if "shutdown" in section:
                eth["state"] = "down"
            return data
        raise AssertionError(f"MockNxos: unexpected command {cmd!r}")


def _nx_section(lines: list[str], header: str) -> list[str]:
    if header not in lines:
        return []
    rest = lines[lines.index(header) + 1 :]
    end = next((i for i, line in enumerate(rest) if not line.startswith(" ")), len(rest))
    return [line.strip() for line in rest[:end]]


MOCK_NXOS: dict[int, MockNxos] = {}


def mock_nxapi_post(url: str, timeout: int, data: str, headers: dict, auth: Any, verify: bool) -> Any:
    dev = MOCK_NXOS[urlparse(url).port or 443]
    if not dev.reachable:
        raise requests.exceptions.ConnectionError(f"HTTPSConnectionPool(host='127.0.0.1'): refused ({url})")
    return SimpleNamespace(status_code=200, text=json.dumps(dev.handle(json.loads(data))))


class MockNetmikoSsh:
    """The netmiko session NX-OS's replace path opens for SCP; only what napalm touches."""

    def __init__(self, dev: MockNxos) -> None:
        self.dev = dev

    def set_base_prompt(self) -> str:
        return self.dev.name


def mock_netmiko_open(self: Any, device_type: str, netmiko_optional_args: dict | None = None) -> MockNetmikoSsh:
    assert device_type == "cisco_nxos"
    self._netmiko_device = MockNetmikoSsh(MOCK_NXOS[self.port])
    return self._netmiko_device


def mock_file_transfer(ssh_conn: MockNetmikoSsh, source_file: str, dest_file: str, **kwargs: Any) -> dict:
    dev = ssh_conn.dev
    dev.log.append(f"scp {dest_file}")
    if not dev.scp_ok:
        raise OSError(f"scp: bootflash:{dest_file}: Permission denied")
    dev.files[dest_file] = nx_lines(Path(source_file).read_text(encoding="utf-8"))
    return {"file_exists": True, "file_transferred": True, "file_verified": True}


# === the harness: one device, one wave, netfab's Deployer =========================================
PLATFORM = {"eos": "arista_eos", "junos": "juniper_junos", "nxos": "cisco_nxos"}
IFACE = {"eos": "Ethernet1", "junos": "et-0/0/0", "nxos": "Ethernet1/1"}
OPTIONAL_ARGS = {"eos": {"transport": "https"}, "junos": {}, "nxos": {"transport": "https"}}


def interface_check(driver: str) -> Callable[..., list[CheckResult]]:
    """The stand-in post-check: NAPALM's get_interfaces() on the deploying connection."""

    def run_checks(dev: Any, conn: Any, plan: Any) -> list[CheckResult]:
        got = conn.get_interfaces()[IFACE[driver]]
        ok = got["is_up"] and got["mtu"] == 9216
        msg = f"{IFACE[driver]} is_up={got['is_up']} mtu={got['mtu']}"
        return [check_result(dev.name, "VERIFY-INTERFACES", "pass" if ok else "fail", msg, 9216, got["mtu"])]

    return run_checks


@dataclass
class Run:
    outcome: DeployOutcome
    journal: Journal
    events: list[tuple[str, str, str]]

    def file(self, device: str, name: str) -> str:
        return (self.journal.dir / "devices" / device / name).read_text()

    def state(self, device: str) -> str:
        return load_run(self.journal.dir.parent.parent, "fab", self.journal.record.run_id).record.devices[device].state


@dataclass
class Harness:
    root: Path
    monkeypatch: pytest.MonkeyPatch

    def deploy(
        self,
        driver: str,
        name: str,
        port: int,
        intended: str,
        confirm_timeout_s: int = 300,
        dry_run: bool = False,
        confirm_mode: engine.ConfirmMode = "device",
    ) -> Run:
        platform = PLATFORM[driver]
        self.monkeypatch.setattr(engine, "run_checks", interface_check(driver))
        group = f"platform_{platform}"  # as netfab.render.inventory generates it
        hosts = {name: {"hostname": "127.0.0.1", "port": port, "platform": platform, "groups": [group]}}
        options = {
            "platform": platform_spec(platform).driver.napalm,
            "extras": {"optional_args": OPTIONAL_ARGS[driver]},
        }
        groups = {group: {"connection_options": {"netfab_napalm": options}}}
        nr = build_nornir(hosts, groups, Credentials(username="netops", password="pw-builtin"), workers=1)
        waves = [Wave("canary", (name,), 1, 0)]
        run_id = f"run{len(list(self.root.glob('fab/*')))}"
        record = RunRecord(
            run_id, "fab", ["intent.yaml"], "deploy.yaml", dry_run,
            waves=[{"name": "canary", "devices": [name]}], devices={name: DeviceRecord(name, "canary")},
        )  # fmt: skip
        journal = Journal(self.root, record, ("pw-builtin",))
        events: list[tuple[str, str, str]] = []
        deployer = Deployer(
            nr,
            SimpleNamespace(devices={name: SimpleNamespace(name=name)}),  # type: ignore[arg-type]
            {name: DeviceArtifacts(config=intended)},
            journal,
            confirm_timeout_s,
            settle_timeout_s=0,
            dry_run=dry_run,
            on_event=lambda e: events.append((e.kind.value, e.subject, e.message)),
            confirm_mode=confirm_mode,
        )
        return Run(deployer.run(waves), journal, events)


@pytest.fixture
def harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    monkeypatch.setitem(pyeapi.client.TRANSPORTS, "https", MockEapiConnection)
    monkeypatch.setattr(ncclient_manager, "connect", mock_netconf_connect)
    monkeypatch.setattr(api_client, "requests", SimpleNamespace(post=mock_nxapi_post, packages=requests.packages))
    monkeypatch.setattr(napalm_nxos.NXOSDriver, "_netmiko_open", mock_netmiko_open)
    monkeypatch.setattr(napalm_nxos, "file_transfer", mock_file_transfer)
    yield Harness(tmp_path / "runs", monkeypatch)
    MOCK_EOS.clear()
    MOCK_JUNOS.clear()
    MOCK_NXOS.clear()


# === EOS ==========================================================================================
EOS_RUNNING = recorded("eos", "running_config.txt")
EOS_NEW = EOS_RUNNING.replace("mtu 9214", "mtu 9216")


def eos(port: int = 18443) -> MockEos:
    dev = MockEos("leaf1", eos_lines(EOS_RUNNING))
    MOCK_EOS[port] = dev
    return dev


def _eos_span(log: list[str], start: str, end: str) -> list[str]:
    i = log.index(start)
    return log[i : log.index(end, i) + 1]


def test_eos_diff_commit_timer_checks_confirm(harness: Harness) -> None:
    dev = eos()
    run = harness.deploy("eos", "leaf1", 18443, EOS_NEW)
    assert run.outcome.ok and run.outcome.changed == ["leaf1"], run.outcome
    session = next(c.split()[2] for c in dev.log if c.startswith("configure session napalm_"))
    # The diff: EOS's own session diff, shown and journaled.
    diff = run.file("leaf1", "diff.txt")
    assert [line for line in diff.splitlines() if line[:1] in "+-"] == ["-   mtu 9214", "+   mtu 9216"]
    assert diff.startswith("@@ -2,7 +2,7 @@\n") and "    description to spine1 Ethernet1" in diff  # with context
    assert ("diff", "leaf1", diff.rstrip("\n")) in run.events
    # The load: a replace into a config session (the whole config after `rollback clean-config`).
    load = _eos_span(dev.log, f"configure session {session}", "end")
    assert load[1] == "rollback clean-config" and "mtu 9216" in load and "bogus" not in " ".join(load)
    # Commit with the device timer (300 s), post-check getter, then the confirming commit and write memory.
    timer = f"configure session {session} commit timer 00:05:00"
    confirm = f"configure session {session} commit"
    span = _eos_span(dev.log, timer, confirm)
    assert dev.log[dev.log.index(timer) - 1] == "copy startup-config flash:rollback-0"
    assert "show interfaces" in span
    # INTEGRATION.md finding 3: one connection from commit to confirm, so no abort in between.
    assert not [c for c in span if c.endswith(" abort")]
    assert dev.log[dev.log.index(confirm) + 1] == "write memory"
    assert "mtu 9216" in dev.running and dev.startup == dev.running and dev.pending_session() is None
    assert "mtu 9216" in run.file("leaf1", "after.conf") and run.state("leaf1") == "confirmed"


def test_eos_failed_checks_abort_the_pending_session_and_prove_the_backup(harness: Harness) -> None:
    dev = eos()
    broken = EOS_NEW.replace("   no switchport", "   shutdown\n   no switchport")
    run = harness.deploy("eos", "leaf1", 18443, broken)
    assert not run.outcome.ok and run.outcome.rolled_back == ["leaf1"]
    assert run.outcome.failed["leaf1"] == "post-checks failed: Ethernet1 is_up=False mtu=9216"
    first = next(c.split()[2] for c in dev.log if c.startswith("configure session napalm_"))
    # NAPALM rollback() of a pending timer commit: abort that session (EOS reverts at once) + write memory.
    abort = f"configure session {first} abort"
    assert dev.log[dev.log.index(abort) + 1] == "write memory"
    assert f"configure session {first} commit" not in dev.log
    # The proof: the backup loaded into a second session diffs empty against running, then is aborted.
    after_abort = dev.log[dev.log.index(abort) :]
    proof = next(c.split()[2] for c in after_abort if re.fullmatch(r"configure session \S+", c))
    assert f"show session-config named {proof} diffs" in after_abort
    assert after_abort[-1] == f"configure session {proof} abort"
    assert dev.running == eos_lines(EOS_RUNNING) and not dev.sessions
    assert run.state("leaf1") == "rolled_back"


def test_eos_rejected_config_fails_the_device_and_commits_nothing(harness: Harness) -> None:
    dev = eos()
    run = harness.deploy("eos", "leaf1", 18443, EOS_NEW + "bogus command\n")
    err = run.outcome.failed["leaf1"]
    assert err.startswith("ReplaceConfigException: Error [1002]: CLI command 13 of 13 'bogus command' failed")
    assert not [c for c in dev.log if " commit" in c or c == "write memory"]
    assert dev.log[-1].endswith(" abort")  # NAPALM discarded the half-loaded session
    assert dev.running == eos_lines(EOS_RUNNING) and not dev.sessions
    assert run.state("leaf1") == "failed" and not run.outcome.rolled_back


def test_eos_commit_error_fails_the_device_and_discards_the_session(harness: Harness) -> None:
    dev = eos()
    dev.fail[r"commit timer"] = "% Cannot commit session: a commit timer is already pending"
    run = harness.deploy("eos", "leaf1", 18443, EOS_NEW)
    err = run.outcome.failed["leaf1"]
    assert err.startswith("CommandError: Error [1002]: CLI command 3 of 3 'configure session napalm_")
    assert "commit timer 00:05:00' failed" in err and "a commit timer is already pending" in err
    assert dev.log[-1].endswith(" abort") and not dev.sessions  # engine fix: explicit discard after the error
    assert dev.running == eos_lines(EOS_RUNNING)


def test_eos_connection_failure_fails_before_any_change(harness: Harness) -> None:
    dev = eos()
    dev.reachable = False
    run = harness.deploy("eos", "leaf1", 18443, EOS_NEW)
    assert run.outcome.failed["leaf1"].startswith("ConnectionError: Socket error during eAPI connection")
    assert run.state("leaf1") == "failed" and dev.running == eos_lines(EOS_RUNNING)


def test_eos_dry_run_shows_the_diff_and_aborts_the_session(harness: Harness) -> None:
    dev = eos()
    run = harness.deploy("eos", "leaf1", 18443, EOS_NEW, dry_run=True)
    assert run.outcome.ok and not run.outcome.changed
    assert "+   mtu 9216" in run.file("leaf1", "diff.txt")
    assert not [c for c in dev.log if " commit" in c] and dev.log[-1].endswith(" abort")


def test_eos_pending_commit_of_another_session_fails_safe_until_its_timer_fires(harness: Harness) -> None:
    """A killed run left a commit timer pending in its own session. NAPALM's rollback() only aborts the
    session it opened itself, so a new connection cannot roll it back: the engine fails the device before
    backing it up, changes nothing, and the device's timer reverts it. After that, a rerun deploys."""
    dev = eos()
    dev.sessions["napalm_999"] = EosSession(eos_lines(EOS_NEW))
    dev._session_cmd("napalm_999", "commit timer 00:05:00")
    run = harness.deploy("eos", "leaf1", 18443, EOS_NEW)
    assert run.outcome.failed["leaf1"] == "CommitError: Current config session not found as pending commit-confirm"
    assert dev.pending_session() == "napalm_999"  # untouched: its timer is still the safety net
    dev.expire_timer()
    assert dev.running == eos_lines(EOS_RUNNING)
    assert harness.deploy("eos", "leaf1", 18443, EOS_NEW).outcome.ok


# === Junos ========================================================================================
JUNOS_RUNNING = recorded("junos", "running.conf")
JUNOS_NEW = JUNOS_RUNNING.replace("mtu 9214;", "mtu 9216;")


def junos(port: int = 18830) -> MockJunos:
    dev = MockJunos("leaf2", [JUNOS_RUNNING])
    MOCK_JUNOS[port] = dev
    return dev


def _commits(dev: MockJunos) -> list[str]:
    return [r for r in dev.rpcs if r.startswith("<commit-configuration")]


def test_junos_diff_commit_confirmed_checks_confirm(harness: Harness) -> None:
    dev = junos()
    run = harness.deploy("junos", "leaf2", 18830, JUNOS_NEW)
    assert run.outcome.ok and run.outcome.changed == ["leaf2"], run.outcome
    assert run.file("leaf2", "diff.txt").splitlines() == ["[edit]", "-        mtu 9214;", "+        mtu 9216;"]
    loads = [r for r in dev.rpcs if r.startswith("<load-configuration")]
    assert loads[0].startswith('<load-configuration format="text" action="override"><configuration-text>system {')
    # revert_in=300 s becomes PyEZ's commit(confirm=5): a NETCONF confirmed commit with a 5-minute timeout.
    # The confirmation is a plain commit on the same session, after the post-check getter ran.
    assert _commits(dev) == [
        "<commit-configuration><confirmed/><confirm-timeout>5</confirm-timeout></commit-configuration>",
        "<commit-configuration/>",
    ]
    tags = dev.tags()
    first, second = (i for i, t in enumerate(tags) if t == "commit-configuration")
    assert "get-interface-information" in tags[first:second]
    assert tags[first + 1] == "unlock-configuration" and "lock-configuration" in tags[:first]
    assert dev.pending_minutes is None and "mtu 9216;" in dev.history[0] and dev.closed_sessions == 1
    assert run.state("leaf2") == "confirmed"


def test_junos_failed_checks_roll_back_to_rollback_1_and_prove_the_backup(harness: Harness) -> None:
    dev = junos()
    broken = JUNOS_NEW.replace("        mtu 9216;", "        disable;\n        mtu 9216;")
    run = harness.deploy("junos", "leaf2", 18830, broken)
    assert run.outcome.rolled_back == ["leaf2"]
    assert run.outcome.failed["leaf2"] == "post-checks failed: et-0/0/0 is_up=False mtu=9216"
    assert '<load-configuration compare="rollback" rollback="1"/>' in dev.rpcs
    assert _commits(dev)[1] == "<commit-configuration/>"  # NAPALM commits the rollback-1 candidate
    assert dev.pending_minutes is None and junos_lines(dev.history[0]) == junos_lines(JUNOS_RUNNING)
    # Proof: the backup loaded again diffs empty; then discarded (rollback 0).
    assert dev.rpcs[-1] == "<unlock-configuration/>"
    assert dev.rpcs[-2] == '<load-configuration compare="rollback" rollback="0"/>'
    assert run.state("leaf2") == "rolled_back"


def test_junos_rejected_config_fails_the_device_and_commits_nothing(harness: Harness) -> None:
    dev = junos()
    run = harness.deploy("junos", "leaf2", 18830, JUNOS_NEW.replace("mtu 9216;", "mtu 9216;\n        bogus;"))
    assert run.outcome.failed["leaf2"].startswith("ReplaceConfigException: [{")
    assert "syntax error" in run.outcome.failed["leaf2"] and "bogus" in run.outcome.failed["leaf2"]
    assert _commits(dev) == [] and dev.candidate == dev.history[0] and not dev.locked
    assert run.state("leaf2") == "failed"


def test_junos_commit_error_discards_the_candidate_and_releases_the_lock(harness: Harness) -> None:
    dev = junos()
    dev.fail_commit = True
    run = harness.deploy("junos", "leaf2", 18830, JUNOS_NEW)
    assert run.outcome.failed["leaf2"].startswith("CommitError: CommitError(edit_path: [edit protocols bgp group")
    # Engine fix: without an explicit discard the shared candidate kept netfab's change after the session.
    assert dev.rpcs[-2:] == ['<load-configuration compare="rollback" rollback="0"/>', "<unlock-configuration/>"]
    assert dev.candidate == dev.history[0] == JUNOS_RUNNING and not dev.locked


def test_junos_confirm_timer_must_be_whole_minutes(harness: Harness) -> None:
    dev = junos()
    run = harness.deploy("junos", "leaf2", 18830, JUNOS_NEW, confirm_timeout_s=90)
    assert run.outcome.failed["leaf2"] == (
        "CommitConfirmException: For Junos devices revert_in must be a multiple of 60 (60, 120, 180...)"
    )
    assert _commits(dev) == [] and dev.candidate == dev.history[0]


def test_junos_connection_failure_fails_before_any_change(harness: Harness) -> None:
    dev = junos()
    dev.reachable = False
    run = harness.deploy("junos", "leaf2", 18830, JUNOS_NEW)
    assert run.outcome.failed["leaf2"] == "ConnectRefusedError: ConnectRefusedError(127.0.0.1)"
    assert dev.rpcs == [] and run.state("leaf2") == "failed"


# === NX-OS ========================================================================================
NX_RUNNING = recorded("nxos", "running_config.txt")
NX_NEW = NX_RUNNING.replace("mtu 9214", "mtu 9216")


def nxos(port: int = 18444) -> MockNxos:
    dev = MockNxos("leaf3", nx_lines(NX_RUNNING))
    MOCK_NXOS[port] = dev
    return dev


def test_nxos_without_a_device_timer_is_refused_and_nothing_is_committed(harness: Harness) -> None:
    dev = nxos()
    run = harness.deploy("nxos", "leaf3", 18444, NX_NEW)
    assert run.outcome.failed["leaf3"].startswith("NoConfirmTimer: NXOSDriver has no device-side confirm timer")
    assert "a deploy that dies after the commit then leaves the change applied" in run.outcome.failed["leaf3"]
    # The diff was still shown; no checkpoint, no rollback-to-candidate, no save; the candidate file deleted.
    assert run.file("leaf3", "diff.txt") == "  no mtu 9214\n  mtu 9216"
    assert not [c for c in dev.log if c.startswith(("rollback running-config", "checkpoint file rollback", "copy run"))]
    assert "candidate_config.txt" not in dev.files and dev.running == nx_lines(NX_RUNNING)


def test_nxos_client_confirm_commits_plainly_and_confirms_without_a_device_call(harness: Harness) -> None:
    dev = nxos()
    run = harness.deploy("nxos", "leaf3", 18444, NX_NEW, confirm_mode="client")
    assert run.outcome.ok and run.outcome.changed == ["leaf3"], run.outcome
    log = dev.log
    i = log.index("checkpoint file rollback_config.txt")
    replace = ["terminal dont-ask", "rollback running-config file candidate_config.txt", "no terminal dont-ask"]
    assert log[i + 2 : i + 5] == replace
    assert log[i + 5] == "copy run startup-config"
    assert "show interface" in log[i:]  # the post-check ran after the commit
    assert "  mtu 9216" in dev.running and dev.startup == dev.running
    assert any("WITHOUT a device timer" in m for k, _, m in run.events if k == "note")
    assert run.state("leaf3") == "confirmed"


def test_nxos_client_confirm_failed_checks_roll_back_to_the_checkpoint(harness: Harness) -> None:
    dev = nxos()
    run = harness.deploy("nxos", "leaf3", 18444, NX_NEW.replace("  no shutdown", "  shutdown"), confirm_mode="client")
    assert run.outcome.rolled_back == ["leaf3"]
    assert run.outcome.failed["leaf3"] == "post-checks failed: Ethernet1/1 is_up=False mtu=9216"
    log = dev.log
    i = log.index("dir rollback_config.txt")
    assert log[i + 1 : i + 3] == ["rollback running-config file rollback_config.txt", "copy run startup-config"]
    # The proof after it: the backup copied over again and diffed against a fresh checkpoint (empty).
    assert log[i + 3 :].count("show diff rollback-patch file sot_file file candidate_config.txt") == 1
    assert dev.running == nx_lines(NX_RUNNING) and run.state("leaf3") == "rolled_back"


def test_nxos_commit_error_leaves_running_unchanged(harness: Harness) -> None:
    dev = nxos()
    run = harness.deploy("nxos", "leaf3", 18444, NX_NEW + "bogus command\n", confirm_mode="client")
    assert run.outcome.failed["leaf3"].startswith("NXAPICommandError: The command")
    assert "Rollback failed." in run.outcome.failed["leaf3"]
    assert dev.running == nx_lines(NX_RUNNING) and "candidate_config.txt" not in dev.files


def test_nxos_scp_failure_is_a_rejected_load(harness: Harness) -> None:
    dev = nxos()
    dev.scp_ok = False
    run = harness.deploy("nxos", "leaf3", 18444, NX_NEW, confirm_mode="client")
    assert run.outcome.failed["leaf3"].startswith("ReplaceConfigException: Could not transfer file.")
    assert not [c for c in dev.log if c.startswith(("rollback", "checkpoint file rollback"))]


def test_nxos_connection_failure_fails_before_any_change(harness: Harness) -> None:
    dev = nxos()
    dev.reachable = False
    run = harness.deploy("nxos", "leaf3", 18444, NX_NEW, confirm_mode="client")
    assert run.outcome.failed["leaf3"] == "ConnectionException: Cannot connect to 127.0.0.1"
    assert run.state("leaf3") == "failed"
