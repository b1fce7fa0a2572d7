"""`netfab lint` with the plan: design a lint-clean intent and run the rules that read the plan.

Lives in the CLI layer because it joins two pipeline stages: lint itself never imports design. A design
failure (a name template that gives two devices one name, a pool that runs out) becomes findings like any
rule's, located at the intent field the design names.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from netfab.core.exitcodes import ExitCode
from netfab.core.findings import has_errors, sorted_findings

if TYPE_CHECKING:
    from netfab.lint.api import LintResult
    from netfab.load import IntentSource


def with_plan(result: LintResult, source: IntentSource, strict: bool) -> LintResult:
    """`result` plus the plan rules' findings (or the design's), when the intent linted without errors."""
    from netfab.cli import teardown
    from netfab.design import DesignError, design
    from netfab.design.server_nics import BACKEND
    from netfab.lint.api import INTERNAL_RULE_ID, run_rules
    from netfab.lint.context import LintContext
    from netfab.lint.registry import RuleRegistry, default_registry

    if result.intent is None or has_errors(result.findings, strict=False):
        return result  # design needs a lint-clean intent; the intent's own errors come first
    source_file = str(source.files[0]) if source.files else "<intent>"
    try:
        # bgp=False: the plan rules read no BGP session; `netfab lint` exits right after, so no GC pass over the
        # plan and no freeing it (teardown.outliving).
        plan = teardown.outliving(design, result.intent, source_file, BACKEND, False)
    except DesignError as exc:
        ctx = LintContext.build(result.intent, source)
        added = exc.located(lambda path: ctx.at(*path))
        skipped = result.skipped  # no plan: the plan rules still did not run
    else:
        rules = RuleRegistry(r for r in default_registry() if r.needs_plan)
        added, skipped = run_rules(rules, LintContext.build(result.intent, source, plan))
    findings = sorted_findings([*result.findings, *added])
    if any(f.rule_id == INTERNAL_RULE_ID for f in findings):
        code = ExitCode.INTERNAL
    else:
        code = ExitCode.FINDINGS if has_errors(findings, strict) else ExitCode.OK
    return replace(result, findings=findings, exit_code=code, skipped=skipped)
