"""Design: intent -> fabric plan (devices, cabling, addresses, ASNs) and per-device DevicePlans."""

from netfab.design.errors import DesignError
from netfab.design.expand import design
from netfab.design.plan import DevicePlan, FabricPlan, InterfacePlan, LinkPlan, ServerPlan

__all__ = ["DesignError", "DevicePlan", "FabricPlan", "InterfacePlan", "LinkPlan", "ServerPlan", "design"]
