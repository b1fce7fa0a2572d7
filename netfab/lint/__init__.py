"""Lint: everything that can be known wrong about an intent before a device list exists.

`lint_paths(paths)` loads the YAML (netfab.load), validates it against the Intent schema, and runs every rule
in netfab.lint.rules against the Intent with each tier's platform capabilities. Rules are small declarative
classes (netfab.lint.rule.Rule); `netfab rules` and docs/rules.md are generated from them.
"""

from netfab.lint.api import INTERNAL_RULE_ID, LintResult, lint_paths, lint_source, rule_infos, run_rules
from netfab.lint.context import LintContext
from netfab.lint.registry import RuleRegistry, default_registry
from netfab.lint.rule import Rule

__all__ = [
    "INTERNAL_RULE_ID",
    "LintContext",
    "LintResult",
    "Rule",
    "RuleRegistry",
    "default_registry",
    "lint_paths",
    "lint_source",
    "rule_infos",
    "run_rules",
]
