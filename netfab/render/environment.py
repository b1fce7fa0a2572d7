"""The Jinja2 environment: built once per process, StrictUndefined, templates compiled on first use.

Templates see only DevicePlan/ServerPlan objects (never the raw intent), plus from the platform's record
(netfab/platforms/<platform>/platform.yaml) its template data as `data`, its capabilities at the device's
release as `caps` (so a limit lint checks is the limit the template enforces) and its interface naming as
`naming`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import jinja2

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


def _loader() -> jinja2.BaseLoader:
    # '<platform>/<file>' resolves in that platform's template folder (a record from NETFAB_PLATFORMS_PATH may
    # bring its own); anything else (host/, shared includes) under templates/.
    from netfab.platforms import registry

    reg = registry()
    own = {name: jinja2.FileSystemLoader(str(path)) for name, path in reg.template_dirs.items()}
    return jinja2.ChoiceLoader([jinja2.PrefixLoader(own), jinja2.FileSystemLoader(str(templates_dir()))])


def environment() -> jinja2.Environment:
    import os

    from netfab.platforms import ENV_PATH

    return _environment(os.environ.get(ENV_PATH, ""))


@cache
def _environment(registry_key: str) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=_loader(),
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


def platform_data(platform: str) -> Mapping[str, Any]:
    """The record's template_data: keyword maps and limits only templates (and the audit's facts) read."""
    from netfab.platforms import platform_spec

    return platform_spec(platform).template_data


def release_data(platform: str, os_version: str | None) -> Mapping[str, Any]:
    """The template data for one release of `platform` (PlatformSpec.data_for), as templates see it."""
    import os

    from netfab.platforms import ENV_PATH

    return _release_data(os.environ.get(ENV_PATH, ""), platform, os_version)


@cache
def _release_data(registry_key: str, platform: str, os_version: str | None) -> Mapping[str, Any]:
    from netfab.platforms import platform_spec

    return platform_spec(platform).data_for(os_version)
