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
    return [line.strip() for line in text.splitlines() if line.strip().startswith("mlnx_qos ")]


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
        assert f'put "$_ecn/roce_rp/enable/{prio}" {on}' in text
        assert f'put "$_ecn/roce_np/enable/{prio}" {on}' in text


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
}


def run_nic(
    text: str, tmp_path: Path, *, layout: dict[str, str], params: dict[str, list[str]] | None = None, **env: str
) -> tuple[subprocess.CompletedProcess[str], str]:
    """layout: netdev -> 'flat' (ecn/roce_rp/<param>), 'params' (ecn/roce_rp/params/<param>) or 'none'; the
    fake driver exposes `params` (side -> names) the way the real one does: the files exist before writing."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in STUBS.items():
        (bin_dir / name).write_text("#!/bin/sh\n" + textwrap.dedent(body).lstrip() + "\n")
        (bin_dir / name).chmod(0o755)
    sysfs = tmp_path / "sys"
    for netdev, kind in layout.items():
        base = sysfs / "class" / "net" / netdev
        base.mkdir(parents=True)
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
    path = tmp_path / "nic.sh"
    path.write_text(text)
    base_env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "STUB_LOG": str(tmp_path / "log"),
        "NETFAB_SYSFS": str(sysfs),
        "NETFAB_PROC_SYS": str(tmp_path / "proc"),
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
    proc, log = run_nic(script(server, fabric), tmp_path, layout={"eth0": "flat", "eth1": "params"}, params=exposed)
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


def test_missing_tools_and_sysfs_are_skipped_with_a_message(tmp_path: Path) -> None:
    fabric = plan()
    server = fabric.servers[0]
    text = (
        script(server, fabric)
        .replace("have mlnx_qos", "have mlnx_qos_absent")
        .replace("have cma_roce_tos", "have cma_roce_tos_absent")
    )
    proc, log = run_nic(text, tmp_path, layout={"eth0": "none"})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "eth1 absent, skipped" in out and "addresses and routes set on eth0\n" in out
    assert "eth0 QoS skipped: mlnx_qos not installed" in out
    assert "mlx5_0 RoCE ToS skipped" in out
    assert "eth0 DCQCN skipped" in out
    assert "mlnx_qos" not in log


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
            assert mtu.stdout.strip() == str(max(1500, server.congestion.roce_mtu + 104))
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
    assert f"\tip route replace {block} {hops}\n" in text
    # DCQCN is off in that intent (PFC + NCCL congestion control): every enable file is written 0.
    assert not server.congestion.dcqcn_enabled and not re.search(r"enable/\d\" 1", text)
