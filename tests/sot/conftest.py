"""The real NetBox, once per test session (tests/sot/netbox_server.py says how and why).

Tests that take the `netbox` fixture run by default, in CI too: the README's test command installs
PostgreSQL and Redis, the machines carry pyenv's 3.12, and the fixture pip-installs NetBox into its own venv.
A first bring-up on a machine pays the pip install (about a minute) and loads the committed seed of NetBox's
migrated schema before `netbox migrate` checks it (seconds, where migrating from nothing took 4-12 minutes);
later sessions reuse both from the cache (tests/sot/netbox_server.py). Wherever NetBox cannot be brought up
(no Python 3.12, no PostgreSQL or Redis, no PyPI) they skip with what is missing. NETFAB_NETBOX_TESTS=0 turns
them off (a quick local run); NETFAB_TEST_NETBOX_URL and _TOKEN point them at a NetBox that is already up instead. The
fixture's setup time is printed in the session summary.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sot.netbox_server import CannotStart, NetBoxServer, start

INTENTS = Path(__file__).parent / "intents"
_TIMINGS: dict[str, float] = {}


@pytest.fixture(scope="session")
def netbox() -> Iterator[NetBoxServer]:
    if os.environ.get("NETFAB_NETBOX_TESTS") == "0":
        pytest.skip("real-NetBox tests turned off with NETFAB_NETBOX_TESTS=0")
    began = time.monotonic()
    if os.environ.get("NETFAB_TEST_NETBOX_URL"):
        # One already up (a developer's, or `python3 tests/sot/netbox_server.py`): used as is, never stopped.
        yield NetBoxServer(
            url=os.environ["NETFAB_TEST_NETBOX_URL"], token=os.environ["NETFAB_TEST_NETBOX_TOKEN"], root=Path()
        )
        return
    try:
        server = start()
    except CannotStart as exc:
        pytest.skip(f"no real NetBox here: {exc}")
    _TIMINGS.update(server.timings)
    _TIMINGS["fixture_setup_s"] = time.monotonic() - began
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def netbox_env(netbox: NetBoxServer, monkeypatch: pytest.MonkeyPatch) -> NetBoxServer:
    monkeypatch.setenv("NETFAB_NETBOX_TOKEN", netbox.token)
    return netbox


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _TIMINGS:
        shown = ", ".join(f"{k} {v:.1f}" for k, v in sorted(_TIMINGS.items()))
        terminalreporter.write_line(f"real NetBox fixture (seconds): {shown}")
