"""`netfab lab up|down|status|exec|export|collective`: the fabric as real FRR switches in network namespaces."""

from __future__ import annotations

import json
import os
import sys
from ipaddress import IPv4Network
from pathlib import Path

import typer

from netfab.cli.options import DEFAULT_BUILD, DEFAULT_LAB, BuildRoot, Intent, LabName, OptionalIntent, Strict
from netfab.core.exitcodes import ExitCode
from netfab.core.validate import ipv4_network, typer_callback

lab_app = typer.Typer(help="Run the fabric as real FRR switches in Linux network namespaces, reached over SSH.")


def _check_format(value: str) -> str:
    if value not in ("text", "json"):
        raise typer.BadParameter(f"unknown format {value!r}; choose text or json")
    return value


def _need_root_and_frr() -> None:
    from netfab.cli.pipeline import err_console
    from netfab.lab import preflight

    missing = preflight()
    if missing:
        err_console.print(
            "netfab lab needs root and FRR on this machine and cannot run here:\n  - "
            + "\n  - ".join(missing)
            + "\nInstall with: apt-get install -y frr frr-pythontools openssh-server iproute2 nftables (as root)."
        )
        raise typer.Exit(ExitCode.INTERNAL)


def lab_inventory_dir(workdir: Path) -> Path:
    return workdir / "inventory"


@lab_app.command("up")
def up(
    intent: Intent,
    prefix: LabName = DEFAULT_LAB,
    mgmt_subnet: str | None = typer.Option(
        None,
        "--mgmt-subnet",
        callback=typer_callback(ipv4_network, "--mgmt-subnet"),
        help="Override the intent's lab.mgmt_subnet.",
    ),
    timeout: float = typer.Option(120.0, "--timeout", min=1.0, help="Seconds to wait for BGP and ECMP."),
    keep_on_failure: bool = typer.Option(False, "--keep-on-failure", help="Leave a failed lab up for a post-mortem."),
    output_format: str = typer.Option("text", "--format", callback=_check_format, help="text or json."),
    strict: Strict = False,
) -> None:
    """Bring the lab up and return once every BGP session is Established and ECMP is installed."""
    from netfab.cli.pipeline import err_console, load_plan
    from netfab.core.fs import atomic_write_text
    from netfab.lab import LabError, probe_red_ecn
    from netfab.lab import up as lab_up
    from netfab.lab.fromplan import lab_inventory_overrides, lab_spec

    _need_root_and_frr()
    loaded = load_plan(intent, strict=strict, lab=True)
    lab = loaded.intent.lab
    mode = lab.ecn_marking
    reason = "set by the intent"
    spec_mode = mode
    if mode == "auto":
        # The switch script probes the same way at run time; this is only to say which one is in force.
        mode = "red" if probe_red_ecn() else "nftables"
        reason = "this kernel has RED" if mode == "red" else "this kernel has no RED qdisc, so nftables marks CE"
    subnet = IPv4Network(mgmt_subnet) if mgmt_subnet else lab.mgmt_subnet
    spec = lab_spec(loaded.plan, prefix, subnet, ecn_mode=spec_mode)
    try:
        status = lab_up(spec, timeout=timeout, keep_on_failure=keep_on_failure)
    except LabError as exc:
        err_console.print(f"netfab lab up: {exc}")
        raise typer.Exit(ExitCode.FINDINGS) from None
    from netfab.lab import ssh_target
    from netfab.lab.fromplan import seed_applied_host_scripts

    seed_applied_host_scripts(spec, loaded.plan)

    first = spec.switches[0].name
    target = ssh_target(prefix, first)
    overrides = lab_inventory_overrides(spec, Path(target["key_file"]), Path(target["known_hosts"]))
    for name, text in overrides.items():
        atomic_write_text(lab_inventory_dir(spec.workdir) / name, text)
    if output_format == "json":
        data = status.to_dict()
        data["ecn_marking"] = {"mode": mode, "reason": reason}
        data["inventory"] = str(lab_inventory_dir(spec.workdir))
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    else:
        sys.stdout.write(status.render_text() + "\n")
        sys.stdout.write(f"  ecn marking: {mode} ({reason})\n")
        sys.stdout.write(f"  deploy to it with: netfab deploy {' '.join(map(str, intent))} --lab {prefix}\n")


@lab_app.command("down")
def down(intent: OptionalIntent = None, prefix: LabName = DEFAULT_LAB, strict: Strict = False) -> None:
    """Remove everything the lab created (also after a crash: state file plus a sweep by prefix).

    Given the intent (as `lab up` takes it), refuses to remove a lab that runs another fabric."""
    from netfab.cli.pipeline import err_console
    from netfab.lab import LabError
    from netfab.lab import down as lab_down

    _need_root_and_frr()
    if intent:
        _check_lab_fabric(intent, prefix, "down", strict)
    try:
        lab_down(prefix)
    except LabError as exc:
        err_console.print(f"netfab lab down: {exc}")
        raise typer.Exit(ExitCode.FINDINGS) from None
    err_console.print(f"lab {prefix} is down")


@lab_app.command("status")
def status(
    intent: OptionalIntent = None,
    prefix: LabName = DEFAULT_LAB,
    output_format: str = typer.Option("text", "--format", callback=_check_format, help="text or json."),
    strict: Strict = False,
) -> None:
    """BGP sessions and ECMP width per switch. Exit 1 when the lab is not ready.

    Given the intent (as `lab up` takes it), exit 2 when the lab runs another fabric."""
    from netfab.cli.pipeline import err_console
    from netfab.lab import LabError
    from netfab.lab import status as lab_status

    if intent:
        _check_lab_fabric(intent, prefix, "status", strict)
    try:
        st = lab_status(prefix)
    except LabError as exc:
        err_console.print(f"netfab lab status: {exc}")
        raise typer.Exit(ExitCode.USAGE) from None
    if output_format == "json":
        sys.stdout.write(json.dumps(st.to_dict(), indent=2, sort_keys=True, default=str) + "\n")
    else:
        sys.stdout.write(st.render_text() + "\n")
    raise typer.Exit(ExitCode.OK if st.ready else ExitCode.FINDINGS)


@lab_app.command("exec", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def exec_(
    ctx: typer.Context,
    node: str = typer.Argument(..., metavar="NODE", help="Switch or host name."),
    prefix: LabName = DEFAULT_LAB,
) -> None:
    """Run a command in a node's namespace: netfab lab exec leaf1 -- vtysh -c 'show bgp summary'."""
    from netfab.cli.pipeline import err_console
    from netfab.lab import LabError
    from netfab.lab import exec as lab_exec

    argv = list(ctx.args)
    if not argv:
        err_console.print("netfab lab exec: give a command after --")
        raise typer.Exit(ExitCode.USAGE)
    try:
        proc = lab_exec(prefix, node, argv)
    except LabError as exc:
        err_console.print(f"netfab lab exec: {exc}")
        raise typer.Exit(ExitCode.USAGE) from None
    sys.stdout.write(proc.stdout if isinstance(proc.stdout, str) else proc.stdout.decode())
    sys.stderr.write(proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode())
    raise typer.Exit(proc.returncode)


@lab_app.command("export")
def export(
    intent: Intent,
    export_format: str = typer.Option("containerlab", "--format", help="Only containerlab for now."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Default: build/<fabric>.clab.yml."),
    build_root: BuildRoot = DEFAULT_BUILD,
    strict: Strict = False,
) -> None:
    """Write a containerlab topology for the same fabric (vendor images, links from the cabling plan)."""
    from netfab.cli.pipeline import err_console, load_plan
    from netfab.core.fs import atomic_write_text
    from netfab.lab.containerlab import containerlab_topology

    if export_format != "containerlab":
        err_console.print(f"netfab lab export: unknown format {export_format!r} (supported: containerlab)")
        raise typer.Exit(ExitCode.USAGE)
    loaded = load_plan(intent, strict=strict)
    plan = loaded.plan
    # Beside build/<fabric>/, not inside it: a rebuild replaces that tree wholesale.
    target = out or build_root / f"{plan.name}.clab.yml"
    configs = os.path.relpath(build_root / plan.name / "configs", target.parent)
    atomic_write_text(target, containerlab_topology(plan, configs_dir=Path(configs).as_posix()))
    err_console.print(f"wrote {target}; startup configs are read from {configs} (run `netfab build` first)")


def _check_lab_fabric(intent: list[Path], prefix: str, verb: str, strict: bool) -> None:
    """Exit 2 when the lab at `prefix` was brought up from another fabric than `intent` describes: `lab down`
    of the wrong prefix must not tear down a colleague's lab. A lab that is not up passes for `down` (its
    sweep by prefix is harmless) and is reported by `status` itself."""
    from netfab.cli.pipeline import err_console, load_plan
    from netfab.lab import LabError
    from netfab.lab.state import load_state

    fabric = load_plan(intent, strict=strict, lab=True).plan.name
    try:
        running = load_state(prefix).name
    except LabError:
        return  # not up: `down` still sweeps by prefix, `status` reports it in its own words
    if running != fabric:
        err_console.print(
            f"netfab lab {verb}: lab {prefix} runs fabric {running}, not {fabric} (the intent's); "
            "give the lab's own prefix with --lab"
        )
        raise typer.Exit(ExitCode.USAGE)


def register(app: typer.Typer) -> None:
    from netfab.cli.collective_cmd import collective

    lab_app.command("collective")(collective)
    app.add_typer(lab_app, name="lab")


__all__ = ["register"]
