"""Arista EOS against Arista's own generator, pyavd (eos_cli_config_gen): the QoS, PFC, watchdog, ECN and
load-balance blocks of a rendered .cfg are read back into AVD structured config, validated with pyavd's own schema
validator, rendered by pyavd, and compared statement by statement with netfab's text.

The check fails when netfab writes a statement AVD has no model of inside those blocks (nothing in the reading
maps it), a value AVD's schema refuses (a probability of 0, an ECN unit EOS lacks, a watchdog action a qos
profile cannot take), or a statement AVD renders differently (another keyword, another number format, a line
netfab drops or adds). What it does not judge: statement order (EOS accepts a block's statements in any order;
AVD prints the running-config order, so an ordering difference is a diff-noise question, not an acceptance one);
the interface, BGP and system blocks (only that every `service-profile` names a rendered qos profile); and
`ip load-sharing trident fields ...`, which eos_cli_config_gen has no key for (NOT_MODELLED: reported per file as
`not judged`, never as valid). pyavd's models follow current EOS, not a named release, so every release's file
is held to the same model.

Cost: pyavd validates and renders one structured config in ~40 ms. The verdict is a pure function of the
extracted blocks (plus the profile names interfaces reference), so it is computed once per distinct extract:
a fabric's hundreds of devices have a handful (one per role and port mix), whatever the fabric's size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

MODEL = "pyavd"
NOT_MODELLED = ("ip load-sharing ",)
"""Top-level statements eos_cli_config_gen has no key for: excluded from the comparison, named in the docstring."""
_JUDGED_TOP = ("qos ", "priority-flow-control", "load-balance", *NOT_MODELLED)


def missing() -> str | None:
    try:
        import pyavd  # noqa: F401
    except ImportError:
        return "pyavd is not installed (pip install -e '.[test]')"
    return None


@cache
def model_label() -> str:
    import pyavd

    return f"{MODEL} {pyavd.__version__}"


@dataclass
class Stmt:
    line: str
    children: list[Stmt] = field(default_factory=list)


def parse(text: str) -> list[Stmt]:
    """EOS config text as a tree by 3-space indentation; `!` separators dropped, `!!` comments kept."""
    roots: list[Stmt] = []
    stack: list[tuple[int, Stmt]] = []
    for raw in text.splitlines():
        body = raw.strip()
        if not body or (body.startswith("!") and not body.startswith("!!")):
            continue
        depth = len(raw) - len(raw.lstrip(" "))
        node = Stmt(body)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(node)
        stack.append((depth, node))
    return roots


def extract(text: str) -> tuple[str, frozenset[str]]:
    """The judged top-level blocks, as canonical text, and the qos profiles interfaces bind."""
    out: list[str] = []

    def emit(s: Stmt, depth: int) -> None:
        out.append("   " * depth + s.line)
        for c in s.children:
            emit(c, depth + 1)

    bound: set[str] = set()
    for s in parse(text):
        if s.line.startswith(_JUDGED_TOP):
            emit(s, 0)
        elif s.line.startswith("interface "):
            bound.update(c.line.split()[1] for c in s.children if c.line.startswith("service-profile "))
    return "\n".join(out), frozenset(bound)


class _Unread(Exception):
    pass


_ECN = re.compile(
    r"random-detect ecn minimum-threshold (\d+) (\w+) maximum-threshold (\d+) (\w+)"
    r"(?: max-mark-probability (\d+))?(?: weight (\d+))?$"
)
_WD_DEFAULT = re.compile(
    r"priority-flow-control pause watchdog default (timeout|recovery-time|polling-interval) (\S+)$"
)


def _queue(s: Stmt) -> dict[str, Any]:
    keyword, qid = s.line.split()
    q: dict[str, Any] = {"id": int(qid)}
    for c in s.children:
        if c.line.startswith("!!"):
            q["comment"] = c.line[2:].strip()
        elif c.line in ("priority strict", "no priority"):
            q["priority"] = c.line
        elif m := re.fullmatch(r"bandwidth (guaranteed )?percent (\d+)", c.line):
            q["bandwidth_guaranteed_percent" if m.group(1) else "bandwidth_percent"] = int(m.group(2))
        elif m := re.fullmatch(r"shape rate (\d+ percent)", c.line):
            q["shape"] = {"rate": m.group(1)}  # qos_profiles[].tx_queues[].shape.rate, "1-100 percent"
        elif m := _ECN.match(c.line):
            if m.group(2) != m.group(4):
                raise _Unread(f"{c.line}: minimum and maximum in different units (AVD has one unit)")
            threshold: dict[str, Any] = {"units": m.group(2), "min": int(m.group(1)), "max": int(m.group(3))}
            if m.group(5) is not None:
                threshold["max_probability"] = int(m.group(5))
            if m.group(6) is not None:
                threshold["weight"] = int(m.group(6))
            q["random_detect"] = {"ecn": {"threshold": threshold}}
        else:
            raise _Unread(f"{keyword} {qid}: {c.line}")
    return q


def _profile(s: Stmt) -> dict[str, Any]:
    profile: dict[str, Any] = {"name": s.line.split()[2]}
    pfc: dict[str, Any] = {}
    queues: dict[str, list[dict[str, Any]]] = {}
    for c in s.children:
        keyword = c.line.split()[0]
        if keyword in ("tx-queue", "uc-tx-queue", "mc-tx-queue"):
            queues.setdefault(keyword.replace("-", "_") + "s", []).append(_queue(c))
        elif m := re.fullmatch(r"qos trust (\S+)", c.line):
            profile["trust"] = m.group(1)
        elif c.line == "priority-flow-control on":
            pfc["enabled"] = True
        elif c.line == "no priority-flow-control":
            pfc["enabled"] = False
        elif m := re.fullmatch(r"priority-flow-control priority (\d+) (no-drop|drop)", c.line):
            pfc.setdefault("priorities", []).append({"priority": int(m.group(1)), "no_drop": m.group(2) == "no-drop"})
        elif c.line == "priority-flow-control pause watchdog":
            pfc.setdefault("watchdog", {})["enabled"] = True
        elif m := re.fullmatch(r"priority-flow-control pause watchdog port action (\S+)", c.line):
            pfc.setdefault("watchdog", {"enabled": True})["action"] = m.group(1)
        else:
            raise _Unread(f"qos profile {profile['name']}: {c.line}")
    profile.update(queues)
    if pfc:
        profile["priority_flow_control"] = pfc
    return profile


def _load_balance(s: Stmt) -> dict[str, Any]:
    profiles = []
    for c in s.children:
        m = re.fullmatch(r"load-balance sand profile (\S+)", c.line)
        if not m:
            raise _Unread(f"load-balance policies: {c.line}")
        prof: dict[str, Any] = {"name": m.group(1)}
        for f in c.children:
            fm = re.fullmatch(r"fields udp dst-port (\d+)", f.line)
            if not fm:
                raise _Unread(f"sand profile {m.group(1)}: {f.line}")
            udp: dict[str, Any] = {"dst_port": int(fm.group(1))}
            for g in f.children:
                if pm := re.fullmatch(r"payload bytes (\S+)", g.line):
                    udp["payload_bytes"] = pm.group(1)
                else:
                    raise _Unread(f"fields udp: {g.line}")
            prof["fields"] = {"udp": udp}
        profiles.append(prof)
    return {"policies": {"sand_profiles": profiles}}


_WD_KEY = {"timeout": "timeout", "recovery-time": "recovery_time", "polling-interval": "polling_interval"}


def structured_config(extract_text: str) -> tuple[dict[str, Any], list[str]]:
    """AVD structured config for the extract, and the statements that map to no AVD key (each a problem)."""
    config: dict[str, Any] = {"hostname": "netfab-oracle"}
    unread: list[str] = []
    for s in parse(extract_text):
        try:
            if s.line.startswith(NOT_MODELLED):
                continue
            if m := re.fullmatch(r"qos map (dscp|cos|traffic-class|exp) (.+)", s.line):
                kind = m.group(1).replace("-", "_")
                config.setdefault("qos", {}).setdefault("map", {}).setdefault(kind, []).append(m.group(2))
            elif s.line.startswith("qos profile "):
                config.setdefault("qos_profiles", []).append(_profile(s))
            elif m := _WD_DEFAULT.fullmatch(s.line):
                wd = config.setdefault("priority_flow_control", {}).setdefault("watchdog", {})
                wd[_WD_KEY[m.group(1)]] = m.group(2)
            elif m := re.fullmatch(r"priority-flow-control pause watchdog action (\S+)", s.line):
                config.setdefault("priority_flow_control", {}).setdefault("watchdog", {})["action"] = m.group(1)
            elif s.line == "priority-flow-control all off":
                config.setdefault("priority_flow_control", {})["all_off"] = True
            elif s.line == "load-balance policies":
                config["load_balance"] = _load_balance(s)
            else:
                raise _Unread(s.line)
            if s.children and not s.line.startswith(("qos profile ", "load-balance policies")):
                raise _Unread(f"{s.line}: unexpected sub-statements {[c.line for c in s.children]}")
        except _Unread as exc:
            unread.append(f"no AVD model for: {exc}")
    return config, unread


def _paths(stmts: list[Stmt], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    for s in stmts:
        here = (*prefix, s.line)
        found.append(here)
        found.extend(_paths(s.children, here))
    return found


@cache  # the verdict is a pure function of the extract: one pyavd run per distinct one (module docstring)
def judge_extract(extract_text: str, bound: frozenset[str]) -> list[str]:
    from pyavd import get_device_config, validate_structured_config

    config, problems = structured_config(extract_text)
    # read from the text: a profile with an unread statement is still rendered (its problem is that statement)
    profiles = {s.line.split()[2] for s in parse(extract_text) if s.line.startswith("qos profile ")}
    problems += [f"service-profile {name}: no such qos profile rendered" for name in sorted(bound - profiles)]
    result = validate_structured_config(config)
    problems += [
        f"pyavd schema: {'.'.join(str(p) for p in v.path)}: {v.message}" for v in result.validation_result.violations
    ]
    if problems:
        return problems
    avd = [s for s in parse(get_device_config(config)) if s.line.startswith(_JUDGED_TOP)]
    mine = [s for s in parse(extract_text) if not s.line.startswith(NOT_MODELLED)]
    theirs_paths, mine_paths = _paths(avd), _paths(mine)
    problems += [f"pyavd renders, netfab lacks: {' / '.join(p)}" for p in theirs_paths if p not in mine_paths]
    problems += [
        f"netfab writes, pyavd renders otherwise: {' / '.join(p)}" for p in mine_paths if p not in theirs_paths
    ]
    return problems


def errors(text: str) -> list[str]:
    return list(judge_extract(*extract(text)))


def not_judged(text: str) -> list[str]:
    """The statements of the file the oracle cannot judge (NOT_MODELLED)."""
    return [s.line for s in parse(text) if s.line.startswith(NOT_MODELLED)]
