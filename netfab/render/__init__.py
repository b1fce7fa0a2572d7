"""Render: DevicePlan -> per-platform text through Jinja2 templates in templates/<platform>/."""

from netfab.render.device import render_device, render_server

__all__ = ["render_device", "render_server"]
