"""`lint_paths`: load -> schema -> semantic rules, collecting every finding on the way.

Each stage runs only when the previous one produced something to check: unreadable YAML stops at load (exit 2),
schema errors stop before the semantic rules (they need a valid Intent), and every rule runs on its own so one
rule's crash is that rule's LINT-INTERNAL finding, not the end of the run.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from netfab.core.exitcodes import ExitCode
from netfab.core.findings import Finding, Location, RuleInfo, Severity, Status, has_errors, sorted_findings
from netfab.lint.registry import RuleRegistry, default_registry

if TYPE_CHECKING:
    from netfab.intent import Intent
    from netfab.lint.context import LintContext
    from netfab.load import IntentSource

INTERNAL_RULE_ID = "LINT-INTERNAL"


@dataclass
class LintResult:
    findings: list[Finding]
    intent: Intent | None
    exit_code: ExitCode
    files: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Ids of rules that did not run (needs_plan without a plan)."""


def lint_paths(
    paths: Sequence[Path | str], strict: bool = False, registry: RuleRegistry | None = None, plan: Any = None
) -> LintResult:
    from netfab.load import load_intent_source

    source = load_intent_source([Path(p) for p in paths])
    return lint_source(source, strict=strict, registry=registry, plan=plan)


def lint_source(
    source: IntentSource, strict: bool = False, registry: RuleRegistry | None = None, plan: Any = None
) -> LintResult:
    findings = list(source.findings)
    files = list(source.files)
    if source.unreadable:
        return LintResult(sorted_findings(findings), None, ExitCode.USAGE, files)
    intent, schema = validate(source)
    findings += schema
    if intent is None:
        return LintResult(sorted_findings(findings), None, _exit_code(findings, strict), files)

    from netfab.lint.context import LintContext

    try:
        ctx = LintContext.build(intent, source, plan)
    except Exception as exc:  # capability data broken: a packaging bug, reported like a crashed rule
        findings.append(_internal("capabilities", exc, _root(source)))
        return LintResult(sorted_findings(findings), intent, ExitCode.INTERNAL, files)
    rule_findings, skipped = run_rules(registry or default_registry(), ctx)
    findings += rule_findings
    # Every other network of the cluster is linted as the complete intent it is (its own tiers, QoS and
    # pools), with findings located in its section. Cross-network rules read ctx.cluster on the root pass.
    for view in intent.network_views()[1:]:
        try:
            net_ctx = LintContext.build(view.intent, source, prefix=view.path, root=intent)
        except Exception as exc:
            findings.append(_internal("capabilities", exc, _root(source)))
            return LintResult(sorted_findings(findings), intent, ExitCode.INTERNAL, files)
        net_findings, _ = run_rules(registry or default_registry(), net_ctx)
        findings += net_findings
    return LintResult(sorted_findings(findings), intent, _exit_code(findings, strict), files, skipped)


def validate(source: IntentSource) -> tuple[Intent | None, list[Finding]]:
    from pydantic import ValidationError

    from netfab.intent import Intent
    from netfab.intent.retired import retired_finding
    from netfab.load.schema_errors import validation_findings

    try:
        return Intent.model_validate(source.data), []
    except ValidationError as err:
        return None, [retired_finding(f) for f in validation_findings(err, source, Intent)]


def run_rules(registry: RuleRegistry, ctx: LintContext) -> tuple[list[Finding], list[str]]:
    """Every rule's findings; a crashing rule yields one LINT-INTERNAL finding and the others still run."""
    findings: list[Finding] = []
    skipped: list[str] = []
    for rule_cls in registry:
        if rule_cls.needs_plan and ctx.plan is None:
            skipped.append(rule_cls.id)
            continue
        try:
            findings.extend(_checked(rule_cls().check(ctx)))
        except Exception as exc:
            findings.append(_internal(rule_cls.id, exc, ctx.at()))
    return findings, skipped


def _checked(found: Iterable[Finding]) -> list[Finding]:
    # Materialise inside the try: rules are generators, so they fail while being iterated, not when called.
    return list(found)


def _internal(what: str, exc: Exception, where: Location) -> Finding:
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    origin = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return Finding(
        INTERNAL_RULE_ID,
        Severity.ERROR,
        f"lint rule {what} crashed: {type(exc).__name__}: {exc}{origin}",
        where,
        "this is a bug in netfab, not in your intent; the other rules still ran. Please report it.",
        status=Status.ERROR,  # the rule's answer is unknown, which is not a failure of the intent
    )


def _root(source: IntentSource) -> Location:
    return source.source_map.locate(())


def _exit_code(findings: list[Finding], strict: bool) -> ExitCode:
    if any(f.rule_id == INTERNAL_RULE_ID for f in findings):
        return ExitCode.INTERNAL
    return ExitCode.FINDINGS if has_errors(findings, strict) else ExitCode.OK


def rule_infos(registry: RuleRegistry | None = None) -> list[RuleInfo]:
    """Metadata for every id a lint run can report: load/schema rules, semantic rules, LINT-INTERNAL."""
    from netfab.intent.retired import REMOVED_RULE_ID
    from netfab.load import RULES as LOAD_RULES

    internal = RuleInfo(
        INTERNAL_RULE_ID,
        "Lint rule crashed",
        Severity.ERROR,
        "A lint rule raised an exception. This is a bug in netfab; the other rules still ran.",
    )
    removed = RuleInfo(
        REMOVED_RULE_ID,
        "Removed field",
        Severity.ERROR,
        "The intent sets a field netfab no longer accepts; the message says why and what replaces it.",
    )
    return [*LOAD_RULES, removed, *(r.rule_info() for r in (registry or default_registry())), internal]
