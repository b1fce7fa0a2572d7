"""GPU server NIC scripts (templates/host/nic.sh.j2): goldens, structure, runs against stub tools and a fake
sysfs, and (as root) NETFAB_LAB=1 inside a throwaway network namespace."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
import uuid
from pathlib import Path

import pytest
from cli_roundtrip import check_golden, fabric_for

from netfab.design import FabricPlan, ServerPlan
from netfab.render.device import render_server

NO_WATCHDOG = {"watchdog": None}


def plan(**overrides: object) -> FabricPlan:
    overrides.setdefault("qos__pfc", NO_WATCHDOG)
    return fabric_for("frr", **overrides)


def script(server: ServerPlan, fabric: FabricPlan) -> str:
    return render_server(server, fabric)[f"hosts/{server.name}.sh"]


def mlnx_calls(text: str) -> list[str]:
    """The mlnx_qos command lines, without their `|| fail ...` error branch."""
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith("mlnx_qos ")]
    return [line.split(" || ")[0] for line in lines]


@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_golden_lab(index: int) -> None:
    fabric = plan()
    server = fabric.servers[index]
    check_golden("host", f"{server.name}.sh", script(server, fabric))


def test_golden_without_dcqcn() -> None:
    fabric = plan(nic__dcqcn={"enabled": False})
    check_golden("host", "host1-no-dcqcn.sh", script(fabric.servers[0], fabric))


def test_sh_syntax_and_hygiene() -> None:
    for fabric in (
        plan(),
        plan(nic__dcqcn={"enabled": False}),
        fabric_for("frr", "rail-4su.yaml", qos__pfc=NO_WATCHDOG),
    ):
        for server in fabric.servers[:8]:
            text = script(server, fabric)
            subprocess.run(["sh", "-n"], input=text, text=True, check=True)
            assert not [ln for ln in text.splitlines() if ln != ln.rstrip()], "trailing whitespace"
            assert f"server {server.name}:" in text.splitlines()[1]


def test_qos_follows_the_nic_plan() -> None:
    fabric = plan()
    server = fabric.servers[0]
    nic = server.congestion
    text = script(server, fabric)
    calls = mlnx_calls(text)
    # --trust and --dscp2prio are refused together by mlnx_qos: never in one call.
    assert not [c for c in calls if "--trust" in c and "--dscp2prio" in c]
    assert f'mlnx_qos -i "$1" --trust {nic.trust} >/dev/null' in calls
    # dscp2prio: exactly the DSCPs whose plan priority differs from mlx5's default (DSCP >> 3).
    want = {d: p for d, p in nic.dscp_to_priority.items() if p != d >> 3}
    got = {int(d): int(p) for d, p in re.findall(r"--dscp2prio set,(\d+),(\d+)", text)}
    assert got == want and got  # the lab maps everything but 26 and 48 to priority 0
    assert 26 not in got and 48 not in got
    assert f'mlnx_qos -i "$1" --pfc {",".join(map(str, nic.pfc_vector))} >/dev/null' in calls
    ets = f'mlnx_qos -i "$1" -p 0,1,2,3,4,5,6,7 -s {",".join(nic.tsa)} -t {",".join(map(str, nic.tc_bw))} >/dev/null'
    assert ets in calls
    assert sum(nic.tc_bw) == 100
    # ToS = DSCP << 2 | ECT(0): 106 for DSCP 26.
    assert nic.roce_dscp == 26 and 'cma_roce_tos -d "$2" -t 106' in text
    for n in server.nics:
        assert f"qos_nic {n.netdev} {n.rdma_device}" in text


def test_dcqcn_parameters_are_every_rp_and_np_value() -> None:
    fabric = plan()
    server = fabric.servers[0]
    nic = server.congestion
    text = script(server, fabric)
    for name, value in nic.rp.items():
        assert f'cc_set "$_ecn/roce_rp" {name} {value}' in text
    for name, value in nic.np.items():
        assert f'cc_set "$_ecn/roce_np" {name} {value}' in text
    for prio in range(8):
        on = 1 if prio in nic.dcqcn_priorities else 0
        assert f'put "$_ecn/roce_rp/enable/{prio}" {on} ||' in text
        assert f'put "$_ecn/roce_np/enable/{prio}" {on} ||' in text


def test_dcqcn_disabled_writes_zero_and_says_why() -> None:
    fabric = plan(nic__dcqcn={"enabled": False})
    text = script(fabric.servers[0], fabric)
    assert "collective" in text and "PFC" in text
    assert not re.search(r"enable/\d\" 1", text)
    assert len(re.findall(r"enable/\d\" 0", text)) == 16
    assert 'cc_set "$_ecn' not in text


# --- running nic.sh against stub tools and a fake sysfs -----------------------------------------------------

STUBS = {
    "ip": """
        echo "ip $*" >> "$STUB_LOG"
        [ "$1 $2" = "rule del" ] && exit 2
        exit 0""",
    "mlnx_qos": """
        echo "mlnx_qos $*" >> "$STUB_LOG"
        case "$*" in *--trust*--dscp2prio* | *--dscp2prio*--trust*)
            echo "trust and dscp2prio commands cannot be used at the same time."
            exit 1 ;;
        esac
        exit 0""",
    "cma_roce_tos": """
        echo "cma_roce_tos $*" >> "$STUB_LOG"
        exit 0""",
    "dcb": """
        echo "dcb $*" >> "$STUB_LOG"
        exit 0""",
    # mlnx-tools' cma_roce_mode: -m 2 writes "RoCE v2" (per device), without -m it prints the mode.
    "cma_roce_mode": """
        echo "cma_roce_mode $*" >> "$STUB_LOG"
        while getopts "d:p:m:" a; do case $a in d) dev=$OPTARG ;; m) mode=$OPTARG ;; esac; done
        if [ "${mode:-}" = 2 ]; then echo "RoCE v2" > "$STUB_LOG.$dev"; else cat "$STUB_LOG.$dev" 2>/dev/null; fi
        exit 0""",
}


def run_nic(
    text: str,
    tmp_path: Path,
    *,
    layout: dict[str, str],
    params: dict[str, list[str]] | None = None,
    rdma: tuple[str, ...] = (),
    stubs: tuple[str, ...] = ("ip", "mlnx_qos", "cma_roce_tos", "cma_roce_mode"),
    debugfs: dict[str, list[str]] | None = None,
    **env: str,
) -> tuple[subprocess.CompletedProcess[str], str]:
    """layout: netdev -> 'flat' (ecn/roce_rp/<param>), 'params' (ecn/roce_rp/params/<param>) or 'none'; the
    fake driver exposes `params` (side -> names) the way the real one does: the files exist before writing.
    rdma: RDMA devices present; stubs: the tools installed; debugfs: PCI address -> inbox cc_params files
    (each netdev's device link points at 0000:00:0N.0, N its position in `layout`)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    for name, body in STUBS.items():
        if name not in stubs:
            continue
        (bin_dir / name).write_text("#!/bin/sh\n" + textwrap.dedent(body).lstrip() + "\n")
        (bin_dir / name).chmod(0o755)
    sysfs = tmp_path / "sys"
    for dev in rdma:
        (sysfs / "class" / "infiniband" / dev).mkdir(parents=True)
    for pos, (netdev, kind) in enumerate(layout.items()):
        base = sysfs / "class" / "net" / netdev
        base.mkdir(parents=True)
        pci = sysfs / "devices" / f"0000:00:0{pos}.0"
        pci.mkdir(parents=True)
        (base / "device").symlink_to(pci)
        if kind == "none":
            continue
        for side in ("roce_rp", "roce_np"):
            (base / "ecn" / side / "enable").mkdir(parents=True)
            for prio in range(8):
                (base / "ecn" / side / "enable" / str(prio)).write_text("1\n")
            where = base / "ecn" / side / ("params" if kind == "params" else "")
            where.mkdir(exist_ok=True)
            for name in (params or {}).get(side, []):
                (where / name).write_text("-1\n")
    for name in ("all", *layout):
        f = tmp_path / "proc" / "net" / "ipv4" / "conf" / name / "rp_filter"
        f.parent.mkdir(parents=True)
        f.write_text("1\n")
    for pci_addr, names in (debugfs or {}).items():
        cc = tmp_path / "debug" / "mlx5" / pci_addr / "cc_params"
        cc.mkdir(parents=True)
        for name in names:
            (cc / name).write_text("0\n")
    path = tmp_path / "nic.sh"
    path.write_text(text)
    base_env = {
        # Only the stub dir and a minimal /bin: the host's own mlnx_qos or dcb must not leak into the test.
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "STUB_LOG": str(tmp_path / "log"),
        "NETFAB_SYSFS": str(sysfs),
        "NETFAB_PROC_SYS": str(tmp_path / "proc"),
        "NETFAB_DEBUGFS": str(tmp_path / "debug"),
        "NETFAB_CONFIGFS": str(tmp_path / "config"),
    }
    proc = subprocess.run(["sh", str(path)], capture_output=True, text=True, env={**base_env, **env}, timeout=60)
    log = (tmp_path / "log").read_text() if (tmp_path / "log").exists() else ""
    return proc, log


def test_lab_mode_does_addresses_and_routes_only(tmp_path: Path) -> None:
    fabric = plan()
    server = fabric.servers[0]
    proc, log = run_nic(script(server, fabric), tmp_path, layout={"eth0": "flat", "eth1": "flat"}, NETFAB_LAB="1")
    assert proc.returncode == 0, proc.stderr
    assert "NETFAB_LAB=1" in proc.stdout
    assert "mlnx_qos" not in log and "cma_roce_tos" not in log
    assert (tmp_path / "sys/class/net/eth0/ecn/roce_rp/enable/3").read_text() == "1\n", "sysfs untouched"
    for n in server.nics:
        table = 100 + n.index
        assert f"ip addr replace {n.address} dev {n.netdev}" in log
        assert f"ip rule add from {n.address.split('/')[0]} table {table} priority {table}" in log
        for r in n.routes:
            src = n.address.split("/")[0]
            assert f"ip route replace {r} via {n.gateway} dev {n.netdev} src {src} table {table}" in log
            assert f"ip route replace {r} via {n.gateway} dev {n.netdev}\n" in log
    assert (tmp_path / "proc/net/ipv4/conf/all/rp_filter").read_text() == "2\n"


def test_full_mode_programs_the_nic(tmp_path: Path) -> None:
    fabric = plan()
    server = fabric.servers[0]
    nic = server.congestion
    exposed = {"roce_rp": list(nic.rp), "roce_np": list(nic.np)}
    proc, log = run_nic(
        script(server, fabric), tmp_path, layout={"eth0": "flat", "eth1": "params"}, params=exposed,
        rdma=("mlx5_0", "mlx5_1"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert log.count("mlnx_qos -i eth0") == 4 and log.count("mlnx_qos -i eth1") == 4
    assert "cma_roce_tos -d mlx5_0 -t 106" in log and "cma_roce_tos -d mlx5_1 -t 106" in log
    for netdev, sub in (("eth0", ""), ("eth1", "params/")):
        ecn = tmp_path / "sys/class/net" / netdev / "ecn"
        for prio in range(8):
            on = "1\n" if prio in nic.dcqcn_priorities else "0\n"
            assert (ecn / "roce_rp/enable" / str(prio)).read_text() == on
            assert (ecn / "roce_np/enable" / str(prio)).read_text() == on
        for name, value in nic.rp.items():
            assert (ecn / "roce_rp" / sub / name).read_text() == f"{value}\n", (netdev, name)
        for name, value in nic.np.items():
            assert (ecn / "roce_np" / sub / name).read_text() == f"{value}\n", (netdev, name)


def test_a_missing_nic_changes_nothing_and_exits_1(tmp_path: Path) -> None:
    """HOST-1: on a server whose NICs are not the profile's, nothing is 'skipped' with exit 0."""
    fabric = plan()
    server = fabric.servers[0]
    proc, log = run_nic(script(server, fabric), tmp_path, layout={"eth0": "flat"}, rdma=("mlx5_0", "mlx5_1"))
    assert proc.returncode == 1
    assert "missing NIC(s): eth1; nothing was changed" in proc.stderr
    assert log == "", "no ip/mlnx_qos call before the check"
    # A missing RDMA device is just as fatal (outside the lab, where veths have none).
    proc, log = run_nic(script(server, fabric), tmp_path / "b", layout={"eth0": "flat", "eth1": "flat"})
    assert proc.returncode == 1 and "mlx5_0 mlx5_1" in proc.stderr and log == ""


def test_no_qos_tool_is_a_failure_not_a_skip(tmp_path: Path) -> None:
    fabric = plan()
    server = fabric.servers[0]
    proc, log = run_nic(
        script(server, fabric), tmp_path, layout={"eth0": "none", "eth1": "none"}, rdma=("mlx5_0", "mlx5_1"),
        stubs=("ip",),
    )  # fmt: skip
    assert proc.returncode == 1
    err = proc.stderr
    assert "eth0: lossless QoS NOT applied: neither mlnx_qos" in err
    assert "mlx5_0: RoCE ToS 106 NOT set" in err
    assert "mlx5_0: RoCE v2 NOT pinned for rdma_cm" in err
    assert "eth0: CNP and DCQCN NOT set" in err
    assert "setting(s) not applied" in err
    assert "addresses and routes set on eth0 eth1" in proc.stdout, "addressing still done"
    assert "ip addr replace" in log and "mlnx_qos" not in log


def test_inbox_driver_gets_dcb_configfs_tos_and_debugfs_cnp(tmp_path: Path) -> None:
    """HOST-2: on upstream mlx5 (no MLNX_OFED sysfs, no mlnx_qos) the QoS goes through dcb, the RoCE ToS
    through rdma_cm configfs, the CNP class and DCQCN parameters through debugfs cc_params."""
    fabric = plan()
    server = fabric.servers[0]
    nic = server.congestion
    cc = ["np_cnp_dscp", "np_cnp_prio_mode", "np_cnp_prio", "np_min_time_between_cnps"]
    cc += ["rp_" + n.removeprefix("rpg_") for n in nic.rp if n.startswith("rpg_")]
    cc += ["rp_rate_reduce_monitor_period", "rp_initial_alpha_value", "rp_dce_tcp_g", "rp_dce_tcp_rtt"]
    cc += ["rp_clamp_tgt_rate", "rp_clamp_tgt_rate_ati"]
    config = tmp_path / "config" / "rdma_cm"
    for dev in ("mlx5_0", "mlx5_1"):
        (config / dev / "ports" / "1").mkdir(parents=True)
        for name in ("default_roce_tos", "default_roce_mode"):
            (config / dev / "ports" / "1" / name).write_text("0\n")
    proc, log = run_nic(
        script(server, fabric), tmp_path, layout={"eth0": "none", "eth1": "none"}, rdma=("mlx5_0", "mlx5_1"),
        stubs=("ip", "dcb"), debugfs={"0000:00:00.0": cc, "0000:00:01.0": cc},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "dcb pfc set dev eth0 prio-pfc all:off 3:on" in log
    assert re.search(r"dcb app replace dev eth0 dscp-prio .*\b26:3\b.*\b48:6\b", log)
    assert "tc-tsa 0:ets 1:ets 2:ets 3:ets 4:ets 5:ets 6:strict 7:ets" in log
    assert (config / "mlx5_0/ports/1/default_roce_tos").read_text() == "106\n"
    assert (config / "mlx5_1/ports/1/default_roce_mode").read_text() == "RoCE v2\n"
    debug = tmp_path / "debug/mlx5/0000:00:00.0/cc_params"
    assert (debug / "np_cnp_dscp").read_text() == f"{nic.cnp_dscp}\n"
    assert (debug / "np_cnp_prio").read_text() == f"{nic.cnp_priority}\n"
    assert (debug / "np_cnp_prio_mode").read_text() == "0\n"
    assert (debug / "rp_time_reset").read_text() == f"{nic.rp['rpg_time_reset']}\n"


def test_roce_v2_is_pinned_per_rdma_device_with_or_without_configfs(tmp_path: Path) -> None:
    """HOST-3: every RDMA device's rdma_cm default RoCE mode is set to RoCE v2 and read back: through configfs
    when it is mounted (even on a kernel without default_roce_tos), else through mlnx-tools' cma_roce_mode."""
    fabric = plan()
    server = fabric.servers[0]
    text = script(server, fabric)
    # OFED tools, no configfs mounted: cma_roce_tos sets the ToS, cma_roce_mode must pin the mode.
    proc, log = run_nic(text, tmp_path / "a", layout={"eth0": "flat", "eth1": "flat"}, rdma=("mlx5_0", "mlx5_1"))
    assert "NOT pinned" not in proc.stderr and "ToS" not in proc.stderr, proc.stderr
    for dev in ("mlx5_0", "mlx5_1"):
        assert f"cma_roce_mode -d {dev} -p 1 -m 2" in log
        assert f"{dev} rdma_cm default RoCE mode: RoCE v2" in proc.stdout
    # configfs with default_roce_mode but no default_roce_tos (kernels 4.4-4.10): the mode is still pinned.
    config = tmp_path / "b" / "config" / "rdma_cm"
    for dev in ("mlx5_0", "mlx5_1"):
        (config / dev / "ports" / "1").mkdir(parents=True)
        (config / dev / "ports" / "1" / "default_roce_mode").write_text("IB/RoCE v1\n")
    proc, log = run_nic(text, tmp_path / "b", layout={"eth0": "flat", "eth1": "flat"}, rdma=("mlx5_0", "mlx5_1"))
    assert "NOT pinned" not in proc.stderr, proc.stderr
    assert "cma_roce_mode" not in log, "configfs is there: no tool needed"
    assert (config / "mlx5_1/ports/1/default_roce_mode").read_text() == "RoCE v2\n"
    # A mode that does not read back as RoCE v2 (the driver refused it) is a failure, not a silent pass.
    config = tmp_path / "c" / "config" / "rdma_cm"
    (config / "mlx5_0" / "ports" / "1" / "default_roce_mode").mkdir(parents=True)  # unwritable
    proc, _ = run_nic(text, tmp_path / "c", layout={"eth0": "flat", "eth1": "flat"}, rdma=("mlx5_0", "mlx5_1"))
    assert proc.returncode == 1
    assert "mlx5_0: RoCE v2 NOT pinned for rdma_cm (default_roce_mode reads 'nothing')" in proc.stderr


# --- the real thing: NETFAB_LAB=1 in a throwaway network namespace -----------------------------------------


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip"), reason="needs root and ip to create a netns")
def test_lab_mode_in_a_namespace_is_idempotent(tmp_path: Path) -> None:
    fabric = plan()
    server = fabric.servers[0]
    path = tmp_path / "nic.sh"
    path.write_text(script(server, fabric))
    ns = f"netfab-t-{uuid.uuid4().hex[:8]}"
    nsx = ["ip", "netns", "exec", ns]
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for n in server.nics:
            peer = f"leaf{n.index}"
            subprocess.run(["ip", "-n", ns, "link", "add", n.netdev, "type", "veth", "peer", "name", peer], check=True)
            subprocess.run(["ip", "-n", ns, "link", "set", peer, "up"], check=True)
        for _ in range(2):
            proc = subprocess.run(
                [*nsx, "sh", str(path)],
                capture_output=True,
                text=True,
                timeout=60,
                env={**os.environ, "NETFAB_LAB": "1"},
            )
            assert proc.returncode == 0, proc.stderr
        rules = subprocess.run([*nsx, "ip", "rule"], capture_output=True, text=True).stdout
        for n in server.nics:
            src = n.address.split("/")[0]
            table = 100 + n.index
            assert len(re.findall(rf"from {re.escape(src)} lookup {table}\b", rules)) == 1, rules
            routes = subprocess.run(
                [*nsx, "ip", "route", "show", "table", str(table)], capture_output=True, text=True
            ).stdout
            assert f"{n.routes[0]} via {n.gateway} dev {n.netdev}" in routes
            mtu = subprocess.run([*nsx, "cat", f"/sys/class/net/{n.netdev}/mtu"], capture_output=True, text=True)
            assert mtu.stdout.strip() == str(server.congestion.host_mtu) == "4200"
        main = subprocess.run([*nsx, "ip", "route"], capture_output=True, text=True).stdout
        for n in server.nics:
            assert f"{n.routes[0]} via {n.gateway} dev {n.netdev}" in main
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


def test_nics_sharing_a_block_share_one_ecmp_route() -> None:
    """3-tier pods put every NIC of a server in one host block: the main table spreads it over all NICs."""
    two_fields = ["src_ip", "dst_ip"]
    fabric = fabric_for("frr", "clos3-24k.yaml", qos__pfc=NO_WATCHDOG, load_balancing__hash_fields=two_fields)
    server = fabric.servers[0]
    text = script(server, fabric)
    block = server.nics[0].routes[0]
    assert all(n.routes == (block,) for n in server.nics)
    hops = " ".join(f"nexthop via {n.gateway} dev {n.netdev}" for n in server.nics)
    assert f"\nip route replace {block} {hops}\n" in text
    # DCQCN is off in that intent (PFC + NCCL congestion control): every enable file is written 0.
    assert not server.congestion.dcqcn_enabled and not re.search(r"enable/\d\" 1", text)


def test_shared_sections_are_each_servers_own() -> None:
    """The QoS and DCQCN sections are rendered once per network and port names (host_section) and reused: every
    script must still be what rendering them for that very server gives, its own name and NICs included, also
    for a server whose NICs are named apart from the others'."""
    import dataclasses

    import jinja2

    from netfab.render import environment as templates

    fabric = plan()
    renamed = dataclasses.replace(
        fabric.servers[1], nics=[dataclasses.replace(n, netdev=f"ens{n.index}np0") for n in fabric.servers[1].nics]
    )
    servers = [*fabric.servers, renamed, dataclasses.replace(fabric.servers[0], name="gpu-x")]
    # A separate environment (an overlay would share, and so change, the globals of the one builds use).
    reference = templates.new_environment(templates._GENERATOR)

    @jinja2.pass_environment
    def unshared(env: jinja2.Environment, template: str, server: ServerPlan, nic: object) -> str:
        return env.get_template(template).render(server=server, nic=nic)

    reference.globals["host_section"] = unshared
    for server in servers:
        context = {"server": server, "nic": server.congestion, "fabric": fabric.name}
        text = script(server, fabric)
        assert text == reference.get_template("host/nic.sh.j2").render(context), server.name
        assert f"qos_nic {server.nics[0].netdev} " in text and f'echo "{server.name}: $1 mlnx_qos' in text
    assert "qos_nic ens0np0 " in script(renamed, fabric)


def test_a_shared_section_reads_nothing_beyond_its_key() -> None:
    """A section is given a stand-in server holding only what its cache key holds: reading any other field is
    an error (StrictUndefined), never another server's value."""
    import jinja2

    from netfab.render.environment import host_section

    fabric = plan()
    sections = {"ok": "{{ server.name }} {{ server.nics[0].netdev }}", "bad": "{{ server.profile }}"}
    env = jinja2.Environment(loader=jinja2.DictLoader(sections), undefined=jinja2.StrictUndefined)
    server = fabric.servers[0]
    assert host_section(env, "ok", server, server.congestion) == f"{server.name} {server.nics[0].netdev}"
    with pytest.raises(jinja2.UndefinedError):
        host_section(env, "bad", server, server.congestion)
