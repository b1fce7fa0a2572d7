"""Which NetBox manufacturer, device type and interface type a planned device is.

The one place `sot` asks "what hardware is this device":
- a switch: the tier's switch-model catalogue entry (`DevicePlan.switch_model`, which the expander fills from
  `netfab.intent.hardware.tier_switch_model`): manufacturer = the entry's vendor, model = its title, slug =
  its catalogue name, the port cage from its port group. A tier that names no model gets a device type that
  says so ("<platform> switch (model not set)"), so a push never invents a part number;
- a server: the intent's server profile (`netfab.intent.servers.resolve_profile`, intent-local profiles
  first): model = the profile's description up to its parenthesis, slug = the profile's name; the generic
  profile (sized per intent, no hardware named) is "GPU server, N NICs".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from netfab.design.plan import DevicePlan, ServerPlan
from netfab.intent.servers import Servers, resolve_profile
from netfab.platforms.hardware import SwitchModel


@dataclass(frozen=True, slots=True)
class Hardware:
    manufacturer: str
    model: str
    slug: str = ""
    """The device type's slug; empty: the slug of `model` (what earlier pushes used for placeholders)."""
    part_number: str = ""
    u_height: float | None = None
    """None: not stated by the catalogue or profile, so netfab does not set it (NetBox's default applies)."""
    comments: str = ""
    cage: str | None = None
    """The switch's port cage (OSFP, QSFP-DD ...) from the catalogue; None when it is not known."""


# The catalogue's cage names -> the form-factor part of NetBox 4.7's interface type values
# (dcim.choices.InterfaceTypeChoices: '<speed>gbase-x-<cage>').
_CAGE: Final = {"OSFP": "osfp", "QSFP-DD": "qsfpdd", "QSFP-DD800": "qsfpdd", "QSFP112": "qsfp112", "QSFP28": "qsfp28"}
_NETBOX_TYPES: Final = frozenset(
    {
        "100gbase-x-qsfp28",
        "100gbase-x-qsfpdd",
        "200gbase-x-qsfp56",
        "200gbase-x-qsfpdd",
        "400gbase-x-qsfp112",
        "400gbase-x-qsfpdd",
        "400gbase-x-osfp",
        "800gbase-x-qsfpdd",
        "800gbase-x-osfp",
    }
)
# Speed -> the NetBox type of the usual pluggable at that speed: for a port whose cage is not known (a tier
# with no model, a server NIC: the profiles name netdevs, not cages). QSFP family; an OSFP reads the same speed.
_TYPE_BY_GBPS: Final = {
    1: "1000base-t",
    10: "10gbase-x-sfpp",
    25: "25gbase-x-sfp28",
    40: "40gbase-x-qsfpp",
    50: "50gbase-x-sfp56",
    100: "100gbase-x-qsfp28",
    200: "200gbase-x-qsfp56",
    400: "400gbase-x-qsfpdd",
    800: "800gbase-x-qsfpdd",
}


def interface_type(speed_gbps: int, cage: str | None = None) -> str:
    """NetBox's interface type for a port of this speed in this cage (a broken-out 400G port of an 800G OSFP
    cage is '400gbase-x-osfp'); by speed alone when the cage is unknown or NetBox has no such pairing."""
    if cage is not None and cage in _CAGE:
        typed = f"{speed_gbps}gbase-x-{_CAGE[cage]}"
        if typed in _NETBOX_TYPES:
            return typed
    return _TYPE_BY_GBPS.get(speed_gbps, "other")


def _model_name(model: SwitchModel) -> str:
    """The title without the vendor's name in front ('NVIDIA SN5600' -> 'SN5600'): NetBox shows the
    manufacturer beside the model."""
    title = model.title
    return title[len(model.vendor) :].strip() if title.startswith(model.vendor + " ") else title


def switch_hardware(dev: DevicePlan) -> Hardware:
    from netfab.platforms import platform_spec

    model = dev.switch_model
    if model is not None and model.name != "unlisted":
        return Hardware(
            manufacturer=model.vendor,
            model=_model_name(model)[:100],
            slug=model.name,
            cage=model.ports[0].cage,
            comments=f"From netfab's switch-model catalogue: netfab/platforms/models/{model.name}.yaml.",
        )
    spec = platform_spec(dev.platform)
    return Hardware(
        manufacturer=spec.title.split()[0],
        model=f"{spec.title} switch (model not set)",
        comments="netfab placeholder: the intent names no catalogued switch model for this tier "
        "(topology.<tier>.model).",
    )


def server_hardware(server: ServerPlan, servers: Servers) -> Hardware:
    profile = resolve_profile(servers, server.profile)
    if profile is not None:
        described = profile.description.split(" (")[0].strip() or server.profile
        return Hardware(
            # The description names the maker first ('NVIDIA DGX H100/H200 (...)'); a generic one names none.
            manufacturer=maker if (maker := described.split()[0]).lower() != "generic" else "Generic",
            model=described[:100],
            slug=f"server-{server.profile}",
            comments=f"From netfab's server profile {server.profile!r}: {profile.description}",
        )
    return Hardware(
        manufacturer="Generic",
        model=f"GPU server, {len(server.nics)} NICs",
        comments="netfab placeholder: the intent names no server profile (servers.profile).",
    )
