"""The one home of secret redaction: what netfab writes, prints or logs passes through `redact`.

Three pattern tables, one per text format netfab handles (a text may mix them: a journal error can quote a
SONiC JSON patch, so `redact` applies all three unless told otherwise):

- CLI keyword lines (EOS, NX-OS, Junos, FRR): `secret sha512 <hash>`, `password 7 <x>`, `encrypted-password`,
  `authentication-key`, `message-digest-key N md5 <x>`, `key-string`, TACACS/RADIUS `key`, SNMP communities;
- JSON keys at any depth (SONiC `BGP_NEIGHBOR|<ip>.password`, TACPLUS `passkey`);
- YAML keys (NVUE `password:`, `hashed-password:`, `md5-key:`).

Some tables key their entries by the secret itself (SONiC `SNMP_COMMUNITY`, NVUE `readonly-community`, Junos
`snmp { community <name> ... }`): the entry's name is masked.

Every substitution keeps line count and line order, so `restore_secrets` can put values back into a masked
backup line by line. Whole keywords only: `enhanced-hash-key`, `hash-key`, `key-chain <name>` and NVUE's
`message-digest-key: 1` (a key id) stay, because a false mask in a drift diff hides real drift.
"""

from __future__ import annotations

import json
import logging
import re
import string
import traceback
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any, Final

MASK: Final = "********"


class Format(Enum):
    CLI = "cli"
    JSON = "json"
    YAML = "yaml"


ALL_FORMATS: Final = frozenset(Format)

# A keyword must start a word: not "-key" inside "enhanced-hash-key", not "password" inside "nopassword".
_W = r"(?<![\w-])"
# A CLI value: quoted (Junos "$9$..."), else up to whitespace or Junos' ';'.
_CLI_VALUE = r"(?P<value>\"[^\"\n]*\"|[^\s;]+)"
# Encryption-type tokens between the keyword and the value: IOS/EOS 0/5/7/8/9, EOS sha512, NX-OS 3.
_TYPE = r"(?:[ \t]+(?:[0-9]|sha512|sha256|md5|scrypt|pbkdf2))?"

CLI_PATTERNS: Final[tuple[re.Pattern[str], ...]] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        # EOS `username admin secret sha512 $6$..`, `enable secret 5 ..`, Junos `secret "$9$.."`
        rf"(?P<lead>{_W}secret{_TYPE}[ \t]+){_CLI_VALUE}",
        # `username x password 7 ..`, EOS/NX-OS/FRR `neighbor X password [7] ..`, FRR `password zebra`
        rf"(?P<lead>{_W}password{_TYPE}[ \t]+){_CLI_VALUE}",
        # Junos `encrypted-password "$6$.."`
        rf"(?P<lead>{_W}encrypted-password[ \t]+){_CLI_VALUE}",
        # OSPF `ip ospf authentication-key [7] ..`, Junos BGP/OSPF `(hello-)authentication-key "$9$.."`
        rf"(?P<lead>{_W}(?:hello-)?authentication-key{_TYPE}[ \t]+){_CLI_VALUE}",
        # OSPF `ip ospf message-digest-key 1 md5 [7] ..`
        rf"(?P<lead>{_W}message-digest-key[ \t]+\d+[ \t]+md5{_TYPE}[ \t]+){_CLI_VALUE}",
        # key chains `key-string [7] ..` (the chain's name after `key chain`/`key-chain` stays)
        rf"(?P<lead>{_W}key-string{_TYPE}[ \t]+){_CLI_VALUE}",
        rf"(?P<lead>{_W}pre-shared-key{_TYPE}[ \t]+){_CLI_VALUE}",
        # `tacacs-server host 10.0.0.1 key 7 ..`, `radius-server key ..`: a bare `key` only on these lines
        rf"(?P<lead>{_W}(?:tacacs|radius)-server\b[^\n]*?[ \t]key{_TYPE}[ \t]+){_CLI_VALUE}",
        # SNMP communities: EOS/NX-OS `snmp-server community X`, Junos set form `snmp community X`,
        # NVUE `nv set system snmp-server readonly-community X`
        rf"(?P<lead>{_W}(?:snmp-server|snmp)[ \t]+community[ \t]+){_CLI_VALUE}",
        rf"(?P<lead>{_W}readonly-community(?:-v6)?[ \t]+){_CLI_VALUE}",
    )
)

# Key names whose value is a secret, in JSON and YAML (case-insensitive, '-' or '_' separated).
_SECRET_KEY = (
    r"(?:[\w-]*[_-])?(?:password|passwd|passphrase|secret|passkey|psk)"
    r"|(?:hello[_-])?(?:auth|authentication|md5|pre[_-]shared|shared)[_-]key"
    r"|key[_-]string"
)
_JSON_STRING = r"\"(?:[^\"\\\n]|\\.)*\""

JSON_PATTERNS: Final[tuple[re.Pattern[str], ...]] = (
    re.compile(
        rf"(?P<lead>\"(?:{_SECRET_KEY})\"[ \t]*:[ \t]*)(?P<value>{_JSON_STRING}|-?\d+(?:\.\d+)?)",
        re.IGNORECASE,
    ),
)

YAML_PATTERNS: Final[tuple[re.Pattern[str], ...]] = (
    # Block style, also in a unified diff (`+    password: x`) and as a list item (`- password: x`).
    re.compile(
        rf"(?P<lead>^[ \t+\-]*['\"]?(?:{_SECRET_KEY})['\"]?[ \t]*:[ \t]+)"
        r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s#,}]+)",
        re.IGNORECASE | re.MULTILINE,
    ),
)

PATTERNS: Final[dict[Format, tuple[re.Pattern[str], ...]]] = {
    Format.CLI: CLI_PATTERNS,
    Format.JSON: JSON_PATTERNS,
    Format.YAML: YAML_PATTERNS,
}

# Tables whose entry NAMES are secrets (JSON/YAML): SONiC SNMP_COMMUNITY|<community>, NVUE
# system.snmp-server.readonly-community.<community>.
NAMED_BY_SECRET: Final = frozenset({"SNMP_COMMUNITY", "readonly-community", "readonly-community-v6"})
_KEY_LINE = re.compile(r"^(?P<indent>[ \t+\-]*)(?P<q>[\"']?)(?P<key>[^\"'\s:{}\[\],]+)(?P=q)[ \t]*:")
_JUNOS_SNMP_COMMUNITY = re.compile(r"^(?P<lead>[ \t+\-]*community[ \t]+)(?P<value>\"[^\"\n]*\"|[^\s;{]+)(?=\s*[;{])")

# Cheap pre-filter: a text holding none of these has nothing to mask (~50x faster than the patterns over a
# 70 KB spine config, and most audit inputs are such configs).
_ASCII_LOWER: Final = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_HINTS: Final = ("secret", "password", "passwd", "passphrase", "passkey", "psk", "key", "community")


def redact(text: str, secrets: Iterable[str] = (), formats: Iterable[Format] = ALL_FORMATS) -> str:
    """Mask known secret values anywhere, and every value that a secret-bearing keyword or key carries."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    lowered = text.translate(_ASCII_LOWER)  # same length as text (str.lower() is not, for some letters)
    if not any(hint in lowered for hint in _HINTS):
        return text
    wanted = frozenset(formats)
    tables = [
        (pattern, _MASKERS[fmt])
        for fmt in (Format.CLI, Format.JSON, Format.YAML)
        if fmt in wanted
        for pattern in PATTERNS[fmt]
    ]
    # Only the lines holding a hint, each on its own: every pattern is line-bound (no value spans lines), and
    # running a dozen patterns over all of a 70 KB config costs ~50x more than finding the few such lines.
    lines: dict[int, int] = {}
    for hint in _HINTS:
        at = lowered.find(hint)
        while at >= 0:  # str.find over the lowered text: C speed, unlike a case-insensitive regex scan
            start = lowered.rfind("\n", 0, at) + 1
            end = lowered.find("\n", at)
            end = len(lowered) if end < 0 else end
            lines[start] = end
            at = lowered.find(hint, end)
    parts: list[str] = []
    done = 0
    for start, end in sorted(lines.items()):
        line = text[start:end]
        for pattern, masker in tables:
            line = pattern.sub(masker, line)
        parts += [text[done:start], line]
        done = end
    text = "".join([*parts, text[done:]])
    if "community" in lowered:
        if wanted & {Format.JSON, Format.YAML}:
            text = _mask_secret_names(text)
        if Format.CLI in wanted:
            text = _mask_junos_snmp_communities(text)
    return text


def _mask_value(match: re.Match[str]) -> str:
    value = match.group("value")
    if value == MASK or value.strip("\"'") == MASK:
        return match.group(0)
    quote = value[0] if value[:1] in "\"'" and len(value) > 1 and value[-1] == value[0] else ""
    return match.group("lead") + (f"{quote}{MASK}{quote}" if quote else MASK)


def _mask_json_value(match: re.Match[str]) -> str:
    # A number masked bare would leave invalid JSON: the masked document must still parse.
    if match.group("value")[:1] == '"':
        return _mask_value(match)
    return f'{match.group("lead")}"{MASK}"'


def _mask_yaml_value(match: re.Match[str]) -> str:
    # Unquoted, `********` would be a YAML alias: the masked document would no longer parse.
    value = match.group("value")
    if value[:1] in "\"'" or value == MASK:
        return _mask_value(match)
    return f"{match.group('lead')}'{MASK}'"


_MASKERS: Final[dict[Format, Callable[[re.Match[str]], str]]] = {
    Format.CLI: _mask_value,
    Format.JSON: _mask_json_value,
    Format.YAML: _mask_yaml_value,
}


def _mask_secret_names(text: str) -> str:
    """Mask the entry names of NAMED_BY_SECRET tables, by indentation (pretty JSON, YAML, diffs of either);
    a compact one-line JSON document is handled through its parsed form."""
    lines = text.split("\n")
    stack: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        m = _KEY_LINE.match(line)
        if m is None:
            continue
        indent = len(m.group("indent"))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        key = m.group("key")
        if stack and stack[-1][1] in NAMED_BY_SECRET and key != MASK:
            # quoted in YAML too: an unquoted `********:` would be an alias
            mask = MASK if m.group("q") else f"'{MASK}'"
            lines[i] = line[: m.start("key")] + mask + line[m.end("key") :]
        stack.append((indent, key))
    text = "\n".join(lines)
    if any(f'"{name}"' in text for name in NAMED_BY_SECRET) and "\n" not in text.strip():
        try:
            doc = json.loads(text)
        except ValueError:
            return text
        for name in _names_under_secret_tables(doc):
            text = text.replace(json.dumps(name), json.dumps(MASK))
    return text


def _names_under_secret_tables(doc: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key in NAMED_BY_SECRET and isinstance(value, dict):
                found.update(str(k) for k in value if k != MASK)
            found |= _names_under_secret_tables(value)
    elif isinstance(doc, list):
        for value in doc:
            found |= _names_under_secret_tables(value)
    return found


def _mask_junos_snmp_communities(text: str) -> str:
    """Junos curly syntax: `snmp { community public { authorization read-only; } }` (braces, any depth)."""
    if "snmp" not in text:
        return text
    lines = text.split("\n")
    blocks: list[str] = []
    for i, line in enumerate(lines):
        body = line.lstrip(" \t+-")
        if "snmp" in blocks and (m := _JUNOS_SNMP_COMMUNITY.match(line)) and m.group("value") != MASK:
            lines[i] = _mask_value(m) + line[m.end() :]
        for char in body.split("#", 1)[0]:
            if char == "{":
                blocks.append(body.split("{", 1)[0].strip().split(" ", 1)[0])
            elif char == "}" and blocks:
                blocks.pop()
    return "\n".join(lines)


# --- putting secrets back: rollback pushes a journal backup, whose secrets are masked -------------------------


class MaskedSecret(RuntimeError):
    """A masked backup line whose value cannot be taken from the device: never push the mask."""


def restore_secrets(backup: str, running: str) -> str:
    """Put secret values back into a redacted backup, from the device's running config.

    A masked line takes the running line that redacts to exactly the same text under the same parent lines
    (same keyword, same object, same neighbor block): `neighbor 10.0.0.1 password ********` is matched only
    by neighbor 10.0.0.1's password. No such line, or two with different values, is refused: rollback then
    stops rather than push '********' (or another object's secret) as a password.
    """
    candidates: dict[tuple[tuple[str, ...], str], set[str]] = {}
    running_lines = running.splitlines()
    for (context, masked), original in zip(_with_context(redact(running).splitlines()), running_lines, strict=True):
        if masked != original:
            candidates.setdefault((context, masked), set()).add(original)
    out: list[str] = []
    for (context, line), kept in zip(_with_context(redact(backup).splitlines()), backup.splitlines(), strict=True):
        if MASK not in kept:
            out.append(kept)
            continue
        found = candidates.get((context, line), set())
        if len(found) != 1:
            why = "the device no longer has it" if not found else "the device has several values for it"
            raise MaskedSecret(
                f"the backup's line {line.strip()!r} carries a secret the journal does not store and {why}; "
                "restore that line by hand, then re-run the rollback"
            )
        out.append(found.pop())
    return "\n".join(out) + ("\n" if backup.endswith("\n") else "")


def _with_context(lines: list[str]) -> list[tuple[tuple[str, ...], str]]:
    """Each line with the (stripped) lines that enclose it by indentation: FRR/EOS blocks, Junos, JSON, YAML."""
    stack: list[tuple[int, str]] = []
    out: list[tuple[tuple[str, ...], str]] = []
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if stripped and not stripped.startswith(("!", "#")):
            while stack and stack[-1][0] >= indent:
                stack.pop()
        out.append((tuple(text for _, text in stack), line))
        if stripped and not stripped.startswith(("!", "#")):
            stack.append((indent, stripped))
    return out


# --- logs ----------------------------------------------------------------------------------------------------

SECRET_ENV: Final = ("NETFAB_NETBOX_TOKEN",)
"""Environment variables holding secrets besides deploy's credentials (netfab.deploy.credentials): their
values are masked in every log record and internal-error message (`netfab.cli.app.main`)."""


def env_secrets(environ: dict[str, str] | None = None) -> tuple[str, ...]:
    import os

    env = environ if environ is not None else os.environ
    return tuple(value for name in SECRET_ENV if (value := env.get(name, "").strip()))


def install_log_redaction(secrets: Iterable[str] = ()) -> None:
    """Redact every log record of the process when it is created (netfab's, Nornir's, paramiko's): a handler
    configured anywhere (an operator's logging config, pytest's caplog) then only ever sees masked text."""
    known = tuple(s for s in secrets if s)
    previous = logging.getLogRecordFactory()
    if getattr(previous, "netfab_redacting", False):
        previous = previous.netfab_inner  # type: ignore[attr-defined]

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a malformed record stays as logging would show it
            return record
        record.msg, record.args = redact(message, known), None
        if record.exc_info and record.exc_info[0] is not None:
            record.exc_text = redact("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"), known)
        return record

    redacting: Callable[..., logging.LogRecord] = factory
    redacting.netfab_redacting = True  # type: ignore[attr-defined]
    redacting.netfab_inner = previous  # type: ignore[attr-defined]
    logging.setLogRecordFactory(redacting)
