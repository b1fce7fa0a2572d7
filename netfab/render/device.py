"""Render one device (or one server) to text: the only place templates are applied."""

from __future__ import annotations

from pathlib import Path

from netfab.design.plan import DevicePlan, FabricPlan, ServerPlan
from netfab.render.environment import environment, platform_data, platform_outputs


def render_device(device: DevicePlan, root: Path | None = None) -> dict[str, str]:
    """Return {relative output path: text} for one switch, e.g. {'configs/leaf1.conf': '...'}."""
    env = environment(root)
    data = platform_data(device.platform, root)
    out: dict[str, str] = {}
    for spec in platform_outputs(device.platform, root):
        template = env.get_template(f"{device.platform}/{spec['template']}")
        out["configs/" + spec["file"].format(name=device.name)] = template.render(dev=device, data=data)
    return out


def render_server(server: ServerPlan, plan: FabricPlan, root: Path | None = None) -> dict[str, str]:
    """The GPU server's NIC script (mlnx_qos trust/PFC, DCQCN, CNP, addresses)."""
    env = environment(root)
    template = env.get_template("host/nic.sh.j2")
    return {f"hosts/{server.name}.sh": template.render(server=server, nic=server.congestion, fabric=plan.name)}
