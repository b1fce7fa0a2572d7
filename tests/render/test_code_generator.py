"""netfab's Jinja code generator (fewer, larger yields) renders exactly what Jinja's own does: every platform's
templates, numbered and unnumbered, every role, and the host scripts."""

from __future__ import annotations

from types import BuiltinFunctionType, FunctionType, MethodType

import jinja2
import jinja2.compiler
import jinja2.runtime
import jinja2.utils
import pytest

from netfab.platforms import platform_names
from netfab.render.device import device_context, device_outputs, server_context, server_output
from netfab.render.environment import (
    _GENERATOR,
    UnsupportedFeature,
    _passes_nothing,
    _PlanCodeGenerator,
    new_environment,
)
from tests.render.cli_roundtrip import fabric_for

STOCK = new_environment(jinja2.compiler.CodeGenerator)
PLAN = new_environment(_PlanCodeGenerator)


def test_the_plan_generator_is_the_one_used_on_jinja_3_1() -> None:
    assert (_GENERATOR is _PlanCodeGenerator) == jinja2.__version__.startswith("3.1.")


# An example whose intent each platform renders (the lab's FRR has no PFC watchdog; NVUE needs CL >= 5.3).
EXAMPLE = {"frr": "lab.yaml", "nvidia_cumulus": "ent64.yaml"}


def _render(env: jinja2.Environment, template: str, context: dict[str, object]) -> str:
    try:
        return env.get_template(template).render(context)
    except UnsupportedFeature as exc:  # a refusal must be the same refusal
        return f"refused: {exc}"


@pytest.mark.parametrize("platform", platform_names())
def test_switch_configs_are_the_same_text(platform: str) -> None:
    rendered = 0
    for addressing in ("unnumbered", "p2p31"):
        plan = fabric_for(platform, EXAMPLE.get(platform, "rail-3tier.yaml"), underlay__addressing=addressing)
        for role in ("leaf", "spine", "superspine"):
            for device in plan.devices_of(role)[:2]:
                context = device_context(device)
                for path, template in device_outputs(device):
                    stock = _render(STOCK, template, context)
                    assert _render(PLAN, template, context) == stock, path
                    rendered += not stock.startswith("refused: ")
    assert rendered >= 2, "nothing rendered: the comparison compared only refusals"


def test_host_scripts_are_the_same_text() -> None:
    plan = fabric_for("arista_eos", "rail-3tier.yaml")
    for server in plan.servers[:4]:
        context = server_context(server, plan)
        stock = STOCK.get_template("host/nic.sh.j2").render(context)
        assert stock and PLAN.get_template("host/nic.sh.j2").render(context) == stock, server_output(server)


class _Ports:
    """An object whose attribute lookup can miss, fall back to an item, or fail inside a property."""

    speed = 400

    def __init__(self) -> None:
        self.calls = 0

    def __getitem__(self, key: str) -> str:
        if key == "only_item":
            return "item"
        raise KeyError(key)

    @property
    def broken(self) -> int:
        raise AttributeError("inside the property")

    @property
    def flaky(self) -> int:
        self.calls += 1
        raise AttributeError("asked once, as Jinja asks")

    def counted(self) -> _Ports:
        self.calls += 1
        return self


# `x.attr` compiled by the plan generator: the attribute, else the item, else Undefined, with `x` evaluated once.
ATTRIBUTE_CASES = {
    "attribute": "{{ p.speed }}",
    "item fallback": "{{ p.only_item }}",
    "dict item": "{{ d.key }} {{ d.items is defined }}",
    "missing is undefined": "{{ p.nothing is defined }} {{ d.nothing is defined }}",
    "attribute of undefined": "{{ p.nothing.deeper is defined }}",
    "property raising AttributeError": "{{ p.broken is defined }}",
    "attribute asked for once": "{{ p.flaky is defined }} {{ p.calls }}",
    "nested": "{{ d.inner.key }} {{ d['inner'].key }} {{ (d.inner.key ~ p.speed) }}",
    "evaluated once": "{{ p.counted().counted().speed }} {{ p.calls }}",
    "in a loop filter": "{% for x in xs if x.speed %}{{ x.speed }}{% endfor %}",
    "strict refusal": "{{ p.nothing }}",
}


@pytest.mark.parametrize("case", sorted(ATTRIBUTE_CASES))
def test_attribute_lookup_is_jinjas(case: str) -> None:
    def render(env: jinja2.Environment) -> str:
        context = {"p": _Ports(), "d": {"key": "v", "inner": {"key": "w"}}, "xs": [_Ports(), {"speed": 0}]}
        try:
            return env.from_string(ATTRIBUTE_CASES[case]).render(context)
        except jinja2.UndefinedError as exc:
            return f"undefined: {exc}"

    assert render(PLAN) == render(STOCK)


def test_a_context_knows_the_same_globals_as_jinjas() -> None:
    template = PLAN.get_template("host/nic.sh.j2")
    context = template.new_context({"server": None})
    stock = jinja2.runtime.Context(PLAN, context.parent, template.name, template.blocks, template.globals)
    assert type(context) is not jinja2.runtime.Context
    assert context.globals_keys == stock.globals_keys == set(template.globals)


class _Naming:
    def plain(self) -> str:
        return "plain"

    @jinja2.pass_context
    def wants_context(self, context: jinja2.runtime.Context) -> str:
        return "context"


def _function() -> str:
    return "function"


@jinja2.pass_environment
def _wants_environment(environment: jinja2.Environment) -> str:
    return "environment"


CALLABLES = {
    "builtin": len,
    "builtin method": "a-b".split,
    "function": _function,
    "function with pass_environment": _wants_environment,
    "bound method": _Naming().plain,
    "bound method with pass_context": _Naming().wants_context,
    "class": _Naming,
    "callable object": jinja2.filters.do_upper,
    "method bound to a builtin": MethodType(len, "ports"),
}


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_what_is_called_directly_is_what_jinja_would_call_bare(name: str) -> None:
    obj = CALLABLES[name]
    kind = type(obj)
    # The predicate _PlanContext.call had before it avoided hasattr's exception.
    bare = kind is BuiltinFunctionType or (
        (kind is MethodType or kind is FunctionType) and not hasattr(obj, "jinja_pass_arg")
    )
    assert _passes_nothing(obj) == bare


@pytest.mark.parametrize("locals_", [None, {"family": "sand", "gone": jinja2.utils.missing}])
def test_a_render_starts_with_jinjas_names(locals_: dict[str, object] | None) -> None:
    template = PLAN.get_template("host/nic.sh.j2")
    template.globals["range"] = "a template's own global, over the environment's"
    try:
        names = {"server": "srv1", "fabric": "f"}
        ours = template.new_context(dict(names), False, locals_)
        stock = jinja2.runtime.new_context(
            PLAN, template.name, template.blocks, dict(names), False, template.globals, locals_
        )
        assert type(ours) is type(stock) and ours.parent == stock.parent and list(ours.parent) == list(stock.parent)
        assert ours.globals_keys == stock.globals_keys
    finally:
        del template.globals["range"]


def test_an_import_gets_jinjas_module() -> None:
    """The cached module when the importing context has no global the imported template lacks, a fresh one
    (with that global) when it has."""
    family = PLAN.get_template("arista_eos/family.j2")
    device = PLAN.get_template("arista_eos/device.j2")
    assert family._get_default_module(device.new_context({})) is family._get_default_module()
    importer = PLAN.from_string("{% from 'arista_eos/family.j2' import syntax_family %}", globals={"extra": 1})
    fresh = family._get_default_module(importer.new_context({}))
    assert fresh is not family._get_default_module()
