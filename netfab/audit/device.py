"""Audit one device: each part of its build (config, companion file, kernel side) against what runs.

Per part: clean/parse both sides once (where the platform's facts stay inside one section, only the sections
whose text differs: textconfig.section_diff); if the canonical forms are equal the part is in sync (no further
parsing); otherwise reduce both to facts, compare, and only for drifted parts compute the platform's raw
diff and remediation. A running config that cannot be parsed makes the device unreadable, never a crash.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import yaml

from netfab.audit.compare import compare
from netfab.audit.facts import Part, linux, parts_of
from netfab.audit.facts import jsontree as jt
from netfab.audit.facts.cli import CliConfig, Defaults, parse_cli
from netfab.audit.intended import BuiltConfigs, intended_files
from netfab.audit.model import Collected, DeviceAudit, Facts, RawDiff
from netfab.audit.remediation import cli as cli_fix
from netfab.audit.remediation import frr as frr_fix
from netfab.audit.remediation import nvue as nvue_fix
from netfab.audit.remediation import sonic as sonic_fix
from netfab.audit.rules import AuditRules
from netfab.audit.textconfig import differing_sections, section_diff
from netfab.design.plan import DevicePlan

NO_DEFAULTS = Defaults()


class Unreadable(Exception):
    """The running side of a part cannot be parsed."""


def audit_device(
    dev: DevicePlan, collected: Collected, rules: AuditRules, built: BuiltConfigs | None = None
) -> DeviceAudit:
    if collected.error is not None:
        return DeviceAudit(dev.name, dev.platform, "unreadable", error=collected.error, origin=collected.origin)
    return audit_texts(dev.name, dev.platform, intended_files(dev, built), collected, rules)


def audit_texts(
    device: str,
    platform: str,
    intended: dict[str, str],
    collected: Collected,
    rules: AuditRules,
    remediate: bool = True,
) -> DeviceAudit:
    """The audit of one device from its intended files (by suffix) and what was collected from it.
    remediate=False: the drifts alone, no remediation and no raw diff. A build's summary of what changed needs
    no fix, and the fix (two hier_config trees and their diff) is ~60 % of auditing a large changed config."""
    out = DeviceAudit(device, platform, "in_sync", origin=collected.origin)
    if collected.error is not None:
        out.status, out.error = "unreadable", collected.error
        return out
    for part in parts_of(platform):
        text = intended.get(part.suffix)
        if text is None:
            continue
        try:
            if part.kind == "kernel":
                _kernel_part(out, text, collected.kernel)
                continue
            running = collected.files.get(part.suffix)
            if running is None:
                out.notes.append(f"{part.suffix} not collected: that part was not audited")
                continue
            if running == text:  # byte for byte the intended file (saved build outputs in CI): nothing to parse
                continue
            if part.kind == "cli":
                _cli_part(out, platform, part, running, text, rules, remediate)
            else:
                _json_part(out, platform, part, running, text, rules, remediate)
        except Unreadable as exc:
            out.status, out.error = "unreadable", f"running {part.suffix}: {exc}"
            return out
    out.status = "drift" if out.drifts else "in_sync"
    return out


def _prefixed(facts: Facts, prefix: str) -> Facts:
    return {f"{prefix}{k}": v for k, v in facts.items()} if prefix else facts


def _cli_part(
    out: DeviceAudit, platform: str, part: Part, running: str, intended: str, rules: AuditRules, remediate: bool
) -> None:
    assert part.dialect is not None
    # Where the platform's facts stay inside one top-level section, only the sections whose text differs are
    # cleaned and reduced to facts (textconfig.section_diff); the whole configs are parsed for a remediation.
    cut = None
    if part.module.SECTION_LOCAL:
        try:
            cut = section_diff(running, intended, part.dialect, rules)
        except Exception as exc:  # the running text is cut and cleaned here: what parse_cli would raise
            raise Unreadable(f"{type(exc).__name__}: {exc}") from exc
    have = want = None
    if cut is not None:
        if not cut.sections:
            return
        only: frozenset[str] | None = cut.sections
        have_lines, want_lines = cut.trees()
    else:
        have, want = _parsed(part, running, intended, rules)
        if have.canonical == want.canonical:
            return
        # Top-level sections whose lines are the same on both sides carry the same facts: where the platform's
        # facts stay inside one section, only the sections that differ are reduced to facts.
        only = differing_sections(have.cleaned, want.cleaned) if part.module.SECTION_LOCAL else None
        have_lines, want_lines = have.lines, want.lines
    try:
        actual = _prefixed(part.module.facts(have_lines, only), part.prefix)
    except Exception as exc:
        raise Unreadable(f"{type(exc).__name__}: {exc}") from exc
    drifts = compare(actual, _prefixed(part.module.facts(want_lines, only), part.prefix), part.module.DEFAULTS)
    if not drifts:
        return
    out.drifts.extend(drifts)
    if not remediate:
        return
    if have is None or want is None:
        have, want = _parsed(part, running, intended, rules)
    if part.remediation == "frr_reload":
        raw, files = frr_fix.remediate(have, want, intended, part.label)
    else:
        raw, files = cli_fix.remediate(out.device, part.suffix, part.dialect, have, want)
    out.raw.append(raw)
    out.remediation.update(files)


def _parsed(part: Part, running: str, intended: str, rules: AuditRules) -> tuple[CliConfig, CliConfig]:
    """Both whole configs cleaned (CliConfig: canonical form, and the trees on demand)."""
    assert part.dialect is not None
    try:
        have = parse_cli(part.syntax, part.dialect, running, rules)
    except Exception as exc:  # hier_config/preprocessor errors on text it cannot follow
        raise Unreadable(f"{type(exc).__name__}: {exc}") from exc
    return have, parse_cli(part.syntax, part.dialect, intended, rules)


def _json_part(
    out: DeviceAudit, platform: str, part: Part, running: str, intended: str, rules: AuditRules, remediate: bool
) -> None:
    module = part.module
    try:
        have: Any = module.parse(running)
    except (ValueError, json.JSONDecodeError, yaml.YAMLError) as exc:
        raise Unreadable(str(exc).splitlines()[0]) from exc
    want: Any = module.parse(intended)
    managed = jt.managed_roots(want, module.SHARED_ROOTS)

    def excluded(segs: jt.Segments) -> bool:
        return rules.pointer_excluded(platform, segs)

    actual, outside = jt.extract(have, module.SHAPE, managed, excluded)
    drifts = compare(actual, jt.extract(want, module.SHAPE, managed, excluded)[0], NO_DEFAULTS)
    if outside:
        out.notes.append("device-owned settings outside what netfab renders were not compared")
    if not drifts:
        return
    out.drifts.extend(drifts)
    if not remediate:
        return
    if part.remediation == "sonic_patch":
        raw, files = sonic_fix.remediate(have, want, excluded)
    else:
        raw, files = nvue_fix.remediate(have, want, lambda s: managed(s) and not excluded(s))
    out.raw.append(raw)
    out.remediation.update(files)


def _kernel_part(out: DeviceAudit, script: str, state: Mapping[str, Any] | None) -> None:
    if state is None:
        out.notes.append("kernel state not collected: ECMP hash, ECN marking and port MTUs were not audited")
        return
    try:
        actual = linux.model_from_state(state)
    except (KeyError, TypeError, ValueError) as exc:
        raise Unreadable(f"kernel state: {exc}") from exc
    intended = linux.model_from_script(script, state)
    linux.align_red(actual, intended)
    # the script owns the MTU of the ports it lists; management and other ports are the host's
    actual.mtu = {p: m for p, m in actual.mtu.items() if p in intended.mtu}
    if note := linux.mode_note(state):
        out.notes.append(note)
    drifts = compare(linux.facts(actual), linux.facts(intended), NO_DEFAULTS)
    if not drifts:
        return
    out.drifts.extend(drifts)
    out.kernel_drift = True
    out.raw.append(RawDiff("kernel", "\n".join(linux.native_diff(actual, intended))))
    out.remediation["host.sh"] = script
