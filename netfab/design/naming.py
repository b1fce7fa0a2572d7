"""Device names from the intent's templates, keyed on stable coordinates (SU, rail, pod, rack)."""

from __future__ import annotations

import re

from netfab.intent import Intent

DEFAULTS: dict[str, dict[str, str]] = {
    "rail_optimized": {
        # {leaf} is the leaf's number in its SU: the rail itself when each leaf carries one rail.
        "leaf": "su{su}-leaf{leaf}",
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


# Names become file names, inventory keys and config hostnames: the same safe set as the intent's Name type,
# so a template like "../{index}" can never point a build outside its output directory.
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


class UnsafeName(ValueError):
    def __init__(self, role: str, name: str) -> None:
        super().__init__(f"naming.{role} gives {name!r}, which is not a safe device name")
        self.role = role
        self.name = name


PLANE_LEAF = "su{su}-p{plane}-leaf{leaf}"
"""Default leaf name of a multi-plane rail back end: each plane has its own leaves."""


class MissingPlaceholder(ValueError):
    def __init__(self, role: str, template: str, field: str) -> None:
        super().__init__(
            f"naming.{role} {template!r} uses {{{field}}}, which this topology does not give a {role} "
            f"(e.g. {{rail}} on a leaf that carries several rails: use {{leaf}})"
        )
        self.role = role


class Namer:
    """Formats names; templates are resolved once per fabric, not per device."""

    def __init__(self, intent: Intent) -> None:
        t = intent.topology
        defaults = dict(DEFAULTS[t.style])
        if t.rail_planes > 1:
            defaults["leaf"] = PLANE_LEAF
        if t.sus_per_pod is not None:
            # Pods of SUs have their own spines, numbered within the pod as in clos3.
            defaults["spine"] = DEFAULTS["clos3"]["spine"]
        naming = intent.naming
        self.fabric = intent.fabric.name
        self.templates = {
            role: getattr(naming, role) or defaults[role] for role in ("leaf", "spine", "superspine", "server")
        }

    def name(self, role: str, **coords: int | None) -> str:
        template = self.templates[role]
        try:
            name = template.format(fabric=self.fabric, **{k: v for k, v in coords.items() if v is not None})
        except KeyError as exc:
            raise MissingPlaceholder(role, template, str(exc.args[0])) from None
        if not SAFE_NAME.match(name) or ".." in name:
            raise UnsafeName(role, name)
        return name
