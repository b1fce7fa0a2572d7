"""NAPALM's conformance suite (BaseTestGetters) against FRRDriver; see tests/conformance_napalm/napalm_suite.py.

Recorded over SSH from a namespace-lab switch (FRR 8.4.4, Debian 12 kernel; `netfab lab up intent/lab.yaml`,
leaf1, with a test BGP neighbor password added by hand so get_config(sanitized=True) has something to mask).
The lab runs no lldpd, so lldpctl's answer is the LLDP JSON0 sample of tests/deploy/test_driver_nvue_sonic.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from netfab.deploy.drivers.frr import FRRDriver
from netfab.deploy.drivers.protocol import (
    BacksUpCompanions,
    ReadsKernelState,
    ReadsQosState,
    ReadsRouteEcmpWidth,
    StagesCompanions,
    StagesHostScript,
)
from tests.conformance_napalm.napalm_suite import NetfabGetters, generate, patched, set_device_parameters

HERE = Path(__file__).parent
pytest_generate_tests = generate(__file__)
__all__ = ["set_device_parameters"]  # the fixture NAPALM's tests use, imported for pytest to find


@pytest.mark.usefixtures("set_device_parameters")
class TestNapalmFRRGetters(NetfabGetters):
    driver = FRRDriver
    patched_driver = patched(FRRDriver, HERE)
    claims = (
        ReadsRouteEcmpWidth,
        StagesCompanions,
        ReadsKernelState,
        ReadsQosState,
        StagesHostScript,
        BacksUpCompanions,
    )
