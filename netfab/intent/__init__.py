"""The intent: a pydantic model of what the fabric must be (no vendor syntax, no device lists)."""

from netfab.intent.model import Fabric, Intent, Lab, Management, Naming
from netfab.intent.types import HashField, Platform

__all__ = ["Fabric", "HashField", "Intent", "Lab", "Management", "Naming", "Platform"]
