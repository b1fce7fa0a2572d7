"""NAPALM's own driver conformance suite (napalm.base.test.getters.BaseTestGetters) for netfab's drivers.

Each driver has a directory here with NAPALM's mocked_data layout: mocked_data/<test>/<case>/ holds one file
per command the getter runs on the device (named by BaseTestDouble.sanitize_text(command) + ".txt") and
expected_result.json. The device is replaced by `RecordedChannel`, a NAPALM test double that answers each
command from those files; NAPALM's wrapper compares the getter's result to expected_result.json and checks
it against napalm.base.models. Getters a driver does not implement raise NotImplementedError, which NAPALM
reports as skipped.

`test_method_signatures` is NAPALM's, run on NAPALM's surface: netfab's extra public methods do not exist
in napalm.base, so NAPALM would report each of them; they are hidden from it and checked instead against the
Protocol that declares them (netfab.deploy.drivers.protocol), and every extra must be declared in one.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from napalm.base import NetworkDriver
from napalm.base.test import conftest as napalm_conftest
from napalm.base.test.double import BaseTestDouble
from napalm.base.test.getters import BaseTestGetters

from netfab.deploy.drivers.protocol import EXTRAS, NetfabDriver
from netfab.deploy.drivers.ssh import CommandResult

_OPEN = re.compile(r"^umask 077 && mkdir -p \S+ && cd \S+ && pwd$")


class RecordedChannel(BaseTestDouble):  # type: ignore[misc]
    """netfab's CommandChannel as a NAPALM test double: outputs come from mocked_data/<test>/<case>/."""

    def __init__(self, mocked: Path) -> None:
        super().__init__()
        self.mocked = mocked

    def find_file(self, filename: str) -> str:
        # NAPALM looks next to the double's module; here each driver's directory has its own mocked_data.
        path = self.mocked / self.current_test / self.current_test_case / filename
        if not path.is_file():
            raise OSError(f"Couldn't find file with mocked data: {path}")
        return str(path)

    def run(self, command: str, stdin: str | None = None, timeout: float | None = None) -> CommandResult:
        if _OPEN.match(command):  # open(): the private work dir, before any test case is selected
            return CommandResult(command, 0, "/home/vagrant/.netfab/127.0.0.1-12443\n", "")
        text = self.read_txt_file(self.find_file(self.sanitize_text(command) + ".txt"))
        return CommandResult(command, 0, text, "")

    def close(self) -> None: ...

    def is_alive(self) -> bool:
        return True


def patched(driver: type[NetworkDriver], here: Path) -> type[NetworkDriver]:
    """The driver with its SSH channel replaced by the recorded one (NAPALM's `patched_driver`)."""

    class Patched(driver):  # type: ignore[misc, valid-type]
        def __init__(
            self, hostname: str, username: str, password: str, timeout: int = 60, optional_args: Any = None
        ) -> None:
            channel = RecordedChannel(here / "mocked_data")
            super().__init__(hostname, username, password, timeout, {**(optional_args or {}), "channel": channel})
            self.patched_attrs = ["_injected"]

    return Patched


def generate(basefile: str) -> Callable[[pytest.Metafunc], None]:
    def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
        napalm_conftest.pytest_generate_tests(metafunc, basefile)

    return pytest_generate_tests


@pytest.fixture(scope="class")
def set_device_parameters(request: pytest.FixtureRequest) -> Any:
    napalm_conftest.set_device_parameters(request)
    yield
    request.cls.device.close()


def netfab_extras(driver: type[NetworkDriver]) -> list[str]:
    """Public methods the driver has beyond NAPALM's NetworkDriver."""
    return sorted(
        name
        for name, _ in inspect.getmembers(driver, inspect.isfunction)
        if not name.startswith("_") and not hasattr(NetworkDriver, name)
    )


def _declared() -> dict[str, type[Any]]:
    out: dict[str, type[Any]] = {}
    for proto in EXTRAS:
        for name, value in vars(proto).items():
            if not name.startswith("_") and inspect.isfunction(value):
                out[name] = proto
    return out


class NetfabGetters(BaseTestGetters):  # type: ignore[misc]
    driver: ClassVar[type[NetworkDriver]]
    claims: ClassVar[tuple[type[Any], ...]]
    """The extra Protocols this driver offers (and, by omission, those it must not claim)."""

    def test_method_signatures(self) -> None:
        hidden = type(self.driver.__name__, (self.driver,), dict.fromkeys(netfab_extras(self.driver)))
        self.driver = hidden  # this test only: NAPALM's check sees NAPALM's surface
        try:
            BaseTestGetters.test_method_signatures(self)
        finally:
            del self.driver

    def test_extras_are_declared_and_match_their_protocols(self) -> None:
        declared = _declared()
        extras = netfab_extras(self.driver)
        assert extras, "a netfab driver has extras (at least NetfabDriver's)"
        assert [e for e in extras if e not in declared] == [], "an extra method no Protocol declares"
        for name in extras:
            want = inspect.getfullargspec(getattr(declared[name], name))[:4]
            assert inspect.getfullargspec(getattr(self.driver, name))[:4] == want, name
        assert issubclass(self.driver, NetfabDriver)
        for proto in EXTRAS:
            assert issubclass(self.driver, proto) == (proto in self.claims), proto.__name__
        for suffix, method in self.driver.extra_artifacts.items():
            assert method in extras, f"extra_artifacts[{suffix!r}] names {method}, which the driver lacks"
