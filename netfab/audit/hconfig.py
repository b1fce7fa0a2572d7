"""hier_config drivers for the audit, built from each platform record's `cli.hconfig` rules.

A record either extends a stock hier_config driver (EOS, NX-OS, Junos) with netfab's rules or, where
hier_config has none (FRR), describes a driver of its own (indentation, sectional exits). The rules are data,
as hier_config's own drivers are: stock rules negate a single-valued line before setting its new value, and
the records declare such lines idempotent so a remediation replaces the value in place (see the records'
comments for why that matters on a live lossless queue). Adding a knob is adding a rule to a record.
"""

from __future__ import annotations

from functools import cache

from hier_config import Platform
from hier_config.constructors import get_hconfig_driver
from hier_config.models import IdempotentCommandsRule, MatchRule, SectionalExitingRule
from hier_config.platforms.driver_base import HConfigDriverBase, HConfigDriverRules

from netfab.platforms import Registry, registry
from netfab.platforms.model import HConfigRules


def _match(level: str) -> MatchRule:
    """'re:' prefix = regex (its groups form the identity), else startswith."""
    return MatchRule(re_search=level[3:]) if level.startswith("re:") else MatchRule(startswith=level)


def _idempotent(rules: HConfigRules) -> list[IdempotentCommandsRule]:
    return [IdempotentCommandsRule(match_rules=tuple(_match(lvl) for lvl in lineage)) for lineage in rules.idempotent]


class _RecordDriver(HConfigDriverBase):
    """A hier_config driver made only of a record's rules (platforms hier_config does not ship)."""

    def __init__(self, rules: HConfigRules) -> None:
        self._record_rules = rules
        super().__init__()

    def _instantiate_rules(self) -> HConfigDriverRules:  # type: ignore[override]
        rules = self._record_rules
        return HConfigDriverRules(
            indentation=rules.indentation,
            sectional_exiting=[
                SectionalExitingRule(match_rules=tuple(_match(m) for m in s.match), exit_text=s.exit)
                for s in rules.sectional_exiting
            ],
            idempotent_commands=_idempotent(rules),
        )


@cache
def _driver(reg: Registry, platform: str) -> HConfigDriverBase:
    cli = reg.spec(platform).cli
    if cli is None:
        raise KeyError(f"platform {platform!r} has no cli: section, so no hier_config driver")
    rules = cli.hconfig
    if rules.stock is None:
        return _RecordDriver(rules)
    driver = get_hconfig_driver(Platform[rules.stock.upper()])
    driver.rules = driver.rules.model_copy(
        update={"idempotent_commands": [*_idempotent(rules), *driver.rules.idempotent_commands]}
    )
    return driver


def driver_for(platform: str) -> HConfigDriverBase:
    """The audit's hier_config driver for a platform whose record has a cli: section."""
    return _driver(registry(), platform)
