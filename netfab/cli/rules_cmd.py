"""`netfab rules [RULE_ID]`: every id a reporting verb (lint, verify, audit, analyze) can report, or one explained.

The catalogue is the rules each verb hands its reports (the same RuleInfo feeds SARIF's rule metadata and
JUnit's cases), so what `netfab rules` says is what a CI annotation links to. docs/rules.md is this command's
markdown output, kept current by a test.
"""

from __future__ import annotations

import difflib
import json
import sys
from dataclasses import dataclass
from enum import StrEnum

import typer

from netfab.core.exitcodes import ExitCode
from netfab.core.findings import RuleInfo


class RulesFormat(StrEnum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


class Verb(StrEnum):
    LINT = "lint"
    VERIFY = "verify"
    AUDIT = "audit"
    ANALYZE = "analyze"
    HEALTH = "health"
    SOT = "sot"


@dataclass(frozen=True, slots=True)
class RuleDoc:
    """One catalogue entry: a rule and the verb that reports it."""

    verb: str
    rule: RuleInfo


def register(app: typer.Typer) -> None:
    app.command("rules")(rules)


def rules(
    rule_id: str | None = typer.Argument(None, metavar="RULE_ID", help="Explain this rule (e.g. QOS004)."),
    verb: Verb | None = typer.Option(None, "--verb", help="Only the rules of this verb."),
    fmt: RulesFormat = typer.Option(RulesFormat.TEXT, "--format", "-f", help="Output format."),
) -> None:
    """List every rule id lint, verify, audit, analyze, health and sot can report, or explain one: severity,
    title, docs, fix."""
    docs = rule_docs(verb.value if verb else None)
    if rule_id is not None:
        docs = [_find(rule_id, rule_docs())]
        if fmt is RulesFormat.TEXT:
            sys.stdout.write(explain(docs[0]))
            return
    render = {RulesFormat.TEXT: render_text, RulesFormat.JSON: render_json, RulesFormat.MARKDOWN: render_markdown}
    sys.stdout.write(render[fmt](docs))


def _find(rule_id: str, docs: list[RuleDoc]) -> RuleDoc:
    by_id = {d.rule.id.lower(): d for d in docs}
    found = by_id.get(rule_id.strip().lower())
    if found is not None:
        return found
    close = difflib.get_close_matches(rule_id.upper(), [d.rule.id for d in docs], n=3, cutoff=0.6)
    maybe = f"; did you mean {' or '.join(close)}?" if close else ""
    typer.echo(f"netfab rules: no rule {rule_id!r}{maybe} (`netfab rules` lists them all)", err=True)
    raise typer.Exit(ExitCode.USAGE)


def rule_docs(verb: str | None = None) -> list[RuleDoc]:
    """Every rule of every reporting verb, in verb order (lint, verify, audit, analyze, health, sot), each verb's
    own order."""
    from netfab.analyze.report import RULES as ANALYZE_RULES
    from netfab.audit.report.findings import RULES as AUDIT_RULES
    from netfab.health.report import RULES as HEALTH_RULES
    from netfab.lint import rule_infos
    from netfab.sot.findings import RULES as SOT_RULES
    from netfab.verify.checks import RULES as VERIFY_RULES

    catalogue = {
        Verb.LINT: rule_infos(),
        Verb.VERIFY: list(VERIFY_RULES),
        Verb.AUDIT: list(AUDIT_RULES),
        Verb.ANALYZE: list(ANALYZE_RULES),
        Verb.HEALTH: list(HEALTH_RULES),
        Verb.SOT: list(SOT_RULES),
    }
    return [RuleDoc(v.value, r) for v, infos in catalogue.items() if verb in (None, v.value) for r in infos]


def explain(d: RuleDoc) -> str:
    lines = [
        f"{d.rule.id}: {d.rule.title}",
        f"reported by netfab {d.verb}, severity {d.rule.severity.value}",
        "",
        d.rule.doc.strip(),
    ]
    if d.rule.hint:
        lines += ["", f"Fix: {d.rule.hint}."]
    return "\n".join(lines).rstrip() + "\n"


def render_text(docs: list[RuleDoc]) -> str:
    lines = []
    for d in docs:
        lines.append(f"{d.rule.id:<18} {d.verb:<8} {d.rule.severity.value:<8} {d.rule.title}")
        lines.append(f"{'':<37}{d.rule.summary}")
    return "\n".join(lines) + "\n"


def render_json(docs: list[RuleDoc]) -> str:
    items = [
        {
            "id": d.rule.id,
            "verb": d.verb,
            "severity": d.rule.severity.value,
            "title": d.rule.title,
            "hint": d.rule.hint,
            "doc": d.rule.doc.strip(),
        }
        for d in docs
    ]
    return json.dumps(items, indent=2, ensure_ascii=False) + "\n"


_VERB_INTRO = {
    "lint": "Every id `netfab lint` can report (and every verb that lints the intent first). Errors fail the run "
    "(exit 1); warnings fail it only with `--strict`; notes never do.",
    "verify": "The checks `netfab verify` (and a deploy wave's post-checks) run against the live fabric. Each "
    "result is pass, fail, skip (the platform's driver cannot show it) or error (the check could not run).",
    "audit": "The drift areas `netfab audit` reports: the running config differs from what the intent renders.",
    "analyze": "What `netfab analyze` reports about a design (and, with `--lab`, about the lab against the model).",
    "health": "What `netfab health` finds in the fabric's counters: the tail (slow-but-up links against their peers), "
    "pause storms and their root, and the RoCE checks. A device that could not be read makes the run exit 2.",
    "sot": "What `netfab sot push` changes in NetBox (notes) or cannot change, and every difference `netfab sot "
    "pull` finds between what NetBox records as built and the plan.",
}


def render_markdown(docs: list[RuleDoc]) -> str:
    out = [
        "# netfab rules",
        "",
        "<!-- Generated by `netfab rules --format markdown > docs/rules.md`; do not edit by hand. -->",
        "",
        "Every rule id a reporting verb can put in a report; `netfab rules RULE_ID` explains one.",
    ]
    verbs = list(dict.fromkeys(d.verb for d in docs))
    for verb in verbs:
        mine = [d for d in docs if d.verb == verb]
        out += ["", f"## netfab {verb}", "", _VERB_INTRO[verb], "", "| id | severity | title |", "|---|---|---|"]
        out += [f"| [{d.rule.id}](#{d.rule.id.lower()}) | {d.rule.severity.value} | {d.rule.title} |" for d in mine]
        for d in mine:
            out += ["", f"### {d.rule.id}", "", f"**{d.rule.title}** ({d.rule.severity.value})", "", d.rule.doc.strip()]
            if d.rule.hint:
                out += ["", f"Fix: {d.rule.hint}."]
    return "\n".join(out) + "\n"
