"""The Jinja2 environment: built once per process, StrictUndefined, templates compiled on first use.

Templates see only DevicePlan/ServerPlan objects (never the raw intent), plus from the platform's record
(netfab/platforms/<platform>/platform.yaml) its template data as `data`, its capabilities at the device's
release as `caps` (so a limit lint checks is the limit the template enforces) and its interface naming as
`naming`.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from functools import cache
from types import BuiltinFunctionType, FunctionType, MethodType
from typing import TYPE_CHECKING, Any, TypeVar

import jinja2
import jinja2.compiler
import jinja2.environment
import jinja2.filters
import jinja2.nodes
import jinja2.runtime
import jinja2.utils

from netfab.core.paths import templates_dir

if TYPE_CHECKING:
    from netfab.capabilities.model import Capabilities
    from netfab.design.plan import BgpNeighborPlan, InterfacePlan, NicCongestionPlan, NicPlan, QosPlan


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
    pfc_csv: str
    """The PFC vector, comma-separated (priorities 0..7)."""
    tsa_csv: str
    """The ETS algorithm per TC, comma-separated."""
    tc_bw_csv: str
    """The ETS share per TC, comma-separated."""


# One entry per NicCongestionPlan (a network has one, shared by all its servers), held with the plan itself so
# an id is never taken for another object's. A 100k-GPU build renders 12,288 scripts from one or two plans:
# deriving these per script was ~60 % of rendering one.
_HOST_QOS: dict[Any, tuple[object, HostQosArgs]] = {}

_R = TypeVar("_R")


def _memo(cache: dict[Any, tuple[object, _R]], owner: object, key: Hashable, build: Callable[[], _R]) -> _R:
    """`build()` once per `key` (which holds `owner`'s id), kept with `owner` itself so that an id is never
    taken for another object's."""
    hit = cache.get(key)
    if hit is not None and hit[0] is owner:
        return hit[1]
    out = build()
    cache[key] = (owner, out)
    return out


def host_qos(nic: NicCongestionPlan) -> HostQosArgs:
    return _memo(_HOST_QOS, nic, id(nic), lambda: _host_qos(nic))


def _host_qos(nic: NicCongestionPlan) -> HostQosArgs:
    pairs = sorted(nic.dscp_to_priority.items())
    return HostQosArgs(
        dscp2prio=tuple(f"--dscp2prio set,{d},{p}" for d, p in pairs if p != d // 8),
        dcb_dscp=tuple(f"{d}:{p}" for d, p in pairs),
        pfc_on=tuple(f"{p}:on" for p in range(8) if nic.pfc_vector[p]),
        tsa=tuple(f"{tc}:{nic.tsa[tc]}" for tc in range(8)),
        bw=tuple(f"{tc}:{nic.tc_bw[tc]}" for tc in range(8)),
        pfc_csv=",".join(map(str, nic.pfc_vector)),
        tsa_csv=",".join(map(str, nic.tsa)),
        tc_bw_csv=",".join(map(str, nic.tc_bw)),
    )


@dataclass(frozen=True, slots=True)
class HostDcqcnArgs:
    """What a host script's DCQCN block (templates/host/dcqcn.j2) reads of its network's NicCongestionPlan,
    in the order the script writes it."""

    mask: int
    """ROCE_CC_PRIO_MASK: bit N set for each DCQCN priority N."""
    enable: tuple[tuple[int, int], ...]
    """(priority, 1 or 0) for priorities 0..7: DCQCN on that priority (0 everywhere when it is disabled)."""
    rp: tuple[tuple[str, int], ...]
    """Reaction-point parameters, sorted by name as Jinja's dictsort does (case-insensitively)."""
    np: tuple[tuple[str, int], ...]
    """Notification-point parameters, sorted the same way."""
    priorities_csv: str
    """The DCQCN priorities, comma-separated."""


_HOST_DCQCN: dict[Any, tuple[object, HostDcqcnArgs]] = {}


def host_dcqcn(nic: NicCongestionPlan) -> HostDcqcnArgs:
    """The DCQCN block's values of `nic`, derived once per NicCongestionPlan (held like host_qos's)."""
    return _memo(_HOST_DCQCN, nic, id(nic), lambda: _host_dcqcn(nic))


def _host_dcqcn(nic: NicCongestionPlan) -> HostDcqcnArgs:
    return HostDcqcnArgs(
        mask=sum(2**p for p in nic.dcqcn_priorities),
        enable=tuple((p, 1 if nic.dcqcn_enabled and p in nic.dcqcn_priorities else 0) for p in range(8)),
        rp=tuple(jinja2.filters.do_dictsort(nic.rp)),
        np=tuple(jinja2.filters.do_dictsort(nic.np)),
        priorities_csv=",".join(map(str, nic.dcqcn_priorities)),
    )


_SERVER_NAME = "\x00server\x00"
"""What a shared host section prints for the server's name, replaced by each server's own: no name, address
or shell text holds a NUL."""


@dataclass(frozen=True, slots=True)
class _SectionPort:
    netdev: str
    rdma_device: str | None


@dataclass(frozen=True, slots=True)
class _SectionServer:
    """All a shared host section may read of its server: a name that stands for any, and its ports' names."""

    name: str
    nics: tuple[_SectionPort, ...]


# (template, environment, NicCongestionPlan, the ports' names) -> the section's text, held with the environment
# and the plan so that their ids are never taken for other objects'.
_HOST_SECTIONS: dict[Any, tuple[object, object, str]] = {}
_HOST_SECTIONS_LIMIT = 256


@jinja2.pass_environment
def host_section(env: jinja2.Environment, template: str, server: Any, nic: NicCongestionPlan) -> str:
    """`template` (a host script's QoS or DCQCN section) rendered for `server` and `nic`: once per network's
    NicCongestionPlan and set of port names, then reused with the server's name put in.

    Those sections were ~40 % of rendering a NIC script (95 of 247 us), and at 100k GPUs 12,288 servers share
    one plan and one set of port names. The section is given only what its key holds (a stand-in server with
    the ports' netdev and RDMA device names, and `nic`), so with StrictUndefined anything else it reads is an
    error, never a stale value; the name may only be printed, as it is replaced in the text."""
    ports = tuple([(n.netdev, n.rdma_device) for n in server.nics])
    key = (template, id(env), id(nic), ports)
    hit = _HOST_SECTIONS.get(key)
    if hit is not None and hit[0] is env and hit[1] is nic:
        text = hit[2]
    else:
        stand_in = _SectionServer(_SERVER_NAME, tuple([_SectionPort(*port) for port in ports]))
        text = env.get_template(template).render(server=stand_in, nic=nic)
        if len(_HOST_SECTIONS) >= _HOST_SECTIONS_LIMIT:
            _HOST_SECTIONS.clear()
        _HOST_SECTIONS[key] = (env, nic, text)
    return text.replace(_SERVER_NAME, server.name)


def rdma_device_names(nics: Iterable[NicPlan]) -> list[str]:
    """The RDMA device names of a server's NICs that have one, in NIC order."""
    return [n.rdma_device for n in nics if n.rdma_device]


def route_blocks(nics: Iterable[NicPlan]) -> list[tuple[str, list[NicPlan]]]:
    """(block, the NICs that route it) for every block a server's NICs route, in the order Jinja's dictsort
    gives the blocks (case-insensitive), each block's NICs in NIC order."""
    blocks: dict[str, list[NicPlan]] = {}
    for n in nics:
        for r in n.routes:
            blocks.setdefault(r, []).append(n)
    return jinja2.filters.do_dictsort(blocks)


# One entry per (QosPlan, DSCPs per line): a fabric's switches share one QosPlan per role, and the 64-entry
# map's grouping by traffic class was ~15 % of rendering a rack switch's config.
_DSCP_MAP: dict[Any, tuple[object, tuple[tuple[str, int], ...]]] = {}


def dscp_map_rows(qos: QosPlan, per_line: int) -> tuple[tuple[str, int], ...]:
    """('D D D ...', traffic class) per map line: the traffic classes in ascending order, each one's DSCPs
    ascending, `per_line` to a line."""
    return _memo(_DSCP_MAP, qos, (id(qos), per_line), lambda: _dscp_map_rows(qos, per_line))


def _dscp_map_rows(qos: QosPlan, per_line: int) -> tuple[tuple[str, int], ...]:
    rows: list[tuple[str, int]] = []
    for tc in sorted(set(qos.dscp_to_queue.values())):
        dscps = qos.dscps_of(tc)
        for i in range(0, len(dscps), per_line):
            rows.append((" ".join(map(str, dscps[i : i + per_line])), tc))
    return tuple(rows)


def port_kinds(interfaces: Iterable[InterfacePlan]) -> list[str]:
    """['lossless'] when any port is lossless, then 'lossy' when any is not: the QoS profiles a switch needs."""
    lossless = lossy = False
    for i in interfaces:
        if i.lossless:
            lossless = True
        else:
            lossy = True
    return (["lossless"] if lossless else []) + (["lossy"] if lossy else [])


def interface_mtus(caps: Capabilities, interfaces: Iterable[InterfacePlan]) -> dict[int, int]:
    """{IP MTU: interface `mtu` value} for each MTU the ports carry, by caps.interface_mtu: a switch's ports
    carry one or two MTUs, and the method called per port was ~4 us of the ~6 us a spine port costs."""
    return {mtu: caps.interface_mtu(mtu) for mtu in {i.mtu for i in interfaces}}


def peer_groups(neighbors: Iterable[BgpNeighborPlan]) -> list[str]:
    """The BGP peer groups of `neighbors`, as `map(attribute='peer_group') | unique | sort` gives them: the first
    of each case-insensitively equal name, sorted case-insensitively (stable), as Jinja's filters compare."""
    fold = jinja2.filters.ignore_case
    named: set[str] = set()
    seen: set[str] = set()
    groups: list[str] = []
    for n in neighbors:
        group = n.peer_group
        # A name met before folds as it did then: only a new one is folded (a switch's 512 neighbours
        # name two or three groups).
        if group in named:
            continue
        named.add(group)
        key = fold(group)
        if key not in seen:
            seen.add(key)
            groups.append(group)
    return sorted(groups, key=fold)


def split_neighbors(neighbors: Iterable[BgpNeighborPlan]) -> tuple[list[BgpNeighborPlan], list[BgpNeighborPlan]]:
    """(unnumbered neighbours, neighbours with an address), each in plan order."""
    unnumbered: list[BgpNeighborPlan] = []
    numbered: list[BgpNeighborPlan] = []
    for n in neighbors:
        (unnumbered if n.address is None else numbered).append(n)
    return unnumbered, numbered


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

    def getattr_missed(self, obj: Any, attribute: str) -> Any:
        """What Environment.getattr does once getattr(obj, attribute) has raised AttributeError: the item, else
        Undefined. _PlanCodeGenerator compiles `obj.attribute` to the builtin getattr, then this on a miss;
        only while getattr is Environment's own (so an override of it is never bypassed)."""
        try:
            return obj[attribute]
        except (TypeError, LookupError, AttributeError):
            return self.undefined(obj=obj, name=attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if type(argument) is str and not _subscriptable(type(obj)):
            try:
                return getattr(obj, argument)
            except AttributeError:
                return self.undefined(obj=obj, name=argument)
        return super().getitem(obj, argument)


def _passes_nothing(obj: Any) -> bool:
    """Whether `obj` is a builtin, or a plain function or a bound method of one, without a `jinja_pass_arg`
    attribute: what _PlanContext.call calls directly."""
    kind = type(obj)
    if kind is BuiltinFunctionType:
        return True
    if kind is MethodType:
        # A bound method's attributes other than its own (__func__, __self__...) are its function's.
        obj = obj.__func__
        kind = type(obj)
    elif kind is not FunctionType:
        return False
    if kind is FunctionType:
        # A function's attribute not defined by the function type lives in its __dict__: the same answer as
        # hasattr(obj, "jinja_pass_arg"), without the AttributeError hasattr raises and catches (~1 us per
        # call, ~500,000 calls in a 100k-GPU build).
        return "jinja_pass_arg" not in obj.__dict__
    return not hasattr(obj, "jinja_pass_arg")


class _PlanTemplate(jinja2.Template):
    """Jinja2's template with a cheaper context for a render (not an include, which shares its parent's)."""

    def new_context(
        self,
        vars: dict[str, Any] | None = None,
        shared: bool = False,
        locals: Mapping[str, Any] | None = None,
    ) -> jinja2.runtime.Context:
        # jinja2.runtime.new_context starts a render's names as dict(globals, **vars), and over the globals'
        # ChainMap that copy runs ChainMap.__getitem__ in Python for each global (~5 us a render). The maps
        # merged last to first hold the same names with the same values (the first map holding a name wins).
        globals = self.globals
        if shared or type(globals) is not ChainMap:
            return super().new_context(vars, shared, locals)
        merged: dict[str, Any] = {}
        for names in reversed(globals.maps):
            merged.update(names)
        parent = dict(merged, **(vars or {}))
        if locals:
            for key, value in locals.items():
                if value is not jinja2.utils.missing:
                    parent[key] = value
        return self.environment.context_class(self.environment, parent, self.name, self.blocks, globals=globals)

    def _get_default_module(self, ctx: jinja2.runtime.Context | None = None) -> jinja2.environment.TemplateModule:
        # An {% import %} asks which of the importing context's globals this template lacks (a fresh module
        # when any): Jinja's `ctx.globals_keys - self.globals.keys()` tests each name against the ChainMap in
        # Python (~1 us a name, each render). The difference with each map is the same set, in C; when it is
        # empty, Jinja would give its cached module, which it gives for no context.
        if ctx is not None and type(self.globals) is ChainMap and not ctx.globals_keys.difference(*self.globals.maps):
            ctx = None
        return super()._get_default_module(ctx)


class _PlanContext(jinja2.runtime.Context):
    """Jinja2's context with a cheaper call() for what templates call most: bound methods of the plan and the
    platform records (`naming.interface_mtu(...)`) and builtin methods (`.split`, `.append`, `.items`), ~180,000
    calls in a 24k-GPU build. Context.call asks each callable, and its __call__, whether it wants the context
    or environment passed (a `jinja_pass_arg` attribute): a builtin can never carry one, and a bound method
    carries its function's, so those two kinds are called directly when they do not, exactly as call() would.
    So is a plain function (the template globals below): its own `__call__` is a method-wrapper, which carries
    no attribute of its function's."""

    def __init__(
        self,
        environment: jinja2.Environment,
        parent: dict[str, Any],
        name: str | None,
        blocks: dict[str, Callable[[jinja2.runtime.Context], Iterator[str]]],
        globals: MutableMapping[str, Any] | None = None,
    ) -> None:
        # Context keeps the names of the template's globals as set(globals): over a template's ChainMap (its
        # own globals, then the environment's) that is ChainMap.__iter__'s Python loop, ~3 us of the ~4 us a
        # context costs, made for every render and every {% include %} (~100,000 in a 100k-GPU build). The
        # union of the ChainMap's maps is the same set of keys, built in C.
        super().__init__(environment, parent, name, blocks)
        if globals is not None:
            self.globals_keys = set().union(*globals.maps) if type(globals) is ChainMap else set(globals)

    def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        if _passes_nothing(__obj):
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


class _PlanCodeGenerator(jinja2.compiler.CodeGenerator):
    """Jinja2's code generator, emitting fewer pieces of text for the same output.

    A template's render function is a generator that yields each piece of text (every literal run and every
    `{{ }}`) and every piece of each included template again, through a Python loop in the including one:
    ~800 resumptions per switch config, most of a config's rendering after the attribute lookups. Here a run
    of pieces outside any macro or capture is joined into one string before it is yielded, and an included
    template (a fixed name, sharing the context) is joined whole and yielded once. The text, its order and
    the exceptions are the same: the pieces of a run are still evaluated left to right, and a render's
    pieces are only ever joined (Template.render), so when a piece is computed within its run changes
    nothing a template can see."""

    @jinja2.compiler.optimizeconst
    def visit_Getattr(self, node: jinja2.nodes.Getattr, frame: jinja2.compiler.Frame) -> None:
        # `x.attr` is environment.getattr(x, 'attr'): a Python method that calls getattr and, only when that
        # raises AttributeError, tries x['attr'] and then gives Undefined (7 M calls in a 100k-GPU build). The
        # builtin getattr with a default is that first step without the method's frame; the rest of it
        # (getattr_missed) runs only for a miss, on the same object (held in _o, so `x` is evaluated once, and
        # its attribute asked for once). `missing` is Jinja's private sentinel, which no attribute of a
        # template value can be.
        # Two names suffice for any nesting: each Getattr binds _o and _a and reads them back before any
        # other Getattr of the expression is evaluated.
        environment = self.environment
        if (
            environment.is_async
            or not isinstance(environment, _PlanEnvironment)
            or type(environment).getattr is not jinja2.Environment.getattr
        ):
            super().visit_Getattr(node, frame)
            return
        self.write("(_a if (_a := getattr((_o := ")
        self.visit(node.node, frame)
        self.write(f"), {node.attr!r}, missing)) is not missing else environment.getattr_missed(_o, {node.attr!r}))")

    def visit_Include(self, node: jinja2.nodes.Include, frame: jinja2.compiler.Frame) -> None:
        if (
            self.environment.is_async
            or node.ignore_missing
            or not node.with_context
            or frame.buffer is not None
            or not isinstance(node.template, jinja2.nodes.Const)
            or not isinstance(node.template.value, str)
        ):
            super().visit_Include(node, frame)
            return
        self.writeline("template = environment.get_template(", node)
        self.visit(node.template, frame)
        self.write(f", {self.name!r})")
        self.writeline(
            "yield environment.concat(template.root_render_func("
            f"template.new_context(context.get_all(), True, {self.dump_local_context(frame)})))"
        )

    def visit_Output(self, node: jinja2.nodes.Output, frame: jinja2.compiler.Frame) -> None:
        if self.environment.is_async or frame.buffer is not None or frame.require_output_check:
            super().visit_Output(node, frame)
            return
        finalize = self._make_finalize()
        # As CodeGenerator.visit_Output: each item is a list of constant text or a node evaluated at runtime.
        body: list[list[Any] | jinja2.nodes.Expr] = []
        for child in node.nodes:
            try:
                if not (finalize.const or isinstance(child, jinja2.nodes.TemplateData)):
                    raise jinja2.nodes.Impossible()
                const = self._output_child_to_const(child, frame, finalize)
            except (jinja2.nodes.Impossible, Exception):
                body.append(child)
                continue
            last = body[-1] if body else None
            if isinstance(last, list):
                last.append(const)
            else:
                body.append([const])
        if len(body) < 2:
            super().visit_Output(node, frame)
            return
        self.writeline("yield environment.concat((")
        self.indent()
        for item in body:
            if isinstance(item, list):
                self.writeline(self._output_const_repr(item) + ",")
            else:
                self.newline(item)
                self._output_child_pre(item, frame, finalize)
                self.visit(item, frame)
                self._output_child_post(item, frame, finalize)
                self.write(",")
        self.outdent()
        self.writeline("))")


# _PlanCodeGenerator overrides private hooks of Jinja 3.1's CodeGenerator (_make_finalize, _output_child_*,
# dump_local_context); under any other release the stock generator renders the same text, only slower, instead
# of trusting hooks that may have changed. tests/render/test_code_generator.py compares the two over every
# platform's templates.
_GENERATOR: type[jinja2.compiler.CodeGenerator] = (
    _PlanCodeGenerator if jinja2.__version__.startswith("3.1.") else jinja2.compiler.CodeGenerator
)


@cache
def _environment(registry_key: str) -> jinja2.Environment:
    return new_environment(_GENERATOR)


def new_environment(generator: type[jinja2.compiler.CodeGenerator]) -> jinja2.Environment:
    """A fresh template environment compiling with `generator` (environment() is the one to render with)."""
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
    env.template_class = _PlanTemplate
    env.code_generator_class = generator
    env.filters.update(kbytes=_kbytes, seconds=_seconds, ms=_ms, ranges=_ranges)
    env.globals["unsupported"] = _unsupported
    env.globals.update(
        host_qos=host_qos,
        host_dcqcn=host_dcqcn,
        host_section=host_section,
        rdma_device_names=rdma_device_names,
        route_blocks=route_blocks,
        dscp_map_rows=dscp_map_rows,
        port_kinds=port_kinds,
        interface_mtus=interface_mtus,
        peer_groups=peer_groups,
        split_neighbors=split_neighbors,
    )
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
