"""Device names from the intent's templates, keyed on stable coordinates (SU, rail, pod, rack)."""

from __future__ import annotations

import re
from string import Formatter

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


_Part = tuple[str, str | None, str]
"""Literal text, then the placeholder after it (None at the end) and its format spec."""


def _compile(template: str) -> tuple[_Part, ...] | None:
    """`template` cut at its placeholders by str.format's own parser, when every placeholder is a plain name
    with a literal spec ('{rack:03d}'): then format(value, spec) per placeholder is what str.format does.
    None for anything else (conversions, nested specs, indexing, a malformed template): str.format then runs
    as it is, errors included."""
    try:
        parsed = list(Formatter().parse(template))
    except ValueError:
        return None
    parts: list[_Part] = []
    for literal, field, spec, conversion in parsed:
        if field is not None and (not field.isidentifier() or conversion is not None or "{" in (spec or "")):
            return None
        parts.append((literal, field, spec or ""))
    return tuple(parts)


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
        # Parsed once: str.format parses its template on every call, ~2 us of each of the 19,000 names of a
        # 100k-GPU fabric.
        self._parts = {role: _compile(template) for role, template in self.templates.items()}

    def name(self, role: str, **coords: int | None) -> str:
        template = self.templates[role]
        parts = self._parts[role]
        try:
            if parts is None:
                name = template.format(fabric=self.fabric, **{k: v for k, v in coords.items() if v is not None})
            else:
                name = self._format(parts, coords)
        except KeyError as exc:
            raise MissingPlaceholder(role, template, str(exc.args[0])) from None
        if not SAFE_NAME.match(name) or ".." in name:
            raise UnsafeName(role, name)
        return name

    def _format(self, parts: tuple[_Part, ...], coords: dict[str, int | None]) -> str:
        """template.format(fabric=..., **coords without its None values), from the parsed template: the same
        text, and the same KeyError (the first placeholder without a value, left to right)."""
        out = ""
        for literal, field, spec in parts:
            out += literal
            if field is not None:
                value = self.fabric if field == "fabric" else coords.get(field)
                if value is None:
                    raise KeyError(field)
                out += format(value, spec)
        return out
