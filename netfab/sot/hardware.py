"""Which NetBox manufacturer and device type a planned device is.

The one place `sot` asks "what hardware is this device": the switch-model catalogue's entry when the plan
names one, else a placeholder per platform that says so (manufacturer from the platform record's title,
model "<title> switch (model not set)"), so a push never invents a real part number. Servers: the intent's
server profile when it names one, else "GPU server, N NICs".
"""

from __future__ import annotations

from dataclasses import dataclass

from netfab.design.plan import DevicePlan, ServerPlan


@dataclass(frozen=True, slots=True)
class Hardware:
    manufacturer: str
    model: str
    part_number: str = ""
    u_height: float = 1.0
    comments: str = ""


def switch_hardware(dev: DevicePlan) -> Hardware:
    from netfab.platforms import platform_spec

    spec = platform_spec(dev.platform)
    model = getattr(dev, "model", None)  # the switch-model catalogue's entry, once the plan carries one
    if model is not None:
        return Hardware(
            manufacturer=str(getattr(model, "vendor", None) or getattr(model, "manufacturer", "")) or spec.title,
            model=str(getattr(model, "name", model)),
            part_number=str(getattr(model, "part_number", "") or ""),
            comments="From netfab's switch-model catalogue.",
        )
    return Hardware(
        manufacturer=spec.title.split()[0],
        model=f"{spec.title} switch (model not set)",
        comments="netfab placeholder: the intent names no switch model for this tier.",
    )


def server_hardware(server: ServerPlan) -> Hardware:
    profile = getattr(server, "profile", None)  # the intent's server profile, once the plan carries one
    if profile is not None:
        return Hardware(
            manufacturer=str(getattr(profile, "vendor", None) or "Generic"),
            model=str(getattr(profile, "model", None) or getattr(profile, "name", profile)),
            u_height=float(getattr(profile, "u_height", 0) or 0) or 8.0,
            comments="From the intent's server profile.",
        )
    return Hardware(
        manufacturer="Generic",
        model=f"GPU server, {len(server.nics)} NICs",
        u_height=8.0,
        comments="netfab placeholder: the intent names no server profile.",
    )
