"""hier_config drivers for the audit: the stock EOS/NX-OS/Junos rules plus netfab's, and one for FRR.

Stock rules negate a single-valued line before setting its new value (`no description old` then
`description new`; `no random-detect ecn ...` inside a tx-queue before the new thresholds; Junos
`delete ... mtu 1500` before `set ... mtu 9216`). The device replaces such a value in place, so the negation
is noise in a remediation and, for ECN, briefly turns marking off on a live lossless queue. The rules below
declare those lines idempotent: the new value simply replaces the old one. Drivers are data (rule lists),
as hier_config's own are; adding a knob is adding a rule.
"""

from __future__ import annotations

from functools import cache

from hier_config import Platform
from hier_config.constructors import get_hconfig_driver
from hier_config.models import IdempotentCommandsRule, MatchRule, SectionalExitingRule
from hier_config.platforms.driver_base import HConfigDriverBase, HConfigDriverRules


def _rule(*levels: str) -> IdempotentCommandsRule:
    """A lineage of matchers: 're:' prefix = regex (its groups form the identity), else startswith."""
    return IdempotentCommandsRule(
        match_rules=tuple(
            MatchRule(re_search=lvl[3:]) if lvl.startswith("re:") else MatchRule(startswith=lvl) for lvl in levels
        )
    )


EOS_RULES = (
    _rule("interface", "description"),
    _rule("interface", "mtu"),
    _rule("interface", "service-profile"),
    _rule("qos profile", "qos trust"),
    _rule("qos profile", r"re:^(?:uc-)?tx-queue \d+", "random-detect ecn"),
    _rule("qos profile", r"re:^(?:uc-)?tx-queue \d+", "bandwidth percent"),
    # `no priority` <-> `priority strict`: one knob, the `no ` form included
    _rule("qos profile", r"re:^(?:uc-)?tx-queue \d+", "re:^(?:no )?priority"),
    _rule(r"re:^priority-flow-control pause watchdog (default \S+|action) "),
    _rule(r"re:^ip load-sharing trident fields (ip|ipv6) "),
    _rule("router bgp", "router-id"),
    _rule("router bgp", "maximum-paths"),
    _rule("router bgp", r"re:^neighbor (\S+) remote-as "),
    _rule("router bgp", r"re:^neighbor (\S+) peer group \S"),
    _rule("router bgp", r"re:^neighbor interface (\S+) "),
)

NXOS_RULES = (
    _rule("interface", "description"),
    _rule("interface", "mtu"),
    _rule("interface", "priority-flow-control mode"),
    _rule("policy-map type queuing", "class type queuing", "random-detect"),
    _rule("policy-map type queuing", "class type queuing", "bandwidth remaining percent"),
    _rule("policy-map type network-qos", "class type network-qos", "mtu"),
    _rule("ip load-sharing address"),
    _rule("router bgp", "router-id"),
    _rule("router bgp", "address-family ipv4 unicast", "maximum-paths"),
    _rule("router bgp", "neighbor", "remote-as"),
    _rule("router bgp", "neighbor", "description"),
)

JUNOS_RULES = tuple(
    _rule("re:" + pattern)
    for pattern in (
        r"^set (system host-name) ",
        r"^set (interfaces \S+ (?:description|mtu)) ",
        r"^set (routing-options (?:router-id|autonomous-system)) ",
        r"^set (chassis maximum-ecmp) ",
        r"^set (forwarding-options enhanced-hash-key hash-seed) ",
        r"^set (class-of-service forwarding-classes class \S+ (?:queue-num|pfc-priority)) ",
        r"^set (class-of-service congestion-notification-profile \S+ pfc-watchdog \S+) ",
        r"^set (class-of-service schedulers \S+ transmit-rate) ",
        r"^set (protocols bgp group \S+ neighbor \S+ (?:description|peer-as)) ",
        r"^set (protocols bgp group \S+ type) ",
    )
)


def _extended(platform: Platform, extra: tuple[IdempotentCommandsRule, ...]) -> HConfigDriverBase:
    driver = get_hconfig_driver(platform)
    driver.rules = driver.rules.model_copy(update={"idempotent_commands": [*extra, *driver.rules.idempotent_commands]})
    return driver


class FRRHConfigDriver(HConfigDriverBase):
    """FRR 8 (frr.conf / vtysh): one-space indent, address families close with exit-address-family."""

    @staticmethod
    def _instantiate_rules() -> HConfigDriverRules:
        return HConfigDriverRules(
            indentation=1,
            sectional_exiting=[
                SectionalExitingRule(
                    match_rules=(MatchRule(startswith="router bgp"), MatchRule(startswith="address-family")),
                    exit_text="exit-address-family",
                ),
            ],
            idempotent_commands=[
                _rule("hostname"),
                _rule("frr defaults"),
                _rule("bgp route-map delay-timer"),
                _rule("interface", "description"),
                _rule("router bgp", "bgp router-id"),
                _rule("router bgp", "coalesce-time"),
                _rule("router bgp", r"re:^neighbor (\S+) remote-as "),
                _rule("router bgp", r"re:^neighbor (\S+) description "),
                _rule("router bgp", "address-family", "maximum-paths"),
            ],
        )


@cache
def driver_for(platform: str) -> HConfigDriverBase:
    """The audit's hier_config driver for a netfab platform with indented or set-form text."""
    if platform == "arista_eos":
        return _extended(Platform.ARISTA_EOS, EOS_RULES)
    if platform == "cisco_nxos":
        return _extended(Platform.CISCO_NXOS, NXOS_RULES)
    if platform == "juniper_junos":
        return _extended(Platform.JUNIPER_JUNOS, JUNOS_RULES)
    if platform in ("frr", "sonic-frr"):
        return FRRHConfigDriver()
    raise KeyError(f"no hier_config driver for {platform}")
