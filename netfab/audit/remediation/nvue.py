"""NVIDIA Cumulus NVUE: the set/unset patch (`nv config patch` takes it) and the same as `nv` commands.

Only the branches netfab renders are touched (hostname and forwarding under `system`, interfaces, qos,
router, vrf): what the device owns elsewhere is neither unset nor reported.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

import yaml

from netfab.audit.facts.jsontree import Segments, flatten
from netfab.audit.model import PRESENT, RawDiff


def _leaves(doc: Any, keep: Callable[[Segments], bool]) -> dict[Segments, Any]:
    return {segs: value for segs, value in flatten(doc) if segs and keep(segs)}


def _nest(items: dict[Segments, Any]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for segs, value in sorted(items.items()):
        node = tree
        for seg in segs[:-1]:
            node = node.setdefault(seg, {})
        node[segs[-1]] = {} if value == PRESENT or value is None else value
    return tree


def _words(segs: Segments, value: Any) -> list[str]:
    words = list(segs)
    if value != PRESENT and value is not None:
        words.append(str(value))
    return words


def remediate(running: Any, intended: Any, keep: Callable[[Segments], bool]) -> tuple[RawDiff, dict[str, str]]:
    """`keep`: inside netfab's scope and not excluded."""
    have, want = _leaves(running, keep), _leaves(intended, keep)
    to_set = {s: v for s, v in want.items() if have.get(s) != v}
    # unset the highest branch that intended lacks entirely (one `nv unset interface swp9`, not 12 leaves)
    to_unset: set[Segments] = set()
    for segs in have:
        if segs in want:
            continue
        cut = next((segs[:n] for n in range(1, len(segs) + 1) if not any(w[:n] == segs[:n] for w in want)), segs)
        to_unset.add(cut)
    commands = [shlex.join(["nv", "unset", *s]) for s in sorted(to_unset)]
    commands += [shlex.join(["nv", "set", *_words(s, v)]) for s, v in sorted(to_set.items())]
    if not commands:
        return RawDiff("nvue", ""), {}
    patch: list[dict[str, Any]] = []
    if to_unset:
        patch.append({"unset": _nest(dict.fromkeys(to_unset, PRESENT))})
    if to_set:
        patch.append({"set": _nest(to_set)})
    script = "\n".join(["#!/bin/sh", "set -e", *commands, "nv config apply --confirm 300s -y"]) + "\n"
    files = {"nvue-patch.yaml": yaml.safe_dump(patch, sort_keys=True), "nv-commands.sh": script}
    return RawDiff("nvue", "\n".join(commands)), files
