"""Turn a playbook and the fabric plan into an ordered list of concrete waves."""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from netfab.deploy.playbook import Playbook, WaveSpec
from netfab.design.plan import DevicePlan


@dataclass(frozen=True)
class Wave:
    name: str
    devices: tuple[str, ...]
    parallelism: int
    failure_budget: int


def _matches(spec: WaveSpec, dev: DevicePlan) -> bool:
    sel = spec.select
    if sel.role is not None and dev.role != sel.role:
        return False
    if sel.platform is not None and dev.platform != sel.platform:
        return False
    return sel.name is None or fnmatchcase(dev.name, sel.name)


def plan_waves(playbook: Playbook, devices: list[DevicePlan]) -> list[Wave]:
    """Each device lands in the first wave that selects it; devices no wave selects go last, one at a time,
    so nothing is silently skipped."""
    remaining = {d.name: d for d in devices}
    waves: list[Wave] = []
    for spec in playbook.waves:
        chosen = [d for d in remaining.values() if _matches(spec, d)]
        if spec.pick != "all":
            key = spec.pick.removeprefix("one_per_")
            firsts: dict[object, DevicePlan] = {}
            for d in chosen:
                firsts.setdefault(getattr(d, key), d)
            chosen = list(firsts.values())
        if not chosen:
            continue
        if spec.group_by is None:
            groups = {None: chosen}
        else:
            groups = {}
            for d in chosen:
                groups.setdefault(getattr(d, spec.group_by), []).append(d)
        for value, members in sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
            suffix = "" if value is None else f"-{spec.group_by}{value}"
            waves.append(
                Wave(f"{spec.name}{suffix}", tuple(d.name for d in members), spec.parallelism, spec.failure_budget)
            )
        for d in chosen:
            remaining.pop(d.name, None)
    if remaining:
        waves.append(Wave("unstaged", tuple(remaining), 1, 0))
    return waves
