"""FRR 8 frr.conf / `show running-config` -> facts (the frr platform, and SONiC's bgp container).

Covered semantically: hostname, defaults profile, interfaces (description, address), BGP (ASN, router-id,
peer groups, neighbors with interface/peer group/remote AS/description, networks, max paths per address
family). Other lines (route-maps, RA timers, multipath-relax, coalesce-time...) are catch-all facts.

What FRR hides: vtysh prints neither its banner nor values equal to the defaults profile in force
(`frr defaults datacenter` makes `bgp log-neighbor-changes` and `no bgp ebgp-requires-policy` the defaults,
verified on FRR 8.4), and it always adds `service integrated-vtysh-config`. Those are removed from both sides.
"""

from __future__ import annotations

from hier_config import HConfig

from netfab.audit.facts.cli import Defaults
from netfab.audit.facts.clitree import Tree, extract, rule, scope
from netfab.audit.model import PRESENT, Facts

_BGP = r"router bgp \d+(?: vrf \S+)?"


def _asn(text: str) -> int | str:
    return int(text) if text.isdigit() else text


def _af_key(af: str, leaf: str) -> str:
    return f"bgp.{leaf}" if af == "ipv4" else f"bgp.{af}.{leaf}"


RULES = (
    rule([r"hostname (\S+)"], lambda g: [("hostname", g[0])]),
    rule([r"frr defaults (\S+)"], lambda g: [("frr.defaults", g[0])]),
    rule([r"interface (\S+)"], lambda g: [(f"interface[{g[0]}]", PRESENT)]),
    rule([r"interface (\S+)", r"description (.*)"], lambda g: [(f"interface[{g[0]}].description", g[1])]),
    rule([r"interface (\S+)", r"ip address (\S+)"], lambda g: [(f"interface[{g[0]}].address", g[1])]),
    rule([r"router bgp (\d+)"], lambda g: [("bgp.asn", int(g[0]))]),
    rule([_BGP, r"bgp router-id (\S+)"], lambda g: [("bgp.router_id", g[0])]),
    rule([_BGP, r"neighbor (\S+) peer-group"], lambda g: [(f"bgp.peer_group[{g[0]}]", PRESENT)]),
    rule([_BGP, r"neighbor (\S+) interface peer-group (\S+)"],
         lambda g: [(f"bgp.neighbor[{g[0]}]", PRESENT), (f"bgp.neighbor[{g[0]}].peer_group", g[1]),
                    (f"bgp.neighbor[{g[0]}].unnumbered", True)]),
    rule([_BGP, r"neighbor (\S+) peer-group (\S+)"],
         lambda g: [(f"bgp.neighbor[{g[0]}]", PRESENT), (f"bgp.neighbor[{g[0]}].peer_group", g[1])]),
    rule([_BGP, r"neighbor (\S+) remote-as (\S+)"], lambda g: [(f"bgp.neighbor[{g[0]}].remote_as", _asn(g[1]))]),
    rule([_BGP, r"neighbor (\S+) description (.*)"], lambda g: [(f"bgp.neighbor[{g[0]}].description", g[1])]),
    rule([_BGP, r"address-family (\S+) unicast", r"network (\S+)"],
         lambda g: [(f"bgp.network[{g[1]}]", PRESENT)]),
    rule([_BGP, r"address-family (\S+) unicast", r"maximum-paths (\d+)"],
         lambda g: [(_af_key(g[0], "max_paths"), int(g[1]))]),
)  # fmt: skip

SCOPES = (
    scope(r"interface (\S+)", "interface[{0}]"),
    scope(_BGP, "bgp"),
    scope(r"route-map (\S+) (\S+) (\d+)", "route_map[{0} {1} {2}]"),
)

# Lines FRR never prints because they equal the defaults profile (bgpd's FRR_CFG_DEFAULT_* tables), and
# lines it always prints whatever the file says.
PROFILE_BGP_DEFAULTS: dict[str, frozenset[str]] = {
    "datacenter": frozenset(
        {
            "bgp log-neighbor-changes",
            "no bgp ebgp-requires-policy",
            "bgp deterministic-med",
            "bgp default show-hostname",
            "bgp default show-nexthop-hostname",
        }
    ),
    "traditional": frozenset(),
}
ALWAYS_PRINTED = frozenset({"service integrated-vtysh-config"})
DEFAULTS = Defaults()


def profile_of(tree: Tree | HConfig) -> str:
    texts = tree.keys() if isinstance(tree, dict) else (c.text for c in tree.children)
    line = next((t for t in texts if t.startswith("frr defaults ")), "frr defaults traditional")
    return line.split()[-1]


def is_device_default(context: tuple[str, ...], text: str, profile: str) -> bool:
    """A line FRR itself adds or hides: never drift, never part of a remediation."""
    if not context:
        return text in ALWAYS_PRINTED
    return context[0].startswith("router bgp") and len(context) == 1 and text in PROFILE_BGP_DEFAULTS.get(profile, ())


SECTION_LOCAL = True
"""Every FRR fact comes from inside one top-level section (the defaults profile is read from the whole tree)."""


def facts(tree: Tree | HConfig, only: frozenset[str] | None = None) -> Facts:
    out = extract(tree, RULES, SCOPES, only)
    for text in PROFILE_BGP_DEFAULTS.get(profile_of(tree), frozenset()):
        out.pop(f"bgp.line[{text}]", None)
    for text in ALWAYS_PRINTED:
        out.pop(f"line[{text}]", None)
    return out
