"""textconfig.section_diff: cleaning only the sections whose text differs gives exactly what cleaning both whole
configs gives (the fleet audit's fast path where a platform's facts stay inside one section), or it declines.

Each case changes the running side of a real rendered config (EOS and FRR leaves of the lab); the answer is
compared with the whole-config computation, and the cases that must take the fast path are asserted to take it.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from audit_helpers import intended, run

from netfab.audit import device as audit_device
from netfab.audit.facts import parts_of
from netfab.audit.rules import AuditRules
from netfab.audit.textconfig import SEP, clean, section_diff, to_tree
from netfab.platforms.model import Dialect

Change = Callable[[str], str]


def _reverse_sections(text: str) -> str:
    """Top-level stanzas in reverse order without the comment lines, as a device may print them."""
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("!"):
            continue
        if not line[0].isspace() or not blocks:
            blocks.append([])
        blocks[-1].append(line)
    return "\n".join("\n".join(b) + "\n!" for b in reversed(blocks)) + "\n"


def _after_first(marker: str, extra: str) -> Change:
    """Insert `extra` after the first line that starts with `marker`."""

    def change(text: str) -> str:
        lines = text.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith(marker))
        return "\n".join([*lines[: at + 1], extra, *lines[at + 1 :]]) + "\n"

    return change


# (id, platform, change of the running text, True: the cut must answer / False: it must decline)
CASES: list[tuple[str, str, Change, bool]] = [
    ("same", "arista_eos", lambda t: t, True),
    ("comments-gone", "arista_eos", lambda t: "\n".join(x for x in t.splitlines() if not x.startswith("!")), True),
    ("sections-reversed", "arista_eos", _reverse_sections, True),
    ("ecn-weight-gone-and-reversed", "arista_eos", lambda t: _reverse_sections(t.replace(" weight 0\n", "\n")), True),
    ("one-value", "arista_eos", lambda t: t.replace("bandwidth percent 50", "bandwidth percent 40", 1), True),
    ("double-spaces", "arista_eos", lambda t: t.replace("   mtu ", "   mtu  ", 1), True),
    ("crlf", "arista_eos", lambda t: t.replace("priority strict", "no priority").replace("\n", "\r\n"), True),
    # "end" is dropped without closing the section: the line after it still belongs to the interface.
    ("end-inside", "arista_eos", _after_first("   mtu", "end\n   description after-end"), True),
    # lines before any top-level line, and a top-level comment between a section and more of its lines
    ("indented-first", "arista_eos", lambda t: "   stray line\n" + t, True),
    ("comment-inside", "arista_eos", _after_first("interface ", "! a comment\n   description below-comment"), True),
    # with `ip routing` unmanaged, the line after "end" belongs to the section open before it (cleaned whole)
    ("unmanaged-end-inside", "arista_eos", _after_first("ip routing", "end\n   description after-end"), True),
    ("form-feed", "arista_eos", lambda t: t.replace("ip routing", "ip routing\x0c"), False),
    # a section opened twice on one side only: the copy on both sides cannot be set aside
    ("repeated-section", "arista_eos", lambda t: t + "interface Ethernet1/1\n   description again\n", False),
    ("frr-neighbor-gone", "frr", lambda t: "\n".join(x for x in t.splitlines() if "remote-as" not in x), True),
    ("frr-reversed", "frr", _reverse_sections, True),
]


def _dialect(platform: str) -> tuple[str, Dialect]:
    part = next(p for p in parts_of(platform) if p.kind == "cli")
    assert part.dialect is not None
    return part.suffix, part.dialect


def _whole(have: str, want: str, dialect: Dialect, rules: AuditRules) -> tuple[frozenset[str], dict, dict]:
    a, b = clean(have, dialect, rules), clean(want, dialect, rules)
    return frozenset(x.split(SEP, 1)[0] for x in a.canonical ^ b.canonical), to_tree(a), to_tree(b)


@pytest.mark.parametrize("rules", [AuditRules(), AuditRules(unmanaged=("ip routing", "hostname"))], ids=["", "um"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_the_cut_gives_what_the_whole_configs_give(case: tuple[str, str, Change, bool], rules: AuditRules) -> None:
    _, platform, change, fast = case
    suffix, dialect = _dialect(platform)
    want = intended(platform)[suffix]
    have = change(want)
    cut = section_diff(have, want, dialect, rules)
    if not fast:
        assert cut is None
        return
    assert cut is not None
    sections, have_tree, want_tree = _whole(have, want, dialect, rules)
    assert cut.sections == sections
    cut_have, cut_want = cut.trees()
    for whole, part in ((have_tree, cut_have), (want_tree, cut_want)):
        assert {k: v for k, v in part.items() if k in sections} == {k: v for k, v in whole.items() if k in sections}
        assert set(part) == set(whole)  # every top-level line is there (FRR reads its defaults profile from them)


def test_a_changed_section_is_found_and_a_reordered_config_is_not_drift() -> None:
    suffix, dialect = _dialect("arista_eos")
    want = intended("arista_eos")[suffix]
    cut = section_diff(_reverse_sections(want.replace(" weight 0\n", "\n")), want, dialect, AuditRules())
    assert cut is not None and cut.sections == {"qos profile NETFAB-LOSSLESS"}
    assert len(cut.have.lines) < len(clean(want, dialect, AuditRules()).lines) / 2  # the rest was set aside
    cut = section_diff(_reverse_sections(want), want, dialect, AuditRules())
    assert cut is not None and cut.sections == frozenset()


AUDITS: list[tuple[str, str, Change, str]] = [
    ("eos-ecn-reversed", "arista_eos",
     lambda t: _reverse_sections(t.replace("maximum-threshold 1500 kbytes", "maximum-threshold 400 kbytes")), "drift"),
    ("eos-mtu", "arista_eos", lambda t: t.replace("   mtu 9214", "   mtu 1500", 1), "drift"),
    ("eos-neighbors-gone", "arista_eos", lambda t: "\n".join(x for x in t.splitlines() if "remote-as" not in x),
     "drift"),
    ("frr-neighbors-gone", "frr", lambda t: "\n".join(x for x in t.splitlines() if "remote-as" not in x), "drift"),
    ("frr-reversed", "frr", _reverse_sections, "in_sync"),
]  # fmt: skip


@pytest.mark.parametrize("case", AUDITS, ids=[c[0] for c in AUDITS])
def test_the_audit_reports_the_same_either_way(
    case: tuple[str, str, Change, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, platform, change, status = case
    suffix, _ = _dialect(platform)
    running = {**intended(platform), suffix: change(intended(platform)[suffix])}
    fast = run(platform, running)
    monkeypatch.setattr(audit_device, "section_diff", lambda *_: None)
    whole = run(platform, running)
    assert fast.status == status
    assert (fast.drifts, fast.raw, fast.remediation) == (whole.drifts, whole.raw, whole.remediation)
