"""Render one device (or one server) to text: the only place templates are applied."""

from __future__ import annotations

from dataclasses import replace

from netfab.capabilities import capabilities_for
from netfab.design.plan import DevicePlan, FabricPlan, HostEnv, ServerPlan, sessions_of
from netfab.platforms import platform_spec
from netfab.render.environment import environment, release_data
from netfab.render.guards import refuse_shared_queues


def device_context(device: DevicePlan) -> dict[str, object]:
    """Everything a switch's templates are given: the device's plan and its platform record's data at its
    release. Templates read nothing else (StrictUndefined), which is what lets the build digest this very
    object to know whether the device's files can change (netfab.render.inputs)."""
    spec = platform_spec(device.platform)
    return {
        "dev": device,
        "data": release_data(device.platform, device.os_version),
        "caps": capabilities_for(device.platform, device.os_version),
        "naming": spec.naming,
        "hardware": spec.hardware,
    }


def device_outputs(device: DevicePlan) -> list[tuple[str, str]]:
    """(relative output path, template) of each file of one switch, e.g. ('configs/leaf1.conf', 'eos/...')."""
    return [
        ("configs/" + output.file.format(name=device.name), f"{device.platform}/{output.template}")
        for output in platform_spec(device.platform).outputs
    ]


def render_device(device: DevicePlan, context: dict[str, object] | None = None) -> dict[str, str]:
    """Return {relative output path: text} for one switch, e.g. {'configs/leaf1.conf': '...'}; `context` is
    device_context(device) when the caller already made it.

    A plan designed without its BGP sessions (netfab.design.design's bgp=False) gets them here, in a copy:
    they are a function of the rest of the DevicePlan, so what a build digested (the plan as designed) still
    says everything the text is made of, and only the switches rendered pay for them."""
    refuse_shared_queues(device)
    env = environment()
    if context is None:
        context = device_context(device)
    if device.bgp is None and device.routing is not None:
        context = {**context, "dev": replace(device, bgp=sessions_of(device))}
    return {path: env.get_template(template).render(context) for path, template in device_outputs(device)}


def server_context(server: ServerPlan, plan: FabricPlan) -> dict[str, object]:
    """Everything a GPU server's NIC script template is given."""
    return {"server": server, "nic": server.congestion, "fabric": plan.name}


def server_output(server: ServerPlan) -> str:
    return f"hosts/{server.name}.sh"


def render_server(server: ServerPlan, plan: FabricPlan, context: dict[str, object] | None = None) -> dict[str, str]:
    """The GPU server's NIC script (mlnx_qos trust/PFC, DCQCN, CNP, addresses); `context` is
    server_context(server, plan) when the caller already made it."""
    template = environment().get_template("host/nic.sh.j2")
    return {server_output(server): template.render(context or server_context(server, plan))}


def render_host_env(env: HostEnv, plan: FabricPlan) -> dict[str, str]:
    """The NCCL and RCCL environment files and the mlxconfig script of one server profile (or one overridden
    server): hosts/nccl-<scope>.conf, hosts/rccl-<scope>.conf, hosts/mlxconfig-<scope>.sh."""
    env_ = environment()
    conf = env_.get_template("host/nccl.conf.j2")
    out = {
        f"hosts/nccl-{env.scope}.conf": conf.render(env=env, fabric=plan.name, library="NCCL", path="/etc/nccl.conf"),
        f"hosts/rccl-{env.scope}.conf": conf.render(env=env, fabric=plan.name, library="RCCL", path="/etc/rccl.conf"),
    }
    if env.firmware:
        out[f"hosts/mlxconfig-{env.scope}.sh"] = env_.get_template("host/mlxconfig.sh.j2").render(
            env=env, fabric=plan.name
        )
    return out
