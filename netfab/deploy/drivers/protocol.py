"""What netfab's stages may ask of a driver beyond NAPALM's NetworkDriver, as typed Protocols.

deploy, verify and audit talk to any NAPALM driver (napalm's own eos, junos, nxos as well as netfab's frr,
nvue and sonic); only netfab's drivers have the extras. Each extra is a small runtime-checkable Protocol, so a
caller asks `isinstance(conn, ReadsKernelState)` instead of probing with getattr, and the type checker knows
the method's signature and return type at the call. `NetfabDriver` is what all three netfab drivers share.
The TYPE_CHECKING block at the end makes mypy prove each driver class satisfies the Protocols it claims.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, runtime_checkable

from netfab.deploy.kernel_state import KernelState


class QosState(TypedDict):
    """verify's QoS check input: intended and in-force values under the same keys, and notes."""

    expected: dict[str, Any]
    actual: dict[str, Any]
    notes: list[str]


@runtime_checkable
class ReadsRouteEcmpWidth(Protocol):
    def get_route_ecmp_width(self, prefixes: Iterable[str] | None = None) -> dict[str, int]:
        """{prefix: next hops installed in the FIB} (all routes, or just `prefixes`; absent = 0)."""
        ...


@runtime_checkable
class ReadsQosState(Protocol):
    def get_qos_state(self) -> QosState: ...


@runtime_checkable
class ReadsKernelState(Protocol):
    def get_kernel_state(self) -> KernelState:
        """The Linux side in force (netfab.deploy.kernel_state)."""
        ...


@runtime_checkable
class StagesCompanions(Protocol):
    def load_companions(self, companions: Mapping[str, str]) -> None:
        """Stage the platform's extra build outputs with the candidate, keyed by file name or suffix."""
        ...


@runtime_checkable
class BacksUpCompanions(Protocol):
    def get_applied_companions(self) -> dict[str, str]:
        """The companion files this driver last applied, keyed for load_companions (the deploy journals them
        as the backup `netfab rollback` restores: frr's host script)."""
        ...


@runtime_checkable
class StagesHostScript(Protocol):
    def load_host_script(self, text: str) -> None: ...


@runtime_checkable
class StagesFrrCandidate(Protocol):
    def load_frr_candidate(self, text: str) -> None: ...


@runtime_checkable
class ReadsFrrRunningConfig(Protocol):
    def get_frr_running_config(self) -> str:
        """The running config of an FRR that is not the device's primary config (SONiC's bgp container)."""
        ...


@runtime_checkable
class NetfabDriver(ReadsRouteEcmpWidth, StagesCompanions, Protocol):
    """Every netfab driver: the device-side commit-confirm timer is visible, companions are staged, and
    per-route ECMP width can be read."""

    def has_pending_commit(self) -> bool: ...


EXTRAS: tuple[type[Any], ...] = (
    ReadsRouteEcmpWidth,
    ReadsQosState,
    ReadsKernelState,
    StagesCompanions,
    BacksUpCompanions,
    StagesHostScript,
    StagesFrrCandidate,
    ReadsFrrRunningConfig,
)
"""Every extra Protocol (the conformance tests check each driver's methods against these signatures)."""


if TYPE_CHECKING:  # static proof, for mypy only: each driver is what it claims
    from netfab.deploy.drivers.frr import FRRDriver
    from netfab.deploy.drivers.nvue import NVUEDriver
    from netfab.deploy.drivers.sonic import SonicDriver

    def _frr(
        d: FRRDriver,
    ) -> tuple[NetfabDriver, ReadsKernelState, ReadsQosState, StagesHostScript, BacksUpCompanions]:
        return d, d, d, d, d

    def _nvue(d: NVUEDriver) -> NetfabDriver:
        return d

    def _sonic(d: SonicDriver) -> tuple[NetfabDriver, StagesFrrCandidate, ReadsFrrRunningConfig]:
        return d, d, d
