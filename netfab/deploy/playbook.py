"""Staged rollout playbooks (playbooks/*.yaml): which devices change together, how many at once, and
how many failures a wave tolerates before the rollout stops and the wave is rolled back."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from netfab.intent.types import Microseconds, us


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Selector(_Model):
    role: Literal["leaf", "spine", "superspine"] | None = None
    platform: str | None = None
    name: str | None = None
    """fnmatch glob on the device name."""


class WaveSpec(_Model):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    select: Selector = Selector()
    pick: Literal["all", "one_per_rail", "one_per_pod", "one_per_plane"] = "all"
    """Canary picks: the first matching device per rail/pod/plane."""
    group_by: Literal["rail", "pod", "plane", "su"] | None = None
    """Split into one wave per value (e.g. rail by rail)."""
    parallelism: int = Field(default=4, ge=1, le=1000)
    failure_budget: int = Field(default=0, ge=0)
    """Devices that may fail (and are rolled back alone) before the whole wave is rolled back."""


class Playbook(_Model):
    name: str
    confirm_timeout: Annotated[Microseconds, Field(ge=1_000_000)] = us("300s")
    """Commit-confirm timer: a device reverts by itself unless netfab confirms within this time (at least 1 s:
    drivers take whole seconds, and a timer of 0 would be refused per device, after every backup)."""
    settle_timeout: Microseconds = us("60s")
    """How long post-checks may take to pass (BGP needs a few seconds to re-establish)."""
    confirm: Literal["device", "client"] = "device"
    """device: every commit runs on a device-side confirm timer, and a platform without one is refused.
    client: platforms without a timer (NX-OS) are committed plainly and netfab rolls them back itself on
    failed checks; if the deploy dies after such a commit, the change stays until `netfab rollback`."""
    waves: list[WaveSpec] = Field(min_length=1)


def load_playbook(path: Path) -> Playbook:
    """Raises DocumentError (a ValueError) with file:line findings; bounded like an intent."""
    from netfab.load.document import load_model

    return load_model(path, Playbook, "playbook")
