"""Where a deploy/verify/audit goes: a running lab (by prefix) or the built inventory plus user overrides."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from netfab.deploy.credentials import Credentials
from netfab.design.plan import FabricPlan
from netfab.platforms import platform_spec
from netfab.render.device import render_device

if TYPE_CHECKING:
    from netfab.deploy.engine import DeviceArtifacts


@dataclass
class Target:
    generated_inventory: Path
    overrides: list[Path]
    credentials: Credentials
    lab_prefix: str | None = None


def build_root_for(build_root: Path, lab_prefix: str | None) -> Path:
    """Where a run's build goes. The lab variant (every switch FRR, scaled down) gets a root of its own, so a
    deploy to the lab never overwrites the production build of the same fabric (nor uses its inventory)."""
    from netfab.core.validate import lab_prefix as valid_prefix

    # The prefix becomes a path component: checked here too, not only by the CLI (it was once
    # '/../../victim', and the build replaced a directory outside build/).
    return build_root / f"lab-{valid_prefix(lab_prefix)}" if lab_prefix is not None else build_root


def resolve_target(plan: FabricPlan, build_root: Path, lab_prefix: str | None, inventory_dirs: list[Path]) -> Target:
    overrides = list(inventory_dirs)
    if lab_prefix is None and not inventory_dirs and Path("inventory/hosts.yaml").is_file():
        overrides = [Path("inventory")]
    credentials = Credentials.from_env()
    if lab_prefix is not None:
        from netfab.lab.state import require_running

        workdir = Path(require_running(lab_prefix).workdir)  # never a fallback to the intent's addresses
        overrides = [workdir / "inventory", *overrides]
        # The lab's switches are reached as root with the lab's own key (paths in the overrides).
        credentials = Credentials.from_env(username="root")
    return Target(build_root / plan.name / "inventory", overrides, credentials, lab_prefix)


def device_artifacts(plan: FabricPlan, names: list[str]) -> dict[str, DeviceArtifacts]:
    """Primary config + companion files per device, in the order the platform record's outputs list them."""
    from netfab.deploy.engine import DeviceArtifacts

    out: dict[str, DeviceArtifacts] = {}
    for name in names:
        dev = plan.devices[name]
        files = render_device(dev)
        ordered = [f"configs/{o.file.format(name=name)}" for o in platform_spec(dev.platform).outputs]
        # Keyed by the file name the build wrote (leaf1.sh, spine1.frr.conf); drivers dispatch on the suffix.
        companions = {Path(p).name: files[p] for p in ordered[1:]}
        out[name] = DeviceArtifacts(config=files[ordered[0]], companions=companions)
    return out
