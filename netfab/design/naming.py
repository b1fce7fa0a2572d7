"""Device names from the intent's templates, keyed on stable coordinates (SU, rail, pod, rack)."""

from __future__ import annotations

from netfab.intent import Intent

DEFAULTS: dict[str, dict[str, str]] = {
    "rail_optimized": {
        "leaf": "su{su}-leaf{rail}",
        "spine": "spine{index}",
        "superspine": "superspine{index}",
        "server": "su{su}-srv{server}",
    },
    "clos3": {
        "leaf": "pod{pod}-leaf{rack}",
        "spine": "pod{pod}-spine{index}",
        "superspine": "superspine{index}",
        "server": "pod{pod}-rack{rack}-srv{server}",
    },
}


class Namer:
    """Formats names; templates are resolved once per fabric, not per device."""

    def __init__(self, intent: Intent) -> None:
        defaults = DEFAULTS[intent.topology.style]
        naming = intent.naming
        self.fabric = intent.fabric.name
        self.templates = {
            role: getattr(naming, role) or defaults[role] for role in ("leaf", "spine", "superspine", "server")
        }

    def name(self, role: str, **coords: int | None) -> str:
        return self.templates[role].format(fabric=self.fabric, **{k: v for k, v in coords.items() if v is not None})
