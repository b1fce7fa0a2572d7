"""Lab lifecycle: up, wait_ready, status, exec, ssh access, config reload, down.

Bring-up order matters and is fixed: namespaces -> sysctls (accept_dad before any interface exists) ->
cables and management bridge (one root `ip -batch`) -> per switch in parallel: links up, extra sysctls,
setup script, FRR + sshd -> hosts -> wait for BGP, ECMP and sshd. Any failure tears everything down
unless asked to keep it for a post-mortem.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from pathlib import Path
from typing import Any

from netfab.lab import frr, health, netns, ssh
from netfab.lab.errors import LabError
from netfab.lab.layout import DAEMONS, DEFAULT_ROOT, Layout
from netfab.lab.probe import preflight
from netfab.lab.proc import alive, cmdline_mentions, in_netns, read_pidfile, run, stop
from netfab.lab.spec import LabHost, LabSpec, LabSwitch, spec_problems
from netfab.lab.state import (
    LabState,
    SwitchRecord,
    find_workdir,
    forget_workdir,
    load_state,
    plan_state,
    remember_workdir,
)
from netfab.lab.status import LabStatus, SwitchStatus

# Bring-up is CPU-bound on daemon start: a couple of workers per core keeps both cores busy while
# one worker waits on fork/exec, without a thundering herd of 40 zebras.
WORKERS = max(2, 2 * (os.cpu_count() or 1))
Target = str | LabSpec


def up(spec: LabSpec, *, timeout: float = 60.0, keep_on_failure: bool = False) -> LabStatus:
    """Make spec real and wait until it has converged; raise LabError (and tear down) if it does not."""
    problems = preflight() + spec_problems(spec)
    if problems:
        raise LabError(f"cannot bring up lab {spec.prefix!r}: " + "; ".join(problems))
    in_use = _leftovers(spec.prefix, spec.workdir)
    if in_use:
        raise LabError(f"lab prefix {spec.prefix!r} is already in use ({in_use}); run down({spec.prefix!r}) first")
    if problem := _workdir_problem(spec.workdir):
        raise LabError(f"cannot bring up lab {spec.prefix!r}: {problem}")
    if users := netns.subnet_in_use(spec.mgmt_subnet):
        raise LabError(
            f"cannot bring up lab {spec.prefix!r}: management subnet {spec.mgmt_subnet} overlaps "
            f"{', '.join(users)} in the root namespace; pick another subnet"
        )
    started = time.monotonic()
    state = plan_state(spec)
    try:
        timings = _build(spec, state, started)
        missing, ready_at = health.wait_ready(state, timeout, started)
        if missing:
            more = f" (and {len(missing) - 15} more)" if len(missing) > 15 else ""
            raise LabError(f"lab {spec.prefix!r} not ready after {timeout:.0f} s: " + "; ".join(missing[:15]) + more)
        _record_pids(state)
    except BaseException:
        if not keep_on_failure:
            with suppress(Exception):
                _teardown(spec.prefix, spec.workdir)
        raise
    result = _status(state)
    result.timings = {**timings, **ready_at}
    return result


def wait_ready(target: Target, timeout: float = 30.0) -> list[str]:
    """Wait for sessions, ECMP and sshd of a running lab; returns what is still missing ([] = ready)."""
    return health.wait_ready(_state(target), timeout)[0]


def down(target: Target) -> None:
    """Remove every trace of a lab, from its state file and by name prefix; safe after a crash, idempotent."""
    prefix, workdir = _where(target)
    _teardown(prefix, workdir)


def status(target: Target) -> LabStatus:
    state = _state(target)
    result = _status(state)
    result.missing = health.wait_ready(state, timeout=0)[0]
    return result


def exec(  # shadows the builtin on purpose: the verb the CLI and drivers know it by
    target: Target, node: str, argv: list[str], *, input: str | None = None, timeout: float = 60.0
) -> subprocess.CompletedProcess[str]:
    """Run argv in a node. On a switch it joins sshd's namespaces too: same hostname, same /etc/frr."""
    state = _state(target)
    if node in state.switches:
        pid = _live_pid(state.layout, node, "sshd")
        if pid:
            argv = ["nsenter", "-t", str(pid), "-n", "-u", "-m", "--", *argv]
        else:
            argv = in_netns(state.switches[node].namespace, argv)
    elif node in state.hosts:
        argv = in_netns(state.hosts[node], argv)
    else:
        raise LabError(f"lab {state.prefix!r} has no node {node!r}")
    try:
        return subprocess.run(argv, input=input, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise LabError(f"{node}: {argv[-1]!r} did not finish within {timeout:.0f} s") from exc


def ssh_target(target: Target, switch: str) -> dict[str, Any]:
    """What a deploy driver needs to reach a switch over real SSH (host-key checking on)."""
    state = _state(target)
    rec = _switch(state, switch)
    layout = state.layout
    return {
        "host": rec.mgmt_ip,
        "port": 22,
        "username": "root",
        "key_file": str(layout.client_key),
        "known_hosts": str(layout.known_hosts),
        "ssh_config": str(layout.ssh_config),
    }


def ssh_run(target: Target, switch: str, command: str, timeout: float = 30.0) -> tuple[int, str, str]:
    """Run a command on a switch over SSH (core.ssh): RejectPolicy against the lab's known_hosts."""
    t = ssh_target(target, switch)
    client = ssh.session(t["host"], Path(t["key_file"]), Path(t["known_hosts"]), timeout=timeout)
    try:
        return ssh.run_command(client, command, timeout=timeout)
    finally:
        client.close()


def reload_frr(target: Target, switch: str, new_conf_text: str, *, dry_run: bool = False) -> str:
    """Apply a whole new frr.conf to a switch via frr-reload.py (dry_run: only the diff, '' = in sync)."""
    state = _state(target)
    _switch(state, switch)
    return frr.reload(state.layout, switch, new_conf_text, dry_run=dry_run)


def running_config(target: Target, switch: str) -> str:
    state = _state(target)
    _switch(state, switch)
    return frr.running_config(state.layout, switch)


# --- bring-up -------------------------------------------------------------------------------------------


def _build(spec: LabSpec, state: LabState, started: float) -> dict[str, float]:
    layout = state.layout
    _make_dirs(layout.workdir)
    layout.marker.write_text(f"{spec.prefix}\n")
    remember_workdir(spec.prefix, spec.workdir)
    state.save()
    _write_files(spec, layout)
    timings = {"files": time.monotonic() - started}

    netns.add_namespaces(state.namespaces)
    _parallel(
        [lambda sw=sw: netns.set_sysctls(layout.ns(sw.name), netns.SWITCH_SYSCTLS) for sw in spec.switches]
        + [lambda h=h: netns.set_sysctls(layout.ns(h.name), netns.HOST_SYSCTLS) for h in spec.hosts]
    )
    netns.ip_batch(netns.cable_lines(layout, spec) + netns.mgmt_lines(layout, spec), what="cabling the lab")
    timings["plumbing"] = time.monotonic() - started

    ifnames: dict[str, list[str]] = {sw.name: [] for sw in spec.switches}
    for ln in spec.links:
        for node, ifname in ((ln.a_node, ln.a_ifname), (ln.b_node, ln.b_ifname)):
            ifnames.setdefault(node, []).append(ifname)
    _parallel(
        [lambda sw=sw: _boot_switch(spec, layout, sw, ifnames[sw.name]) for sw in spec.switches]
        + [lambda h=h: _setup_host(layout, h) for h in spec.hosts]
    )
    timings["daemons"] = time.monotonic() - started
    return {k: round(v, 3) for k, v in timings.items()}


def _record_pids(state: LabState, timeout: float = 2.0) -> None:
    """Put every daemon's pid in the state file. sshd writes its pidfile just after it starts listening,
    from the already-detached child, so a pidfile can lag the readiness checks by a moment."""
    deadline = time.monotonic() + timeout
    while True:
        state.pids = {
            sw: {d: pid for d in (*DAEMONS, "sshd") if (pid := read_pidfile(state.layout.pidfile(sw, d)))}
            for sw in state.switches
        }
        absent = [f"{sw}/{d}" for sw, pids in state.pids.items() for d in (*DAEMONS, "sshd") if d not in pids]
        if not absent:
            break
        if time.monotonic() > deadline:
            raise LabError(f"lab {state.prefix!r}: no pidfile from {', '.join(absent[:10])}")
        time.sleep(0.01)
    state.save()


def _make_dirs(path: Path) -> None:
    """mkdir -p with 0755 on every directory it creates, whatever the umask: user frr must traverse them."""
    for d in [*reversed(path.parents), path]:
        if not d.exists():
            d.mkdir(exist_ok=True)  # another lab may create a shared parent at the same moment
            d.chmod(0o755)


def _write_files(spec: LabSpec, layout: Layout) -> None:
    # /run/sshd is sshd's privilege-separation dir and /run/frr the bind-mount target; a fresh machine
    # without a started frr or ssh service may lack both.
    for d in ("/run/sshd", "/run/frr"):
        Path(d).mkdir(mode=0o755, exist_ok=True)
    _make_dirs(layout.ssh_dir)
    client_pub = ssh.write_keypair(layout.client_key, f"netfab-lab-{spec.prefix}")
    layout.authorized_keys.write_text(client_pub + "\n")
    hosts = []
    for sw in spec.switches:
        frr.prepare_switch_dir(layout, sw.name, sw.frr_conf)
        host_pub = ssh.write_keypair(layout.host_key(sw.name), f"root@{sw.name}")
        layout.sshd_config(sw.name).write_text(ssh.sshd_config_text(layout, sw.name, sw.mgmt_ip))
        hosts.append((sw.name, sw.mgmt_ip, host_pub))
    ssh.write_client_files(layout, hosts)


def _boot_switch(spec: LabSpec, layout: Layout, sw: LabSwitch, ifnames: list[str]) -> None:
    ns = layout.ns(sw.name)
    netns.ip_batch(netns.switch_lines(spec, sw.name, ifnames), ns=ns, what=f"{sw.name}: bringing links up")
    # The spec's own sysctls come after the links so per-interface keys (net.ipv4.conf.swp1...) exist.
    netns.set_sysctls(ns, dict(sw.sysctls), what=f"{sw.name}: spec sysctls")
    if sw.setup_script.strip():
        run(in_netns(ns, ["sh", "-e", "-c", sw.setup_script]), what=f"{sw.name}: setup_script")
    run(frr.boot_argv(layout, sw.name), what=f"{sw.name}: starting FRR and sshd")


def _setup_host(layout: Layout, host: LabHost) -> None:
    netns.ip_batch(netns.host_lines(host), ns=layout.ns(host.name), what=f"{host.name}: addressing")


def _parallel(jobs: Iterable[Callable[[], None]]) -> None:
    """Run jobs on the worker pool; report every failure, not only the first."""
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = [pool.submit(job) for job in jobs]
    errors = [str(f.exception()) for f in futures if f.exception() is not None]
    if errors:
        raise LabError("; ".join(errors))


# --- teardown -------------------------------------------------------------------------------------------


def _teardown(prefix: str, workdir: Path) -> None:
    layout = Layout(prefix, workdir)
    state: LabState | None = None
    with suppress(LabError):
        if layout.state_file.exists():
            state = LabState.load(layout.state_file)
    namespaces = set(netns.namespaces_with_prefix(prefix)) | set(state.namespaces if state else ())
    # Daemons (by pidfile, checked to really be this lab's) and anything else living in its namespaces
    # (ssh sessions, setup-script leftovers). SIGKILL straight away: a graceful exit (bgpd NOTIFICATIONs,
    # zebra withdrawing routes) would only be undone by deleting the namespaces, and costs ~0.2 s.
    # Zombies count as gone: PID 1 reaps late here.
    pids = {p for p in _pidfile_pids(layout) if cmdline_mentions(p, str(workdir))}
    pids |= set(netns.pids_in_namespaces(namespaces))
    survivors = stop(pids, first=signal.SIGKILL)
    # Root-side veths and the bridge go explicitly: namespace deletion frees its veths asynchronously,
    # and a leftover root-side name makes the next bring-up fail with "File exists".
    netns.delete_root_links(layout, set(netns.root_links_with_prefix(prefix)) | set(state.root_links if state else ()))
    netns.delete_namespaces(sorted(namespaces))
    for point in netns.mounts_under([f"/run/netns/{prefix}-", f"{workdir}/"]):
        run(["umount", "-l", point], check=False)
    if layout.marker.exists():  # never delete a directory this runtime did not create
        shutil.rmtree(workdir, ignore_errors=True)
    forget_workdir(prefix)
    left = _leftovers(prefix, workdir)
    if survivors or left:
        pids_left = f"; processes that would not die: {survivors}" if survivors else ""
        raise LabError(f"lab {prefix!r} not fully removed: {left or 'processes'}{pids_left}")


def _workdir_problem(workdir: Path) -> str:
    """Why FRR (running as frr) could not use this workdir, or ''."""
    if workdir.exists() and any(workdir.iterdir()):
        return f"workdir {workdir} exists and is not empty; give the lab a directory of its own"
    for parent in workdir.parents:
        if parent.exists() and not parent.stat().st_mode & 0o001:
            return (
                f"workdir {workdir} is under {parent} (mode {parent.stat().st_mode & 0o777:o}), which user frr "
                f"cannot enter; use a directory like {DEFAULT_ROOT}/<prefix>"
            )
    return ""


def _pidfile_pids(layout: Layout) -> set[int]:
    pids = set()
    for pidfile in layout.workdir.glob("switches/*/run/*.pid"):
        pid = read_pidfile(pidfile)
        if pid:
            pids.add(pid)
    return pids


def _leftovers(prefix: str, workdir: Path) -> str:
    """What of a lab with this prefix still exists, as a phrase ('' when nothing)."""
    parts = []
    if ns := netns.namespaces_with_prefix(prefix):
        parts.append(f"namespaces {', '.join(ns[:5])}{'...' if len(ns) > 5 else ''}")
    if links := netns.root_links_with_prefix(prefix):
        parts.append(f"interfaces {', '.join(links[:5])}{'...' if len(links) > 5 else ''}")
    if mounts := netns.mounts_under([f"/run/netns/{prefix}-", f"{workdir}/"]):
        parts.append(f"mounts {', '.join(mounts[:3])}")
    if Layout(prefix, workdir).marker.exists():
        parts.append(f"workdir {workdir}")
    return "; ".join(parts)


# --- looking at a running lab ---------------------------------------------------------------------------


def _where(target: Target) -> tuple[str, Path]:
    if isinstance(target, LabSpec):
        return target.prefix, target.workdir
    return target, find_workdir(target)


def _state(target: Target) -> LabState:
    if isinstance(target, LabSpec):
        path = Layout(target.prefix, target.workdir).state_file
        if not path.exists():
            raise LabError(f"lab {target.prefix!r} is not up (no state file at {path})")
        return LabState.load(path)
    return load_state(target)


def _switch(state: LabState, switch: str) -> SwitchRecord:
    try:
        return state.switches[switch]
    except KeyError:
        raise LabError(f"lab {state.prefix!r} has no switch {switch!r}") from None


def _status(state: LabState) -> LabStatus:
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        switches = list(
            pool.map(lambda rec: _switch_status(state, rec), sorted(state.switches.values(), key=lambda r: r.name))
        )
    return LabStatus(
        name=state.name, prefix=state.prefix, workdir=state.workdir, switches=switches, hosts=sorted(state.hosts)
    )


def _switch_status(state: LabState, rec: SwitchRecord) -> SwitchStatus:
    daemons = {d: _live_pid(state.layout, rec.name, d) is not None for d in (*DAEMONS, "sshd")}
    sw = SwitchStatus(name=rec.name, namespace=rec.namespace, mgmt_ip=rec.mgmt_ip, daemons=daemons)
    try:
        sw.sessions = health.sessions_from_summary(health.bgp_summary(state, rec.name))
        widths = health.route_widths(health.kernel_routes(rec.namespace))
        widths.update(health.route_widths(health.kernel_routes(rec.namespace, "-6")))
        sw.route_widths = widths
        sw.ecmp_width = max(widths.values(), default=0)
    except LabError as exc:
        sw.problems.append(str(exc))
    return sw


def _live_pid(layout: Layout, switch: str, daemon: str) -> int | None:
    """The daemon's pid if it runs and really is this switch's (a pidfile can outlive a reboot)."""
    pid = read_pidfile(layout.pidfile(switch, daemon))
    if pid and alive(pid) and cmdline_mentions(pid, f"{layout.switch_dir(switch)}/"):
        return pid
    return None
