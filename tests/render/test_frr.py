"""FRR platform (Linux + FRR switches): frr.conf checked by FRR's own parsers, linux.sh executed against stub
tools and (as root) inside a throwaway network namespace, goldens, and structural checks that do not trust the
golden."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_roundtrip import check_golden, fabric_for
from frr_parser import vtysh_check

from netfab.design import DevicePlan, FabricPlan
from netfab.render.device import render_device
from netfab.render.environment import UnsupportedFeature

VTYSH = shutil.which("vtysh")
BGPD = "/usr/lib/frr/bgpd"
NO_WATCHDOG = {"watchdog": None}  # Linux has no PFC watchdog: lint CAP005, the renderer refuses it

# Linux Documentation/networking/ip-sysctl.rst, fib_multipath_hash_fields: the test's own copy, not data.yaml's.
KERNEL_BITS = {
    "src_ip": 0x1,
    "dst_ip": 0x2,
    "ip_protocol": 0x4,
    "ipv6_flow_label": 0x8,
    "src_port": 0x10,
    "dst_port": 0x20,
    "inner_src_ip": 0x40,
    "inner_dst_ip": 0x80,
    "inner_ip_protocol": 0x100,
    "inner_src_port": 0x400,
    "inner_dst_port": 0x800,
}
FIVE_TUPLE = ["src_ip", "dst_ip", "ip_protocol", "src_port", "dst_port"]


def plan(addressing: str = "unnumbered", **overrides: object) -> FabricPlan:
    overrides.setdefault("qos__pfc", NO_WATCHDOG)
    return fabric_for("frr", underlay__addressing=addressing, **overrides)


def files(dev: DevicePlan) -> tuple[str, str]:
    out = render_device(dev)
    return out[f"configs/{dev.name}.conf"], out[f"configs/{dev.name}.sh"]


def all_lab_devices() -> Iterator[tuple[str, DevicePlan]]:
    for addressing in ("unnumbered", "p2p31"):
        for dev in plan(addressing).devices.values():
            yield addressing, dev


# --- goldens ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["leaf1", "leaf2", "leaf3", "leaf4", "spine1", "spine2"])
def test_golden_lab(name: str) -> None:
    conf, script = files(plan().devices[name])
    check_golden("frr", f"{name}.conf", conf)
    check_golden("frr", f"{name}.sh", script)


def test_golden_p2p31_leaf() -> None:
    conf, script = files(plan("p2p31").devices["leaf1"])
    check_golden("frr", "p2p31-leaf1.conf", conf)
    check_golden("frr", "p2p31-leaf1.sh", script)


def test_text_hygiene() -> None:
    for _, dev in all_lab_devices():
        for text in files(dev):
            assert text.endswith("\n") and not text.endswith("\n\n\n")
            assert not [line for line in text.splitlines() if line != line.rstrip()], f"{dev.name}: trailing space"
            assert any(f"device {dev.name}," in line for line in text.splitlines()[:2]), "header names the device"


# --- FRR's own parsers --------------------------------------------------------------------------------------


def bgp_block(text: str) -> str:
    """The route-maps and `router bgp` stanza: what bgpd alone must accept (interfaces belong to zebra)."""
    lines = text.splitlines()
    keep = ["frr defaults datacenter"]
    inside = False
    for line in lines:
        if line.startswith(("router bgp", "route-map")):
            inside = True
        if inside:
            keep.append(line)
        if line == "exit":
            inside = False
    return "\n".join(keep) + "\n"


def bgpd_dryrun(text: str, tmp_path: Path) -> list[str]:
    """bgpd -C executes each command in bgpd itself, so it also catches what the parser allows but bgpd
    refuses (e.g. a member of an undefined peer group). -Z: no zebra, -p 0: no listener, -S: no setuid."""
    path = tmp_path / "bgpd.conf"
    path.write_text(bgp_block(text), encoding="utf-8")
    proc = subprocess.run(
        [BGPD, "-C", "-S", "-Z", "-p", "0", "-F", "datacenter", "--log", "stdout", "-f", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    out = proc.stdout + proc.stderr
    return [ln for ln in out.splitlines() if re.search(r"Config Failed|No such command|Unknown command|% ", ln)]


needs_vtysh = pytest.mark.skipif(VTYSH is None, reason="vtysh not installed (FRR 8.4 is installed in CI)")
needs_bgpd = pytest.mark.skipif(
    not (os.access(BGPD, os.X_OK) and os.geteuid() == 0), reason="needs /usr/lib/frr/bgpd and root (bgpd -S)"
)


@needs_vtysh
def test_vtysh_accepts_every_lab_config(tmp_path: Path) -> None:
    for addressing, dev in all_lab_devices():
        proc = vtysh_check(files(dev)[0], tmp_path)
        assert proc.returncode == 0, f"{addressing} {dev.name}: {proc.stdout}{proc.stderr}"


@needs_vtysh
def test_vtysh_check_can_fail(tmp_path: Path) -> None:
    conf = files(plan().devices["leaf1"])[0].replace(" bgp bestpath as-path multipath-relax", " bgp bestpath bogus")
    assert vtysh_check(conf, tmp_path).returncode != 0


@needs_bgpd
def test_bgpd_executes_every_bgp_stanza(tmp_path: Path) -> None:
    for addressing, dev in all_lab_devices():
        assert bgpd_dryrun(files(dev)[0], tmp_path) == [], f"{addressing} {dev.name}"


@needs_bgpd
def test_bgpd_check_can_fail(tmp_path: Path) -> None:
    conf = files(plan().devices["leaf1"])[0].replace(" neighbor fabric peer-group\n", "")
    assert bgpd_dryrun(conf, tmp_path), "a member of an undefined peer group must be reported"


# --- structure (independent of the golden) ------------------------------------------------------------------


@pytest.mark.parametrize("addressing", ["unnumbered", "p2p31"])
def test_every_plan_neighbor_network_and_address_is_rendered(addressing: str) -> None:
    for dev in plan(addressing).devices.values():
        conf = files(dev)[0]
        lines = set(conf.splitlines())
        bgp = dev.bgp
        assert bgp is not None
        assert f"router bgp {bgp.asn}" in lines and f" bgp router-id {bgp.router_id}" in lines
        assert f"  maximum-paths {bgp.max_paths}" in lines
        assert " bgp bestpath as-path multipath-relax" in lines
        for n in bgp.neighbors:
            if n.address is None:
                assert f" neighbor {n.interface} interface peer-group {n.peer_group}" in lines
                assert f" neighbor {n.interface} remote-as {n.remote_as}" in lines
            else:
                assert f" neighbor {n.address} peer-group {n.peer_group}" in lines
                assert f" neighbor {n.address} remote-as {n.remote_as}" in lines
        assert len(re.findall(r"^ neighbor \S+ remote-as ", conf, re.M)) == len(bgp.neighbors)
        assert [ln[len("  network ") :] for ln in conf.splitlines() if ln.startswith("  network ")] == bgp.networks
        assert f" ip address {dev.loopback}/32" in lines
        for iface in dev.interfaces:
            stanza = conf.split(f"interface {iface.name}\n", 1)[1].split("\nexit\n", 1)[0]
            if iface.address:
                assert f" ip address {iface.address}" in stanza
            else:
                assert iface.role != "host" and " no ipv6 nd suppress-ra" in stanza
        # Unnumbered sessions also carry the IPv6 AF (LAB.md checks both); /31 sessions are IPv4 only.
        assert ("address-family ipv6 unicast" in conf) is (addressing == "unnumbered")
        # Routes must flow under either FRR profile: a permit policy in and out on the group.
        assert "route-map NETFAB-FABRIC permit 10" in lines
        assert "  neighbor fabric route-map NETFAB-FABRIC in" in lines
        assert "log " not in conf, "logging is the daemon's --log option, never a file outside the lab dir"


def test_bfd_on_the_peer_group_when_asked() -> None:
    conf = files(plan(underlay__bfd=True).devices["leaf1"])[0]
    assert " neighbor fabric bfd" in conf.splitlines()
    assert " neighbor fabric bfd" not in files(plan().devices["leaf1"])[0]


@pytest.mark.parametrize(
    ("overrides", "needle"),
    [
        ({"load_balancing__hash_fields": [*FIVE_TUPLE, "rocev2_dest_qp"]}, "BTH"),
        ({"load_balancing__hash_fields": [*FIVE_TUPLE, "ingress_port"]}, "ingress-port"),
        ({"load_balancing__adaptive_routing": True}, "adaptive routing"),
        ({"load_balancing__packet_spraying": True}, "packet spraying"),
        ({"qos__pfc": {}}, "PFC watchdog"),
        ({"qos__trust": "pcp"}, "trust pcp"),
        ({"qos__buffers": {"headroom": "200KB"}}, "headroom"),
    ],
)
def test_unsupported_features_are_refused(overrides: dict[str, object], needle: str) -> None:
    dev = fabric_for("frr", **{"qos__pfc": NO_WATCHDOG, **overrides}).devices["leaf1"]
    with pytest.raises(UnsupportedFeature, match=needle):
        render_device(dev)


# --- running linux.sh against stub tools --------------------------------------------------------------------

STUBS = {
    # tc: records its arguments; STUB_RED=fail makes every RED qdisc unknown, as on the lab kernels.
    "tc": """
        echo "tc $*" >> "$STUB_LOG"
        if [ "${STUB_RED:-ok}" = fail ]; then
            case " $* " in *" red "*) echo "Error: Specified qdisc kind is unknown." >&2; exit 2 ;; esac
        fi
        exit 0""",
    "nft": """
        echo "nft $*" >> "$STUB_LOG"
        [ "$*" = "-f -" ] && cat > "$STUB_DIR/nft.in"
        exit 0""",
    # dcb on a veth: every call fails (reference/LAB.md).
    "dcb": """
        echo "dcb $*" >> "$STUB_LOG"
        echo "Attribute read: Operation not supported" >&2
        exit 1""",
    "ip": """
        echo "ip $*" >> "$STUB_LOG"
        [ "$1 $2" = "rule del" ] && exit 2
        exit 0""",
}
SYSCTLS = [
    "net/ipv4/ip_forward",
    "net/ipv6/conf/all/forwarding",
    "net/ipv4/conf/all/rp_filter",
    "net/ipv4/conf/default/rp_filter",
    "net/ipv4/fib_multipath_hash_policy",
    "net/ipv4/fib_multipath_hash_fields",
    "net/ipv4/fib_multipath_hash_seed",
    "net/ipv6/fib_multipath_hash_policy",
    "net/ipv6/fib_multipath_hash_fields",
]


class Run:
    def __init__(self, proc: subprocess.CompletedProcess[str], root: Path) -> None:
        self.proc = proc
        self.root = root
        self.out = proc.stdout
        self.log = (root / "log").read_text() if (root / "log").exists() else ""

    def sysctl(self, name: str) -> str:
        return (self.root / "proc" / name).read_text().strip()

    @property
    def nft_input(self) -> str:
        return (self.root / "nft.in").read_text()


def run_script(script: str, tmp_path: Path, ports: list[str], *, no_seed: bool = False, **env: str) -> Run:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in STUBS.items():
        stub = bin_dir / name
        stub.write_text("#!/bin/sh\n" + textwrap.dedent(body).lstrip() + "\n")
        stub.chmod(0o755)
    for name in SYSCTLS + [f"net/ipv4/conf/{p}/rp_filter" for p in ports]:
        if no_seed and name.endswith("hash_seed"):
            continue
        f = tmp_path / "proc" / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("1\n")
    for p in ports:
        (tmp_path / "sys" / "class" / "net" / p).mkdir(parents=True, exist_ok=True)
    path = tmp_path / "linux.sh"
    path.write_text(script)
    base = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "STUB_LOG": str(tmp_path / "log"),
        "STUB_DIR": str(tmp_path),
        "NETFAB_PROC_SYS": str(tmp_path / "proc"),
        "NETFAB_SYSFS": str(tmp_path / "sys"),
    }
    proc = subprocess.run(["sh", str(path)], capture_output=True, text=True, env={**base, **env}, timeout=60)
    return Run(proc, tmp_path)


def test_sh_syntax_of_every_script() -> None:
    for _, dev in all_lab_devices():
        subprocess.run(["sh", "-n"], input=files(dev)[1], text=True, check=True)


def expected_policy(fields: set[str], family: str) -> int:
    builtin = {
        "ipv4": {0: {"src_ip", "dst_ip"}, 1: set(FIVE_TUPLE)},
        "ipv6": {0: {"src_ip", "dst_ip", "ipv6_flow_label", "ip_protocol"}, 1: set(FIVE_TUPLE)},
    }[family]
    own = fields - {"ipv6_flow_label"} if family == "ipv4" else fields
    return next((p for p, f in builtin.items() if f == own), 3)


@pytest.mark.parametrize(
    "fields",
    [
        FIVE_TUPLE,
        ["src_ip", "dst_ip"],
        ["src_ip", "dst_ip", "src_port"],
        ["src_ip", "dst_ip", "ip_protocol", "ipv6_flow_label"],
        [*FIVE_TUPLE, "ipv6_flow_label"],
        ["inner_src_ip", "inner_dst_ip", "inner_ip_protocol", "inner_src_port", "inner_dst_port", "src_port"],
    ],
)
def test_kernel_hash_matches_the_fields(fields: list[str], tmp_path: Path) -> None:
    dev = plan(load_balancing__hash_fields=fields).devices["leaf1"]
    run = run_script(files(dev)[1], tmp_path, [i.name for i in dev.interfaces])
    assert run.proc.returncode == 0, run.proc.stderr
    mask = sum(KERNEL_BITS[f] for f in set(fields))
    assert int(run.sysctl("net/ipv6/fib_multipath_hash_fields"), 16) == mask
    assert int(run.sysctl("net/ipv4/fib_multipath_hash_fields"), 16) == mask & ~KERNEL_BITS["ipv6_flow_label"]
    for family in ("ipv4", "ipv6"):
        assert int(run.sysctl(f"net/{family}/fib_multipath_hash_policy")) == expected_policy(set(fields), family)
    assert run.sysctl("net/ipv4/fib_multipath_hash_seed") == str(dev.hash_seed)
    assert run.sysctl("net/ipv4/ip_forward") == "1" and run.sysctl("net/ipv4/conf/all/rp_filter") == "0"


def test_hash_seed_is_skipped_on_old_kernels(tmp_path: Path) -> None:
    dev = plan().devices["leaf1"]
    run = run_script(files(dev)[1], tmp_path, [i.name for i in dev.interfaces], no_seed=True)
    assert run.proc.returncode == 0, run.proc.stderr
    assert "seed not set (kernel < 6.11)" in run.out


def tc_red_eval_ewma(qmin: int, burst: int, avpkt: int) -> int:
    """iproute2 tc/tc_red.c, so the test knows which EWMA constant tc will derive from our burst."""
    a = burst + 1 - qmin / avpkt
    if a < 1.0:
        return -1
    w = 0.5
    for wlog in range(1, 32):
        if a <= (1 - (1 - w) ** burst) / w:
            return wlog
        w /= 2
    return -1


def red_args(log: str) -> list[dict[str, str]]:
    """Keyword/value pairs of each RED qdisc the script installed; a RED qdisc without `ecn` is an error."""
    found = []
    for line in log.splitlines():
        if " red " in line and line.startswith("tc qdisc"):
            words = line.split(" red ", 1)[1].split()
            assert words[-1] == "ecn", f"RED without ecn marks by dropping: {line}"
            found.append(dict(zip(words[:-1:2], words[1:-1:2], strict=True)))
    return found


@pytest.mark.parametrize(
    ("kmin", "kmax", "pmax", "weight", "avpkt"),
    [
        (150000, 1500000, 100, 0, "1500"),
        (123456, 2000000, 20, 0, "4150"),
        (100000, 400000, 5, 2, "1500"),
        (950000, 3000000, 7, 3, "1000"),
        (30000, 300000, 50, 5, "1500"),
    ],
)
def test_red_carries_the_intents_ecn_numbers(
    kmin: int, kmax: int, pmax: int, weight: int, avpkt: str, tmp_path: Path
) -> None:
    classes = [
        {
            "name": "roce",
            "kind": "roce",
            "dscp": [26],
            "priority": 3,
            "lossless": True,
            "weight": 60,
            "ecn": {"kmin": f"{kmin}B", "kmax": f"{kmax}B", "pmax": pmax, "weight": weight},
        },
        {"name": "cnp", "kind": "cnp", "dscp": [48], "priority": 6, "scheduling": "strict"},
        {"name": "default", "kind": "default", "priority": 0, "weight": 40},
    ]
    dev = plan(qos__classes=classes).devices["leaf1"]
    run = run_script(files(dev)[1], tmp_path, [i.name for i in dev.interfaces], NETFAB_ECN_AVPKT=avpkt)
    assert run.proc.returncode == 0, run.proc.stderr
    assert run.out.splitlines()[-1] == "ecn: red"
    reds = red_args(run.log)
    assert len(reds) == len(dev.interfaces)
    for red in reds:
        assert (int(red["min"]), int(red["max"]), int(red["limit"])) == (kmin, kmax, 4 * kmax)
        assert float(red["probability"]) == pytest.approx(min(pmax / 100, 0.99999999))
        # tc turns burst into the EWMA weight; it must land on the intent's weight (1 is Linux's minimum).
        assert tc_red_eval_ewma(kmin, int(red["burst"]), int(avpkt)) == max(weight, 1)
        assert red["bandwidth"] == "34000mbit"  # 100G ports, capped at tc's 32-bit bytes/s


def test_nftables_phantom_queue_when_red_is_missing(tmp_path: Path) -> None:
    dev = plan().devices["leaf1"]
    roce = dev.qos.roce_queue
    assert roce is not None and roce.ecn is not None
    run = run_script(files(dev)[1], tmp_path, [i.name for i in dev.interfaces], STUB_RED="fail")
    assert run.proc.returncode == 0, run.proc.stderr
    assert "ecn: nftables" in run.out.splitlines()
    assert "Specified qdisc kind is unknown" in run.out
    nft = run.nft_input
    assert nft.startswith("table inet netfab_ecn\ndelete table inet netfab_ecn\n"), "re-runs must replace"
    pps = 100_000 * 1_000_000 * 95 // 100 // 8 // 1500
    burst = math.ceil(roce.ecn.kmin_bytes / 1500)
    for iface in dev.interfaces:
        assert f"limit pq3_{iface.name} {{ rate over {pps}/second burst {burst} packets }}" in nft
        assert f'"{iface.name}" : "pq3_{iface.name}"' in nft
    assert "ip dscp { 26 } ip ecn { ect0, ect1 } limit name oifname map @pq3 ip ecn set ce" in nft
    assert "ip6 dscp { 26 } ip6 ecn { ect0, ect1 } limit name oifname map @pq3 ip6 ecn set ce" in nft
    assert "tbf" not in run.log, "no shaper unless NETFAB_SHAPE_MBIT asks for one"


def test_shaper_rate_drives_the_phantom_queue(tmp_path: Path) -> None:
    dev = plan().devices["leaf1"]
    run = run_script(files(dev)[1], tmp_path, [i.name for i in dev.interfaces], STUB_RED="fail", NETFAB_SHAPE_MBIT="20")
    assert run.proc.returncode == 0, run.proc.stderr
    assert f"rate over {20 * 1_000_000 * 95 // 100 // 8 // 1500}/second" in run.nft_input
    for iface in dev.interfaces:
        assert f"dev {iface.name} root handle 1: tbf rate 20mbit" in run.log


@pytest.mark.parametrize(("mode", "rc", "last"), [("off", 0, "ecn: off"), ("nftables", 0, "ecn: nftables")])
def test_ecn_mode_override(mode: str, rc: int, last: str, tmp_path: Path) -> None:
    dev = plan().devices["leaf1"]
    run = run_script(files(dev)[1], tmp_path, [i.name for i in dev.interfaces], ECN_MODE=mode)
    assert run.proc.returncode == rc and run.out.splitlines()[-1] == last
    assert "red" not in " ".join(ln for ln in run.log.splitlines() if ln.startswith("tc"))


def test_ecn_mode_red_fails_loudly_without_red(tmp_path: Path) -> None:
    dev = plan().devices["leaf1"]
    run = run_script(files(dev)[1], tmp_path, [i.name for i in dev.interfaces], ECN_MODE="red", STUB_RED="fail")
    assert run.proc.returncode == 1 and "ecn: red failed" in run.proc.stderr


def test_bad_ecn_mode_is_a_usage_error(tmp_path: Path) -> None:
    dev = plan().devices["leaf1"]
    run = run_script(files(dev)[1], tmp_path, [i.name for i in dev.interfaces], ECN_MODE="wred")
    assert run.proc.returncode == 2


def test_dcb_on_veth_reports_pfc_cannot_run(tmp_path: Path) -> None:
    dev = plan().devices["leaf1"]
    script = files(dev)[1]
    assert "PFC CANNOT RUN ON VETH" in script
    # PFC on priority 3 of every lossless port, headroom from the cable: metres x Gbit/s x 10 bits.
    for iface in dev.interfaces:
        delay = int(iface.cable_m * iface.speed_gbps * 10)
        assert f"dcb_port {iface.name} prio-pfc all:off 3:on delay {delay}" in script
    assert "dscp-prio 26:3 48:6" in script and "tc-tsa 0:ets 1:ets 2:ets 3:ets 4:ets 5:ets 6:strict 7:ets" in script
    assert "tc-bw 0:50 1:0 2:0 3:50 4:0 5:0 6:0 7:0" in script
    run = run_script(script, tmp_path, [i.name for i in dev.interfaces], STUB_RED="fail")
    pfc = next(line for line in run.out.splitlines() if line.startswith("pfc:"))
    assert pfc.startswith("pfc: unsupported on swp1 swp2 swp3 swp4") and "PFC cannot run on veth" in pfc


def test_absent_ports_are_skipped_not_fatal(tmp_path: Path) -> None:
    dev = plan().devices["leaf1"]
    run = run_script(files(dev)[1], tmp_path, ["swp3"], STUB_RED="fail")
    assert run.proc.returncode == 0, run.proc.stderr
    assert "mtu: ports absent, skipped: swp1 swp2 swp4" in run.out
    assert "ip link set dev swp3 mtu 9216" in run.log and "dev swp1" not in run.log


# --- the real thing: a throwaway network namespace ----------------------------------------------------------


def _can_netns() -> bool:
    return os.geteuid() == 0 and all(shutil.which(t) for t in ("ip", "tc", "nft"))


@pytest.mark.skipif(not _can_netns(), reason="needs root, ip, tc and nft to run linux.sh in a network namespace")
def test_linux_sh_in_a_namespace_is_idempotent(tmp_path: Path) -> None:
    dev = plan().devices["leaf1"]
    path = tmp_path / "leaf1.sh"
    path.write_text(files(dev)[1])
    ns = f"netfab-t-{uuid.uuid4().hex[:8]}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        nsx = ["ip", "netns", "exec", ns]
        for a, b in (("swp1", "swp2"), ("swp3", "swp4")):
            subprocess.run(["ip", "-n", ns, "link", "add", a, "type", "veth", "peer", "name", b], check=True)
        outputs, tables = [], []
        for _ in range(2):
            proc = subprocess.run([*nsx, "sh", str(path)], capture_output=True, text=True, timeout=60)
            assert proc.returncode == 0, proc.stderr
            outputs.append(proc.stdout)
            listing = subprocess.run([*nsx, "nft", "list", "ruleset"], capture_output=True, text=True).stdout
            tables.append(listing)
        mode = outputs[0].splitlines()[-1]
        assert mode in ("ecn: red", "ecn: nftables")
        assert outputs[0] == outputs[1] and tables[0] == tables[1], "a re-run must replace, not add"
        if mode == "ecn: nftables":
            assert tables[0].count("table inet netfab_ecn") == 1 and tables[0].count("ecn set ce") == 2
        read = subprocess.run(
            [
                *nsx,
                "cat",
                "/proc/sys/net/ipv4/fib_multipath_hash_policy",
                "/proc/sys/net/ipv6/fib_multipath_hash_policy",
            ],
            capture_output=True,
            text=True,
        ).stdout.split()
        assert read == ["1", "1"]
        mtu = subprocess.run([*nsx, "cat", "/sys/class/net/swp3/mtu"], capture_output=True, text=True).stdout
        assert mtu.strip() == "9216"
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


# --- speed --------------------------------------------------------------------------------------------------


def test_clos3_renders_on_frr() -> None:
    """A sample of the 1,692-switch clos3 fabric renders on frr (QP hashing and the watchdog removed: Linux has
    neither). Speed is measured in bench/build_bench.py, not here."""
    fabric = fabric_for("frr", "clos3-24k.yaml", qos__pfc=NO_WATCHDOG, load_balancing__hash_fields=FIVE_TUPLE)
    devices = list(fabric.devices.values())
    sample = devices[:: max(1, len(devices) // 200)]
    for dev in sample:
        assert any("router bgp" in text for text in render_device(dev).values()), dev.name
