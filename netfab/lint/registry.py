"""The set of rules a lint run uses: an immutable value, so a test builds its own instead of patching a global."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cache

from netfab.lint.rule import Rule, rule_problems


class RuleRegistry:
    """Rules by id, in id order. Built from an explicit list; refuses malformed or duplicate rules."""

    def __init__(self, rules: Iterable[type[Rule]]) -> None:
        by_id: dict[str, type[Rule]] = {}
        problems: list[str] = []
        for rule in rules:
            problems.extend(rule_problems(rule))
            if rule.id in by_id and by_id[rule.id] is not rule:
                problems.append(f"{rule.__name__}: id {rule.id} is already used by {by_id[rule.id].__name__}")
            by_id[rule.id] = rule
        if problems:
            raise ValueError("invalid lint rules:\n  " + "\n  ".join(problems))
        self._rules = dict(sorted(by_id.items()))

    def __iter__(self) -> Iterator[type[Rule]]:
        return iter(self._rules.values())

    def __len__(self) -> int:
        return len(self._rules)

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self._rules

    def get(self, rule_id: str) -> type[Rule]:
        return self._rules[rule_id]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._rules)


@cache
def default_registry() -> RuleRegistry:
    """Every rule netfab ships (netfab.lint.rules), built once per process."""
    from netfab.lint.rules import all_rules

    return RuleRegistry(all_rules())
