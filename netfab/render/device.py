"""Render one device (or one server) to text: the only place templates are applied."""

from __future__ import annotations

from netfab.capabilities import capabilities_for
from netfab.design.plan import DevicePlan, FabricPlan, HostEnv, ServerPlan
from netfab.platforms import platform_spec
from netfab.render.environment import environment, release_data
from netfab.render.guards import refuse_shared_queues


def render_device(device: DevicePlan) -> dict[str, str]:
    """Return {relative output path: text} for one switch, e.g. {'configs/leaf1.conf': '...'}."""
    refuse_shared_queues(device)
    env = environment()
    spec = platform_spec(device.platform)
    context = {
        "dev": device,
        "data": release_data(device.platform, device.os_version),
        "caps": capabilities_for(device.platform, device.os_version),
        "naming": spec.naming,
        "hardware": spec.hardware,
    }
    out: dict[str, str] = {}
    for output in spec.outputs:
        template = env.get_template(f"{device.platform}/{output.template}")
        out["configs/" + output.file.format(name=device.name)] = template.render(context)
    return out


def render_server(server: ServerPlan, plan: FabricPlan) -> dict[str, str]:
    """The GPU server's NIC script (mlnx_qos trust/PFC, DCQCN, CNP, addresses)."""
    env = environment()
    template = env.get_template("host/nic.sh.j2")
    return {f"hosts/{server.name}.sh": template.render(server=server, nic=server.congestion, fabric=plan.name)}


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
