"""NAPALM's conformance suite (BaseTestGetters) against SonicDriver; see tests/conformance_napalm/napalm_suite.py.

No SONiC device can run here: the outputs are those of the SONiC mock device in
tests/deploy/test_driver_nvue_sonic.py (`show version` of SONiC.202311.1, CONFIG_DB JSON indented as SONiC prints
it, FRR and lldpctl JSON), with a test BGP_NEIGHBOR password and SNMP community added. They are synthetic, not
recorded from a switch.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from netfab.deploy.drivers.protocol import (
    ReadsFrrRunningConfig,
    ReadsRouteEcmpWidth,
    StagesCompanions,
    StagesFrrCandidate,
)
from netfab.deploy.drivers.sonic import SonicDriver
from tests.conformance_napalm.napalm_suite import NetfabGetters, generate, patched, set_device_parameters

HERE = Path(__file__).parent
pytest_generate_tests = generate(__file__)
__all__ = ["set_device_parameters"]  # the fixture NAPALM's tests use, imported for pytest to find


@pytest.mark.usefixtures("set_device_parameters")
class TestNapalmSonicGetters(NetfabGetters):
    driver = SonicDriver
    patched_driver = patched(SonicDriver, HERE)
    claims = (ReadsRouteEcmpWidth, StagesCompanions, StagesFrrCandidate, ReadsFrrRunningConfig)
