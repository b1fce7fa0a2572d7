"""One NOS as one typed record: the shape of netfab/platforms/<name>/platform.yaml.

Everything netfab knows about a platform outside its templates and its per-platform code modules (audit facts,
NAPALM driver) is here: what it can do per release, the data its templates read, the files one device
produces and how the audit reads, collects and remediates each of them, interface naming, the NAPALM driver,
the CLI dialect, and how labs run it. Code asks the record (netfab.platforms.platform_spec) instead of
branching on a platform's name, so adding a platform is adding a record and its templates (docs/platforms.md).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from netfab.capabilities.model import CapabilityData, Gate
from netfab.capabilities.version import NosVersion, at_least, parse_version
from netfab.platforms.hardware import Architecture, SwitchModel

PLATFORM_NAME = r"^[a-z][a-z0-9_]{1,40}$"
_MODULE = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PortNaming(_Frozen):
    """Faceplate port number (1-based) -> interface name."""

    format: str
    """A str.format pattern: {n} = faceplate number, {index} = n - 1, {lane} = first SerDes lane
    ((n - 1) * lanes_per_port). 'Ethernet{n}/1', 'swp{n}', 'et-0/0/{index}', 'Ethernet{lane}'."""
    lanes_per_port: int = Field(default=1, ge=1, le=16)

    @field_validator("format")
    @classmethod
    def _known_fields(cls, value: str) -> str:
        used = set(re.findall(r"{(\w*)}", value))
        if not used or not used <= {"n", "index", "lane"}:
            raise ValueError(f"port format {value!r} must use {{n}}, {{index}} or {{lane}} (and nothing else)")
        return value

    def name(self, port: int) -> str:
        return self.format.format(n=port, index=port - 1, lane=(port - 1) * self.lanes_per_port)


class Naming(_Frozen):
    port: PortNaming
    loopback: str = Field(min_length=1)
    """The loopback interface the templates configure the router-id address on."""


class Driver(_Frozen):
    """How deploy, verify and audit reach the device: one NAPALM driver name, used in the Nornir inventory."""

    napalm: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    """NAPALM's name for it ('eos', 'junos') or, for netfab's own drivers, 'netfab_<x>'."""
    module: str | None = Field(default=None, pattern=_MODULE)
    """netfab's own driver module (one NetworkDriver class defined in it); None = a driver NAPALM ships."""

    @model_validator(mode="after")
    def _own_drivers_are_prefixed(self) -> Driver:
        if (self.module is None) == self.napalm.startswith("netfab_"):
            raise ValueError("a netfab driver (module: ...) is named netfab_<x>, and only a netfab driver is")
        return self


class Dialect(_Frozen):
    """What in a CLI text is not configuration (read by netfab.audit.textconfig)."""

    comment: tuple[str, ...] = Field(min_length=1)
    """A line whose stripped text starts with one of these is a comment (the first also starts headers)."""
    drop_exact: frozenset[str] = frozenset()
    drop_prefix: tuple[str, ...] = ()
    flat: bool = False
    """Junos set form: every line stands alone (no nesting)."""
    default_lines: tuple[tuple[str, str], ...] = ()
    """(parent prefix, line): a line the device may or may not print because it is the default there. Dropped
    on both sides, like a comment, so a device that prints its defaults stays on the canonical fast path."""


class SectionalExit(_Frozen):
    match: tuple[str, ...] = Field(min_length=1)
    exit: str


HierConfigPlatform = Literal[
    "arista_eos", "aruba_aoscx", "cisco_ios", "cisco_nxos", "cisco_xr", "fortinet_fortios", "generic",
    "hp_comware5", "hp_procurve", "huawei_vrp", "juniper_junos", "nokia_srl", "ruckus_fastiron", "vyos",
]  # fmt: skip
"""hier_config 3's Platform members (its names, not netfab's: they only coincide)."""


class HConfigRules(_Frozen):
    """The audit's hier_config driver: a stock one plus netfab's rules, or one built from these rules alone.

    A matcher starting 're:' is a regex (its groups form the identity), anything else a startswith."""

    stock: HierConfigPlatform | None = None
    """hier_config's own driver to extend (its hier_config.Platform name, lower case); None = a driver made
    of these rules alone."""
    indentation: int = Field(default=2, ge=1, le=8)
    """Only for a driver built from these rules (stock: null)."""
    sectional_exiting: tuple[SectionalExit, ...] = ()
    idempotent: tuple[tuple[str, ...], ...] = ()
    """Lineages of single-valued lines the device replaces in place: no negation before the new value."""


class CliSyntax(_Frozen):
    dialect: Dialect
    hconfig: HConfigRules


Remediation = Literal["cli", "frr_reload", "sonic_patch", "nvue_patch"]


class AuditPart(_Frozen):
    """How the audit reads one build output of a device."""

    kind: Literal["cli", "json", "kernel"]
    facts: str = Field(pattern=_MODULE)
    """Module reducing both sides to facts (netfab.audit.facts.<x>)."""
    syntax: str | None = Field(default=None, pattern=PLATFORM_NAME)
    """cli parts: the platform whose `cli:` section reads this text (SONiC's FRR file reads as frr); default
    the record's own."""
    prefix: str = ""
    """Prepended to the part's fact paths where two parts would otherwise share names (SONiC's FRR)."""
    remediation: Remediation | None = None
    """How a drifted cli/json part is fixed; kernel parts are fixed by re-running the script."""
    label: str = Field(default="", pattern=r"^[a-z0-9-]*$")
    """frr_reload: the stem of the remediation files ('frr' -> frr.conf, frr-reload-test.txt)."""
    collect: str | None = Field(default=None, pattern=r"^[a-z_][a-z0-9_]*$")
    """Online, the driver getter that reads this part ('get_kernel_state'); None = get_config(running) for
    the device's primary file. Offline, parts are read from saved files of the same names."""

    @model_validator(mode="after")
    def _consistent(self) -> AuditPart:
        if self.kind == "kernel" and (self.remediation or self.syntax):
            raise ValueError("a kernel part has neither remediation nor syntax: the script itself is the fix")
        if self.kind != "kernel" and self.remediation is None:
            raise ValueError(f"a {self.kind} part needs a remediation strategy")
        if self.kind != "cli" and self.syntax is not None:
            raise ValueError("only cli parts have a syntax")
        if self.remediation == "frr_reload" and not self.label:
            raise ValueError("frr_reload remediation needs a label (the remediation files' stem)")
        if self.remediation == "cli" and self.kind != "cli":
            raise ValueError("cli remediation is for cli parts")
        return self


class Output(_Frozen):
    """One file the build writes per device, the template that renders it, and how the audit reads it."""

    file: str = Field(pattern=r"^\{name\}\.[A-Za-z0-9_.-]+$")
    """'{name}.cfg': the device name plus the output's suffix."""
    template: str = Field(pattern=r"^[A-Za-z0-9_.-]+\.j2$")
    """A template file under templates/<platform>/."""
    audit: AuditPart | None = None
    """None = the audit does not read this file."""

    @property
    def suffix(self) -> str:
        return self.file.removeprefix("{name}")


class ContainerlabNode(_Frozen):
    """`netfab lab export --format containerlab`: how the platform runs as a containerlab node."""

    kind: str
    image: str
    """Default image; users override it per kind with --image KIND=IMAGE."""
    config_bind: str | None = None
    """Bind the primary config to this path in the container (Linux kinds); None = containerlab's
    startup-config."""
    native_interface_names: bool = False
    """The node takes the plan's interface names (Linux kinds); else data ports are eth<faceplate number>."""


class Lab(_Frozen):
    namespace: bool = False
    """`netfab lab` runs every switch of a fabric on this platform in Linux network namespaces."""
    containerlab: ContainerlabNode | None = None


class HealthSource(_Frozen):
    """One command `netfab health` runs on a device of this platform, and the parser that reads its output."""

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    """Names the output in saved samples (<device>/<id>[.<port>].txt) and in error messages."""
    command: str = Field(min_length=1)
    """As typed on the device. '{port}' makes it per port: it runs once for each of the device's planned ports."""
    parser: str = Field(pattern=_MODULE)
    """netfab.health.parsers.<module>.<function>: (output, port) -> port -> counters."""
    doc: str = Field(min_length=1)
    """Where the output's shape comes from (a document, a recording): said in the parser tests' table."""
    optional: bool = False
    """A failing optional source (a tool the device may lack) is a note, not an unreadable device."""


class Health(_Frozen):
    """`netfab health`: the counter sources of this platform (netfab.health reads them in this order)."""

    sources: tuple[HealthSource, ...] = Field(min_length=1)
    unavailable: dict[str, str] = {}
    """Counter families (netfab.health.counters.COUNTER_DOCS names) this platform has no source for -> why, and
    what health judges instead; the report says so for every fleet that has such devices."""

    @field_validator("unavailable")
    @classmethod
    def _known_counters(cls, value: dict[str, str]) -> dict[str, str]:
        from netfab.health.counters import COUNTER_DOCS

        unknown = sorted(set(value) - set(COUNTER_DOCS))
        if unknown:
            raise ValueError(f"health.unavailable names no counter netfab reads: {', '.join(unknown)}")
        return value

    @field_validator("sources")
    @classmethod
    def _unique_ids(cls, value: tuple[HealthSource, ...]) -> tuple[HealthSource, ...]:
        ids = [s.id for s in value]
        if len(set(ids)) != len(ids):
            raise ValueError(f"health source ids repeat: {ids}")
        return value


class HardwareRules(_Frozen):
    """What this NOS renders differently per ASIC architecture of the tier's switch model."""

    default_architecture: Architecture | None = None
    """The architecture whose grammar is rendered when the tier names no model (a documented default);
    None = the NOS's output does not depend on it."""
    only_on: dict[str, tuple[Architecture, ...]] = {}
    """Intent features (capability paths, 'hash_fields.rocev2_dest_qp') this NOS renders only on these
    architectures; lint (MODEL004) refuses them elsewhere, as the templates do."""


class PlatformSpec(_Frozen):
    """netfab/platforms/<name>/platform.yaml."""

    name: str = Field(pattern=PLATFORM_NAME)
    title: str = Field(min_length=1)
    """How documentation names the NOS ('Arista EOS')."""
    capabilities: CapabilityData[Gate]
    template_data: dict[str, Any] = {}
    """Keyword maps and limits only the templates read (as `data`); capabilities reach them as `caps`."""
    release_data: dict[str, dict[str, Any]] = {}
    """Template data a NOS release changed (a renamed leaf, a new value spelling): '<first release>' -> the
    template_data keys it replaces. See `data_for`."""
    outputs: tuple[Output, ...] = Field(min_length=1)
    """The first is the primary config (NAPALM's candidate); the others are companion files."""
    naming: Naming
    driver: Driver
    cli: CliSyntax | None = None
    """How the audit reads this platform's CLI text (cli parts)."""
    audit_excludes: tuple[str, ...] = ()
    """JSON pointers of device-owned leaves netfab never renders ('*' = any one segment)."""
    lab: Lab = Lab()
    health: Health | None = None
    """Counter sources for `netfab health`; None = the platform cannot be health-checked yet."""
    hardware: HardwareRules = HardwareRules()
    switch_models: tuple[SwitchModel, ...] = ()
    """Hardware this NOS runs on: the catalogue entries (netfab/platforms/models/) whose `platforms` name
    this record. Attached by the registry when it loads; a record file does not list them."""

    @field_validator("release_data")
    @classmethod
    def _releases(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        unreadable = [r for r in value if parse_version(r) is None]
        if unreadable:
            raise ValueError(f"release_data keys must be release numbers: {unreadable}")
        return value

    def data_for(self, os_version: str | None) -> dict[str, Any]:
        """The template data of one release: template_data updated by every release_data entry up to
        `os_version`, oldest first. An unset or unreadable version is the newest release (every entry), as
        everywhere else in netfab: a template renders the current shape unless the intent names an older one."""
        data = dict(self.template_data)
        for release in sorted(self.release_data, key=NosVersion):
            if at_least(os_version, release):
                data.update(self.release_data[release])
        return data

    @field_validator("audit_excludes")
    @classmethod
    def _pointers(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [p for p in value if not p.startswith("/")]
        if bad:
            raise ValueError(f"JSON pointers must start with '/': {bad}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> PlatformSpec:
        suffixes = [o.suffix for o in self.outputs]
        if len(set(suffixes)) != len(suffixes):
            raise ValueError(f"outputs repeat a file suffix: {suffixes}")
        audited = [o.audit for o in self.outputs if o.audit is not None]
        if audited and (self.outputs[0].audit is None or self.outputs[0].audit.kind == "kernel"):
            raise ValueError("the primary output (the first) must be an audited cli or json file")
        for part in audited:
            if part.kind == "cli" and part.syntax is None and self.cli is None:
                raise ValueError("a cli part without `syntax` needs the record's `cli:` section")
            if part.collect is not None and part is self.outputs[0].audit:
                raise ValueError("the primary output is collected with get_config, not a getter")
        return self

    @property
    def primary(self) -> Output:
        return self.outputs[0]

    @property
    def audited(self) -> tuple[tuple[Output, AuditPart], ...]:
        return tuple((o, o.audit) for o in self.outputs if o.audit is not None)
