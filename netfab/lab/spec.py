"""The lab runtime's input: a fully resolved fabric (who exists, how they are cabled, what each switch runs).

Everything here is already decided: addresses, FRR config text, MTUs. The runtime only makes it real,
so these are plain frozen dataclasses and `spec_problems` checks only what the kernel and the runtime
itself would trip over (name lengths, duplicates, dangling link ends, management addressing).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from pathlib import Path

from netfab.core.validate import LAB_PREFIX

# Linux interface names are at most 15 bytes (IFNAMSIZ 16 with the NUL).
IFNAME_MAX = 15
# Node and prefix names end up in namespace names, file paths and shell-script arguments: keep them tame.
_NODE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_IFNAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,15}$")
MGMT_IFNAME = "mgmt0"


@dataclass(frozen=True, slots=True)
class LabSwitch:
    name: str
    frr_conf: str
    mgmt_ip: IPv4Address
    sysctls: Mapping[str, str] = field(default_factory=dict)
    # Run with `sh -e` inside the switch namespace once its links exist (tc/nft ECN marking and the like).
    setup_script: str = ""
    interfaces: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LabHostInterface:
    name: str
    address: IPv4Interface
    gateway: IPv4Address
    routes: tuple[IPv4Network, ...] = ()


@dataclass(frozen=True, slots=True)
class LabHost:
    name: str
    interfaces: tuple[LabHostInterface, ...]


@dataclass(frozen=True, slots=True)
class LabLink:
    a_node: str
    a_ifname: str
    b_node: str
    b_ifname: str
    mtu: int = 9216


@dataclass(frozen=True, slots=True)
class LabSpec:
    name: str
    prefix: str
    mgmt_subnet: IPv4Network
    switches: tuple[LabSwitch, ...]
    hosts: tuple[LabHost, ...]
    links: tuple[LabLink, ...]
    workdir: Path

    @property
    def bridge_address(self) -> IPv4Interface:
        """The root namespace's address on the management bridge: the subnet's last usable host."""
        last = self.mgmt_subnet.broadcast_address - 1
        return ipaddress.IPv4Interface(f"{last}/{self.mgmt_subnet.prefixlen}")

    def switch(self, name: str) -> LabSwitch:
        for sw in self.switches:
            if sw.name == name:
                return sw
        raise KeyError(name)


def spec_problems(spec: LabSpec) -> list[str]:
    """Everything wrong with a spec, all at once (not first-error-wins), as plain sentences."""
    problems: list[str] = []
    if not LAB_PREFIX.fullmatch(spec.prefix):
        problems.append(
            f"prefix {spec.prefix!r} must be 1-8 lowercase letters/digits starting with a letter "
            "(it prefixes 15-character interface names)"
        )
    if spec.mgmt_subnet.num_addresses < 4:
        problems.append(f"management subnet {spec.mgmt_subnet} is too small (need at least a /30)")
    names = [sw.name for sw in spec.switches] + [h.name for h in spec.hosts]
    seen: set[str] = set()
    for name in names:
        if not _NODE_RE.match(name):
            problems.append(f"node name {name!r} may use only letters, digits, '_', '.', '-'")
        if name in seen:
            problems.append(f"node name {name!r} is used twice")
        seen.add(name)
    problems += _mgmt_problems(spec)
    problems += _interface_problems(spec, set(names))
    return problems


def _mgmt_problems(spec: LabSpec) -> list[str]:
    problems = []
    used: dict[IPv4Address, str] = {spec.bridge_address.ip: "the management bridge"}
    for sw in spec.switches:
        if sw.mgmt_ip not in spec.mgmt_subnet or sw.mgmt_ip in (
            spec.mgmt_subnet.network_address,
            spec.mgmt_subnet.broadcast_address,
        ):
            problems.append(f"{sw.name}: mgmt_ip {sw.mgmt_ip} is not a host address of {spec.mgmt_subnet}")
        elif sw.mgmt_ip in used:
            problems.append(f"{sw.name}: mgmt_ip {sw.mgmt_ip} is already used by {used[sw.mgmt_ip]}")
        else:
            used[sw.mgmt_ip] = sw.name
    return problems


def _interface_problems(spec: LabSpec, nodes: set[str]) -> list[str]:
    problems = []
    taken: set[tuple[str, str]] = {(sw.name, MGMT_IFNAME) for sw in spec.switches}
    for h in spec.hosts:
        for hi in h.interfaces:
            if (h.name, hi.name) in taken:
                problems.append(f"{h.name}: interface {hi.name} is listed twice")
            taken.add((h.name, hi.name))
    declared = {sw.name: set(sw.interfaces) for sw in spec.switches if sw.interfaces}
    linked: set[tuple[str, str]] = set()
    for link in spec.links:
        for node, ifname in ((link.a_node, link.a_ifname), (link.b_node, link.b_ifname)):
            if node not in nodes:
                problems.append(f"link {_link_str(link)}: unknown node {node!r}")
            if not _IFNAME_RE.match(ifname):
                problems.append(f"link {_link_str(link)}: interface name {ifname!r} is not a valid Linux name")
            if ifname == MGMT_IFNAME:
                problems.append(f"link {_link_str(link)}: {MGMT_IFNAME} is reserved for management")
            if node in declared and ifname not in declared[node]:
                problems.append(f"link {_link_str(link)}: {node} does not list interface {ifname}")
            if (node, ifname) in linked:
                problems.append(f"{node}: interface {ifname} is cabled twice")
            linked.add((node, ifname))
        if not 68 <= link.mtu <= 65535:
            problems.append(f"link {_link_str(link)}: MTU {link.mtu} is outside 68..65535")
    for h in spec.hosts:
        for hi in h.interfaces:
            if (h.name, hi.name) not in linked:
                problems.append(f"{h.name}: interface {hi.name} has no link")
    return problems


def _link_str(link: LabLink) -> str:
    return f"{link.a_node}:{link.a_ifname}--{link.b_node}:{link.b_ifname}"
