"""The shape of a lint rule: a small declarative class, ANTA-style.

Class attributes say what the rule is (stable id, default severity, title, generic hint); the docstring is its
documentation (with a YAML example of the bad and the fixed intent) and feeds `netfab rules` and docs/rules.md;
`check(ctx)` yields findings. A rule never raises on purpose and never stops other rules: the runner collects
every rule's findings and turns a crash into a LINT-INTERNAL finding.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar

from netfab.core.findings import Finding, Location, RuleInfo, Severity

if TYPE_CHECKING:
    from netfab.lint.context import DataPath, LintContext

RULE_ID = re.compile(r"^[A-Z]{2,5}\d{3}$")


class Rule:
    id: ClassVar[str]
    severity: ClassVar[Severity]
    title: ClassVar[str]
    hint: ClassVar[str] = ""
    needs_plan: ClassVar[bool] = False
    """True for rules that read ctx.plan (devices, cabling); they are skipped while there is no plan."""

    def check(self, ctx: LintContext) -> Iterable[Finding]:
        raise NotImplementedError

    def finding(
        self,
        ctx: LintContext,
        path: DataPath,
        message: str,
        *,
        hint: str | None = None,
        severity: Severity | None = None,
        related: Sequence[DataPath] = (),
    ) -> Finding:
        """A finding of this rule at intent field `path` (a YAML data path such as ('qos', 'classes', 1))."""
        from netfab.load import dotted

        return Finding(
            rule_id=self.id,
            severity=severity or self.severity,
            message=message,
            location=ctx.at(*path),
            hint=self.hint if hint is None else hint,
            path=dotted((*ctx.prefix, *path)),
            related=self._related(ctx, path, related),
        )

    @staticmethod
    def _related(ctx: LintContext, path: DataPath, related: Sequence[DataPath]) -> tuple[Location, ...]:
        # Only fields the user wrote: "see also" pointing at a parent key for a defaulted field is noise.
        here = ctx.at(*path)
        found: list[Location] = []
        for r in related:
            loc = ctx.at(*r)
            if ctx.written(*r) and loc != here and loc not in found:
                found.append(loc)
        return tuple(found)

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def rule_info(cls) -> RuleInfo:
        return RuleInfo(cls.id, cls.title, cls.severity, cls.doc(), hint=cls.hint)


def rule_problems(rule: type[Rule]) -> list[str]:
    """What is wrong with a rule class's declaration (empty when it is well-formed)."""
    problems = []
    name = rule.__name__
    if not RULE_ID.match(getattr(rule, "id", "")):
        problems.append(f"{name}: id must look like QOS001")
    if not isinstance(getattr(rule, "severity", None), Severity):
        problems.append(f"{name}: severity must be a Severity")
    if not getattr(rule, "title", ""):
        problems.append(f"{name}: title is empty")
    if "```yaml" not in rule.doc():
        problems.append(f"{name}: docstring needs a ```yaml example of the bad and the fixed intent")
    if rule.check is Rule.check:
        problems.append(f"{name}: check() is not implemented")
    return problems
