"""Each tier against its switch model (topology.<tier>.model / hardware, netfab.intent.hardware): the model
runs the tier's NOS, the port budget fits the box, every port speed is one the box has (unsplit or broken
out), and where the NOS's port names come from a hwsku, that one is named."""

from __future__ import annotations

from collections.abc import Iterator

from netfab.core.findings import Finding, Severity
from netfab.intent import Intent
from netfab.intent.hardware import tier_switch_model
from netfab.intent.topology import SwitchTier
from netfab.lint.context import LintContext
from netfab.lint.fabric import Role, switch_tiers
from netfab.lint.rule import Rule
from netfab.lint.rules._words import speed
from netfab.platforms import platform_spec
from netfab.platforms.catalogue import catalogue, models_for
from netfab.platforms.hardware import SwitchModel


def tier_speeds(intent: Intent) -> dict[Role, set[int]]:
    """Port speeds (Gb/s) each tier's ports run at: its downlinks and its uplinks."""
    t = intent.topology
    out: dict[Role, set[int]] = {"leaf": {t.servers.nic_speed, t.leaf.uplink_speed}, "spine": {t.leaf.uplink_speed}}
    if t.superspine is not None:
        out["spine"].add(t.spine.uplink_speed)
        out["superspine"] = {t.spine.uplink_speed}
    return out


def _modelled(ctx: LintContext) -> Iterator[tuple[Role, SwitchTier, SwitchModel]]:
    """Tiers with a switch model that runs their platform (a mismatch is MODEL001's, not checked further)."""
    for role, tier in switch_tiers(ctx.intent):
        model = tier_switch_model(tier)
        if model is not None and str(tier.platform) in model.platforms:
            yield role, tier, model


def _modes(model: SwitchModel) -> str:
    modes: list[str] = []
    for g in model.ports:
        modes.append(f"{g.count} x {speed(g.max_speed_gbps)}")
        modes.extend(f"{g.count} x {b}" for b in g.breakouts)
    return ", ".join(modes)


class ModelPlatformMismatch(Rule):
    """The tier's switch model does not run the tier's platform (NOS).

    A catalogue entry lists the NOS records it runs (`platforms:`). A SONiC hwsku describes SONiC's port
    map and means nothing to EOS; an NVUE box entry carries no SONiC lanes. Naming the wrong one would render
    syntax or ports the device does not have.

    ```yaml
    # bad: a SONiC hwsku on an EOS tier
    topology: {leaf: {platform: arista_eos, model: sonic-arista-7060x6-64pe-o128s2}}
    # fixed
    topology: {leaf: {platform: arista_eos, model: arista-7060x6-64pe}}
    ```
    """

    id = "MODEL001"
    severity = Severity.ERROR
    title = "Switch model does not run the tier's platform"
    hint = "name a model that runs this platform (netfab schema lists the catalogue)"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for role, tier in switch_tiers(ctx.intent):
            name = tier.model
            if name is None:
                continue
            model = catalogue()[name]
            platform = str(tier.platform)
            if platform in model.platforms:
                continue
            # Entries for the same box (one `base`) under other NOSes are the likely intent.
            box = model.base or model.name
            siblings = [m.name for m in models_for(platform) if box in (m.name, m.base)]
            others = siblings or [m.name for m in models_for(platform)]
            hint = f"on {platform} name {' or '.join(others)}" if others else f"the catalogue has no {platform} model"
            msg = f"{role} model {name} runs {', '.join(model.platforms)}, not the tier's platform {platform}"
            yield self.finding(ctx, ("topology", role, "model"), msg, hint=hint, related=[("topology", role)])


class PortBudgetExceedsModel(Rule):
    """The tier's port budget is more ports than its switch model has at the tier's port speed.

    `ports` is the front-panel ports one switch offers after breakout; a model caps it: an SN4700 has 32 x 400G
    (64 x 200G broken out), a hwsku fixes its breakout and so its port count.

    ```yaml
    # bad
    topology: {leaf: {platform: nvidia_cumulus, model: nvidia-sn4700, ports: 64}}
    # fixed
    topology: {leaf: {platform: nvidia_cumulus, model: nvidia-sn4700, ports: 32}}
    ```
    """

    id = "MODEL002"
    severity = Severity.ERROR
    title = "Port budget exceeds the switch model"
    hint = "lower the tier's ports to what the model has, or choose a larger model"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        speeds = tier_speeds(ctx.intent)
        for role, tier, model in _modelled(ctx):
            slowest = min(speeds[role])
            have = model.logical_ports(slowest)
            if tier.ports <= have or have == 0:  # have == 0: MODEL003 says why
                continue
            written = "" if ctx.written("topology", role, "ports") else " (the default)"
            msg = (
                f"{role} port budget {tier.ports}{written} exceeds the {have} {speed(slowest)} ports of "
                f"{model.title} ({_modes(model)})"
            )
            yield self.finding(
                ctx, ("topology", role, "ports"), msg, hint=f"set topology.{role}.ports to at most {have}"
            )


class SpeedNotOnModel(Rule):
    """A port speed of the tier is neither a native speed nor a breakout mode of its switch model.

    Every link end must be a port the box can run: 400G on an 800G OSFP cage needs the 2x400G breakout; a
    hwsku's port map fixes the speed of each port.

    ```yaml
    # bad: 100G NICs on a model whose ports break out no lower than 200G
    topology: {servers: {nic_speed: 100G}, leaf: {model: nvidia-sn5600}}
    # fixed
    topology: {servers: {nic_speed: 400G}, leaf: {model: nvidia-sn5600}}
    ```
    """

    id = "MODEL003"
    severity = Severity.ERROR
    title = "Port speed not available on the switch model"
    hint = "use a speed the model has (native or a breakout mode), or another model"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        speeds = tier_speeds(ctx.intent)
        for role, _, model in _modelled(ctx):
            for s in sorted(speeds[role]):
                if model.hwsku is not None:
                    ok = any(p.speed_gbps == s for p in model.hwsku.usable())
                    modes = f"hwsku {model.hwsku.name} ports: " + ", ".join(
                        sorted({speed(p.speed_gbps) for p in model.hwsku.usable()})
                    )
                else:
                    ok = s in model.speeds()
                    modes = _modes(model)
                if ok:
                    continue
                msg = f"{role} ports run at {speed(s)}, which {model.title} does not offer ({modes})"
                yield self.finding(ctx, ("topology", role, "model"), msg)


class FeatureNeedsArchitecture(Rule):
    """The intent asks a tier for a feature its NOS renders only on another ASIC architecture.

    On EOS, hashing on the RoCEv2 destination QP is the `load-balance sand` UDP-payload profile: it exists
    on Sand (Jericho) boxes only. The platform record lists such features (`hardware.only_on`); the tier's
    switch model says what the box is, and with no model named the record's documented default applies.

    ```yaml
    # bad: a Tomahawk box asked to hash on the QP
    topology: {leaf: {platform: arista_eos, model: arista-7060x6-64pe}}
    load_balancing: {hash_fields: [src_ip, dst_ip, src_port, dst_port, rocev2_dest_qp]}
    # fixed: a Sand (Jericho) box, or drop rocev2_dest_qp
    topology: {leaf: {platform: arista_eos, model: arista-7808r3}}
    ```
    """

    id = "MODEL004"
    severity = Severity.ERROR
    title = "Feature needs another ASIC architecture"
    hint = "name a switch model of the needed architecture, or drop the feature"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        fields = {str(f) for f in ctx.intent.load_balancing.hash_fields}
        for role, tier in switch_tiers(ctx.intent):
            rules = platform_spec(str(tier.platform)).hardware
            model = tier_switch_model(tier)
            if model is not None:
                arch = model.asic.architecture.value if model.asic.architecture is not None else None
                what = f"{model.title} is {arch or 'of undeclared architecture'}"
            else:
                arch = rules.default_architecture
                what = f"no model is named ({tier.platform} then renders its {arch} default)"
            for feature, allowed in rules.only_on.items():
                group, _, name = feature.partition(".")
                if group != "hash_fields" or name not in fields or arch in allowed:
                    continue
                msg = f"{role}: {name} on {tier.platform} needs a {' or '.join(allowed)} box, and {what}"
                fitting = [m.name for m in models_for(str(tier.platform)) if _arch(m) in allowed]
                hint = (
                    f"name a {' or '.join(allowed)} model in topology.{role}.model (e.g. "
                    f"{', '.join(fitting) or 'none listed'}), set topology.{role}.hardware.architecture, or remove "
                    f"{name} from load_balancing.hash_fields"
                )
                yield self.finding(ctx, ("load_balancing", "hash_fields"), msg, hint=hint, related=[("topology", role)])


def _arch(model: SwitchModel) -> str | None:
    return model.asic.architecture.value if model.asic.architecture is not None else None


RULES: tuple[type[Rule], ...] = (
    ModelPlatformMismatch,
    PortBudgetExceedsModel,
    SpeedNotOnModel,
    FeatureNeedsArchitecture,
)
