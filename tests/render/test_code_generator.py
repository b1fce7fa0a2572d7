"""netfab's Jinja code generator (fewer, larger yields) renders exactly what Jinja's own does: every platform's
templates, numbered and unnumbered, every role, and the host scripts."""

from __future__ import annotations

import jinja2
import jinja2.compiler
import pytest

from netfab.platforms import platform_names
from netfab.render.device import device_context, device_outputs, server_context, server_output
from netfab.render.environment import _GENERATOR, UnsupportedFeature, _PlanCodeGenerator, new_environment
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
