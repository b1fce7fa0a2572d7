"""The Jinja2 environment: built once per process, StrictUndefined, templates compiled on first use.

Templates see only DevicePlan/ServerPlan objects (never the raw intent), plus the platform's own data file
(templates/<platform>/data.yaml, e.g. hash-field keyword maps) as `data`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2
import yaml

from netfab.core.paths import templates_dir


def _kbytes(n: int) -> int:
    """Bytes -> whole KB (1000), rounding up so a threshold is never silently lowered."""
    return -(-int(n) // 1000)


def _seconds(us: int) -> str:
    """Microseconds -> seconds with up to 3 decimals and no trailing zeros ('0.2')."""
    text = f"{us / 1_000_000:.3f}".rstrip("0").rstrip(".")
    return text or "0"


def _ms(us: int) -> int:
    return int(us // 1000)


def _ranges(values: list[int]) -> str:
    """[1,2,3,5] -> '1-3,5' (list syntax several NOSes accept)."""
    nums = sorted(set(values))
    out: list[str] = []
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        out.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return ",".join(out)


class UnsupportedFeature(Exception):
    """A template met an intent feature its platform cannot express. Lint's capability rules should
    have stopped this earlier; rendering refuses rather than silently leaving a stanza out."""


def _unsupported(message: str) -> None:
    raise UnsupportedFeature(message)


@cache
def environment(root: Path | None = None) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(root or templates_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # network configs, not HTML
        cache_size=-1,
    )
    env.filters.update(kbytes=_kbytes, seconds=_seconds, ms=_ms, ranges=_ranges)
    env.globals["unsupported"] = _unsupported
    return env


@cache
def platform_data(platform: str, root: Path | None = None) -> dict[str, Any]:
    path = (root or templates_dir()) / platform / "data.yaml"
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8") as fh:
        return yaml.safe_load(fh) or {}


@cache
def platform_outputs(platform: str, root: Path | None = None) -> list[dict[str, str]]:
    """templates/<platform>/outputs.yaml: which files one device produces and from which template."""
    path = (root or templates_dir()) / platform / "outputs.yaml"
    with path.open(encoding="utf-8") as fh:
        outputs = yaml.safe_load(fh)
    return list(outputs["files"])
