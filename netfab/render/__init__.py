"""Render: DevicePlan -> per-platform text through Jinja2 templates in templates/<platform>/.

The renderer is imported on first use: `netfab build` over an up-to-date tree reads only the build manifest
(netfab.render.manifest) and must not pay for Jinja2, the platform records and the capabilities."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from netfab.render.device import render_device, render_server

__all__ = ["render_device", "render_server"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from netfab.render import device

        return getattr(device, name)
    raise AttributeError(f"module 'netfab.render' has no attribute {name!r}")
