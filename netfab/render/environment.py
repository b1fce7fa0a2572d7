"""The Jinja2 environment: built once per process, StrictUndefined, templates compiled on first use.

Templates see only DevicePlan/ServerPlan objects (never the raw intent), plus from the platform's record
(netfab/platforms/<platform>/platform.yaml) its template data as `data`, its capabilities at the device's
release as `caps` (so a limit lint checks is the limit the template enforces) and its interface naming as
`naming`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import BuiltinFunctionType, MethodType
from typing import TYPE_CHECKING, Any

import jinja2
import jinja2.runtime

from netfab.core.paths import templates_dir

if TYPE_CHECKING:
    from netfab.design.plan import NicCongestionPlan


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


@dataclass(frozen=True, slots=True)
class HostQosArgs:
    """The argument lists of a host script's QoS block (templates/host/qos.j2), derived from its network's
    NicCongestionPlan alone."""

    dscp2prio: tuple[str, ...]
    """mlnx_qos `--dscp2prio set,D,P` for each DSCP mapped away from mlx5's default (DSCP >> 3), DSCP order."""
    dcb_dscp: tuple[str, ...]
    """dcb-app `D:P` for every DSCP, DSCP order."""
    pfc_on: tuple[str, ...]
    """dcb-pfc `P:on` for each PFC priority."""
    tsa: tuple[str, ...]
    """dcb-ets `TC:strict|ets` for TCs 0..7."""
    bw: tuple[str, ...]
    """dcb-ets `TC:share` for TCs 0..7."""


# One entry per NicCongestionPlan (a network has one, shared by all its servers), held with the plan itself so
# an id is never taken for another object's. A 100k-GPU build renders 12,288 scripts from one or two plans:
# deriving these per script was ~60 % of rendering one.
_HOST_QOS: dict[int, tuple[NicCongestionPlan, HostQosArgs]] = {}


def host_qos(nic: NicCongestionPlan) -> HostQosArgs:
    hit = _HOST_QOS.get(id(nic))
    if hit is not None and hit[0] is nic:
        return hit[1]
    pairs = sorted(nic.dscp_to_priority.items())
    args = HostQosArgs(
        dscp2prio=tuple(f"--dscp2prio set,{d},{p}" for d, p in pairs if p != d // 8),
        dcb_dscp=tuple(f"{d}:{p}" for d, p in pairs),
        pfc_on=tuple(f"{p}:on" for p in range(8) if nic.pfc_vector[p]),
        tsa=tuple(f"{tc}:{nic.tsa[tc]}" for tc in range(8)),
        bw=tuple(f"{tc}:{nic.tc_bw[tc]}" for tc in range(8)),
    )
    _HOST_QOS[id(nic)] = (nic, args)
    return args


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


_SUBSCRIPTABLE: dict[type, bool] = {}


def _subscriptable(cls: type) -> bool:
    """Whether `obj[...]` can do anything but raise TypeError for an instance of `cls` (a class itself may
    answer through __class_getitem__)."""
    known = _SUBSCRIPTABLE.get(cls)
    if known is None:
        known = _SUBSCRIPTABLE[cls] = hasattr(cls, "__getitem__") or issubclass(cls, type)
    return known


class _PlanEnvironment(jinja2.Environment):
    """Jinja2's environment with a cheaper getitem for the plan's dataclasses and models.

    `map(attribute=...)`, `selectattr`, `sort(attribute=...)` and `unique(attribute=...)` look every part of the
    attribute up with getitem, which tries `obj[name]` first: on a DevicePlan's ports and neighbours that
    always raises TypeError before the getattr that answers (~450,000 exceptions in a 24k-GPU build). For an
    object whose type has no __getitem__ the answer is the same without the exception."""

    def getitem(self, obj: Any, argument: Any) -> Any:
        if type(argument) is str and not _subscriptable(type(obj)):
            try:
                return getattr(obj, argument)
            except AttributeError:
                return self.undefined(obj=obj, name=argument)
        return super().getitem(obj, argument)


class _PlanContext(jinja2.runtime.Context):
    """Jinja2's context with a cheaper call() for what templates call most: bound methods of the plan and the
    platform records (`naming.interface_mtu(...)`) and builtin methods (`.split`, `.append`, `.items`), ~180,000
    calls in a 24k-GPU build. Context.call asks each callable, and its __call__, whether it wants the context
    or environment passed (a `jinja_pass_arg` attribute): a builtin can never carry one, and a bound method
    carries its function's, so those two kinds are called directly when they do not, exactly as call() would."""

    def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        kind = type(__obj)
        if kind is BuiltinFunctionType or (kind is MethodType and not hasattr(__obj, "jinja_pass_arg")):
            if kwargs:
                kwargs.pop("_block_vars", None)
                kwargs.pop("_loop_vars", None)
            try:
                return __obj(*args, **kwargs)
            except StopIteration:
                return __self.environment.undefined(
                    "value was undefined because a callable raised a StopIteration exception"
                )
        return super().call(__obj, *args, **kwargs)


@cache
def _environment(registry_key: str) -> jinja2.Environment:
    env = _PlanEnvironment(
        loader=_loader(),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # network configs, not HTML
        cache_size=-1,
        # Templates are package data, fixed for the life of a process: without this every {% include %} of every
        # render stats its source file (~29,000 stats for a 24k-GPU build) to see whether it changed.
        auto_reload=False,
    )
    env.context_class = _PlanContext
    env.filters.update(kbytes=_kbytes, seconds=_seconds, ms=_ms, ranges=_ranges)
    env.globals["unsupported"] = _unsupported
    env.globals["host_qos"] = host_qos
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
