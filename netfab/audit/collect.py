"""Getting each device's running state: saved copies on disk (offline, CI) or the devices over Nornir.

Offline: DIR/<device><suffix>, the same names the build writes under build/<fabric>/configs/ (leaf1.cfg,
leaf1.json + leaf1.frr.conf, leaf1.conf); for a kernel part (frr) the kernel side is DIR/<device>.state.json
when present (FRRDriver.get_kernel_state() saved as JSON). Device names are user data: a name that would reach
outside DIR is refused, as the build refuses to write one.

Online: one Nornir task per device, in parallel, with a progress callback per finished device: get_config
(running) for every platform, plus the getter each further part's record names (get_kernel_state on frr,
get_frr_running_config for the FRR config in SONiC's bgp container).
Every running text is redacted (credentials and secret-bearing keywords) before anything parses it, so no
secret reaches a fact, diff, remediation file or report.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from netfab.audit.facts import KERNEL_STATE_SUFFIX, parts_of
from netfab.audit.model import Collected
from netfab.core.events import HostEvents, on_task_done
from netfab.core.outcome import Err, host_outcome
from netfab.core.redact import redact
from netfab.design.plan import DevicePlan
from netfab.render.writer import UnsafePath, safe_relpath


def redacted(text: str, secrets: tuple[str, ...]) -> str:
    """A running config as the audit may keep it: every format's secrets masked (netfab.core.redact)."""
    return redact(text, secrets)


def read_saved(directory: Path, dev: DevicePlan, secrets: tuple[str, ...] = ()) -> Collected:
    out = Collected(dev.name, origin=str(directory))
    try:
        for part in parts_of(dev.platform):
            if part.kind == "kernel":
                state = directory / safe_relpath(dev.name + KERNEL_STATE_SUFFIX)
                if state.is_file():
                    out.kernel = json.loads(state.read_text(encoding="utf-8"))
                continue
            path = directory / safe_relpath(dev.name + part.suffix)
            if path.is_file():
                out.files[part.suffix] = redacted(path.read_text(encoding="utf-8"), secrets)
    except UnsafePath as exc:
        out.error = f"device name cannot be used as a file name: {exc}"
        return out
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        out.error = f"cannot read the saved state: {exc}"
        return out
    primary = parts_of(dev.platform)[0].suffix
    if primary not in out.files:
        out.error = f"no saved running config {directory / (dev.name + primary)}"
    else:
        out.origin = str(directory / (dev.name + primary))
    return out


def collect_device(conn: Any, dev: DevicePlan, secrets: tuple[str, ...] = ()) -> Collected:
    """Read one device over an open NAPALM connection (netfab_napalm): get_config for the primary file, and
    each other part with the driver getter its platform record names (so the audit reads what the driver
    deploys to, e.g. the SONiC bgp container the driver's options select)."""
    out = Collected(dev.name, origin="device")
    primary, *others = parts_of(dev.platform)
    out.files[primary.suffix] = redacted(conn.get_config(retrieve="running")["running"], secrets)
    for part in others:
        if part.kind == "kernel":
            # Imported here: the drivers package imports NAPALM (~1 s), which an offline audit never needs.
            from netfab.deploy.drivers.protocol import ReadsKernelState

            out.kernel = conn.get_kernel_state() if isinstance(conn, ReadsKernelState) else None
            continue
        getter = getattr(conn, part.collect, None) if part.collect else None
        try:
            text = getter() if getter is not None else ""
        except Exception:  # e.g. no container access: the part is reported as not collected
            text = ""
        if text.strip():
            out.files[part.suffix] = redacted(text, secrets)
    return out


def collect_online(
    nr: Any,
    plan: Any,
    names: list[str],
    secrets: tuple[str, ...] = (),
    on_device: Callable[[str], None] | None = None,
) -> dict[str, Collected]:
    """Collect every named device through Nornir; a device that fails is Collected with an error."""
    from nornir.core.task import Result, Task

    from netfab.deploy.connection import CONNECTION_NAME

    def collect(task: Task) -> Result:
        conn = task.host.get_connection(CONNECTION_NAME, task.nornir.config)
        return Result(host=task.host, result=collect_device(conn, plan.devices[task.host.name], secrets))

    wanted = set(names)
    sub = nr.filter(filter_func=lambda h: h.name in wanted)
    if on_device is not None:
        sub = sub.with_processors([HostEvents(on_task_done(on_device))])
    try:
        agg = sub.run(task=collect, name="audit-collect", raise_on_error=False, on_good=True, on_failed=True)
    finally:
        nr.close_connections(on_good=True, on_failed=True)
    out: dict[str, Collected] = {}
    for name in names:
        if name not in agg:
            out[name] = Collected(name, error="not in the inventory", origin="device")
            continue
        outcome = host_outcome(agg[name])
        if isinstance(outcome, Err):
            out[name] = Collected(name, error=redact(f"cannot collect: {outcome.error}", secrets), origin="device")
        else:
            out[name] = outcome.value
    return out
