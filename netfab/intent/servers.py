"""GPU servers as built: which NIC is which (netdev, RDMA device, PCI order), on which network, rail and plane.

A profile lists every NIC of one server model. Built-in profiles are data files with their sources
(netfab/intent/server_profiles/*.yaml: DGX H100, DGX B200, a generic HGX 8-GPU); an intent can define its own
under `servers.profiles` and patch single servers under `servers.overrides` (a swapped card renumbers its
netdev). The default, `generic`, is what netfab always assumed: eth<N> / mlx5_<N>, numbered across the
cluster's networks in the order they are written, so an intent that names no profile renders as before.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import Field, model_validator

from netfab.intent.base import IntentModel
from netfab.intent.types import Count, Name

NetworkKind = Literal["backend", "frontend", "storage", "oob"]

# Linux netdev names: at most 15 bytes (IFNAMSIZ 16 with the NUL), no '/', ':' or whitespace.
_NETDEV = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$"
_RDMA = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"

GENERIC = "generic"


class ServerNic(IntentModel):
    """One NIC port as the server's OS names it."""

    netdev: str | None = Field(default=None, pattern=_NETDEV)
    """The Linux interface name (e.g. 'enp24s0np0'); the host script fails when it is missing. Omitted when
    no citable source names it: netfab then refuses to render (NET009) until servers.overrides gives it."""
    rdma_device: str | None = Field(default=None, pattern=_RDMA)
    """The RDMA device (e.g. 'mlx5_0'); omitted for a port without RDMA (a BMC, a 10G LOM) or whose name is
    not published (an RDMA network then refuses to render until servers.overrides gives it)."""
    pci: str | None = None
    """PCI address, e.g. '0000:18:00.0': how the OS orders the devices, and what mlxconfig is given."""
    networks: list[NetworkKind] = Field(min_length=1)
    """The kinds of network this port can attach to; a converged port lists several (storage, frontend)."""
    rail: Count | None = None
    """Back-end rail of this port (1-based; GPU i's NIC is on rail i+1 in a rail-optimized design)."""
    plane: Count | None = None
    """Back-end plane of this port (multi-plane designs); omitted = every plane of its rail."""
    gpu: int | None = Field(default=None, ge=0)
    """The GPU this NIC is closest to (PCIe switch), as the vendor documents it."""
    label: str = ""
    """The port's name on the chassis (e.g. 'OSFP4P2', 'slot1 port2'); the override key of a port whose
    netdev is not published."""

    @model_validator(mode="after")
    def _keyed(self) -> ServerNic:
        if self.netdev is None and not self.label:
            raise ValueError("a port without a netdev needs a label: servers.overrides names it by that")
        return self

    @property
    def key(self) -> str:
        """How servers.overrides names this port: its netdev, or its label when the netdev is unpublished."""
        return self.netdev if self.netdev is not None else self.label


class ServerProfile(IntentModel):
    """Every NIC of one server model."""

    description: str = ""
    gpus: Count = 8
    nics: list[ServerNic] = Field(min_length=1)
    sources: list[str] = []
    """Where the names come from (vendor user guide sections), so a reader can check them."""
    confidence: Literal["confirmed", "secondary", "unconfirmed"] = "confirmed"
    notes: str = ""

    @model_validator(mode="after")
    def _unique(self) -> ServerProfile:
        for what in ("key", "rdma_device"):
            seen: set[str] = set()
            for nic in self.nics:
                value = getattr(nic, what)
                if value is not None and value in seen:
                    raise ValueError(f"{'port' if what == 'key' else what} {value!r} is listed twice")
                if value is not None:
                    seen.add(value)
        return self

    def for_network(self, kind: str) -> list[ServerNic]:
        """The ports a network of this kind attaches to, in rail order (back end) or PCI order."""
        ports = [n for n in self.nics if kind in n.networks]
        return sorted(ports, key=lambda n: (n.rail or 0, n.plane or 0, self.nics.index(n)))


class NicPatch(IntentModel):
    """Change one NIC of the profile on one server (keyed by the profile's netdev, or its label where the
    profile has no netdev), or name a NIC whose names the profile does not publish."""

    netdev: str | None = Field(default=None, pattern=_NETDEV)
    rdma_device: str | None = Field(default=None, pattern=_RDMA)
    pci: str | None = None


class ServerOverride(IntentModel):
    """What differs on one server from its profile."""

    profile: Name | None = None
    """Another profile for this server (a different model in the same rack)."""
    nics: dict[str, NicPatch] = {}
    """Per profile port (its netdev, or its label): the names this server's NIC really has."""


class NcclSettings(IntentModel):
    """NCCL (and RCCL) environment knobs netfab cannot derive from the fabric."""

    gid_index: int | None = Field(default=None, ge=-1, le=255)
    """NCCL_IB_GID_INDEX. Omitted = NCCL's own RoCE v2 GID selection (-1, NCCL >= 2.21); set 3 for older
    NCCL on a default mlx5 GID table."""
    extra: dict[str, str] = {}
    """More NCCL_* variables, written as given (e.g. NCCL_IB_TIMEOUT: '22')."""

    @model_validator(mode="after")
    def _nccl_names(self) -> NcclSettings:
        bad = [k for k in self.extra if not (k.startswith(("NCCL_", "RCCL_")) and k.replace("_", "").isalnum())]
        if bad:
            raise ValueError(f"extra: {bad[0]!r} is not an NCCL_* or RCCL_* variable name")
        return self


class Servers(IntentModel):
    """The servers of the cluster: their profile, local profiles and per-server overrides."""

    profile: Name = GENERIC
    """A built-in profile (generic, dgx-h100, dgx-b200, hgx-8gpu) or one defined under `profiles`."""
    profiles: dict[Name, ServerProfile] = {}
    overrides: dict[Name, ServerOverride] = {}
    """Per server name."""
    nccl: NcclSettings = NcclSettings()


@cache
def builtin_profiles() -> dict[str, ServerProfile]:
    """The profiles shipped as data (netfab/intent/server_profiles/<name>.yaml)."""
    found: dict[str, ServerProfile] = {}
    root = resources.files("netfab.intent").joinpath("server_profiles")
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            data: Any = yaml.safe_load(entry.read_text(encoding="utf-8"))
            found[entry.name.removesuffix(".yaml")] = ServerProfile.model_validate(data)
    return found


def profile_names(servers: Servers) -> list[str]:
    return sorted({GENERIC, *builtin_profiles(), *servers.profiles})


def resolve_profile(servers: Servers, name: str) -> ServerProfile | None:
    """A named profile (intent-local first, then built-in); None for `generic` (sized per intent)."""
    if name == GENERIC:
        return None
    return servers.profiles.get(name) or builtin_profiles().get(name)
