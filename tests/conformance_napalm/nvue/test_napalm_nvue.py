"""NAPALM's conformance suite (BaseTestGetters) against NVUEDriver; see tests/conformance_napalm/napalm_suite.py.

No NVUE device can run here: the outputs are those of the NVUE mock device in
tests/deploy/test_driver_nvue_sonic.py (iproute2, FRR and lldpctl JSON shapes, `nv config show -o yaml`), with
a test BGP password and SNMP community added to the YAML. They are synthetic, not recorded from a switch.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from netfab.deploy.drivers.nvue import NVUEDriver
from netfab.deploy.drivers.protocol import ReadsRouteEcmpWidth, StagesCompanions
from tests.conformance_napalm.napalm_suite import NetfabGetters, generate, patched, set_device_parameters

HERE = Path(__file__).parent
pytest_generate_tests = generate(__file__)
__all__ = ["set_device_parameters"]  # the fixture NAPALM's tests use, imported for pytest to find


@pytest.mark.usefixtures("set_device_parameters")
class TestNapalmNVUEGetters(NetfabGetters):
    driver = NVUEDriver
    patched_driver = patched(NVUEDriver, HERE)
    claims = (ReadsRouteEcmpWidth, StagesCompanions)
