"""The lab runtime against the real thing: namespaces, FRR per switch, sshd per switch, teardown.

Unmarked tests at the top check the pure parts (names, spec checks, readiness logic) anywhere;
`lab` tests need root + FRR and are skipped with the reason otherwise (see conftest.py).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import netfab.lab as lab
from netfab.lab import LabError, LabSpec
from netfab.lab.health import bgp_missing, ecmp_missing, route_widths
from netfab.lab.layout import Layout
from netfab.lab.netns import mounts_under, namespaces_with_prefix, root_links_with_prefix
from netfab.lab.proc import alive
from netfab.lab.sample import clos_spec
from netfab.lab.ssh import session
from netfab.lab.state import LabState, SwitchRecord, plan_state

REPO = Path(__file__).resolve().parents[2]
# LAB.md's "phantom queue": CE-mark ECT packets above a packet rate where the kernel has no RED.
ECN_SCRIPT = """
nft -f - <<'EOF'
table inet ecnlab {
  counter ce1 {
  }
  chain post {
    type filter hook postrouting priority 0; policy accept;
    oifname "swp1" ip ecn { ect0, ect1 } limit rate over 1300/second burst 20 packets ip ecn set ce counter name ce1
  }
}
EOF
"""


# --- pure parts -----------------------------------------------------------------------------------------


def test_root_side_names_fit_and_are_unique() -> None:
    layout = Layout("t12345x9", Path("/nonexistent"))
    names = [layout.mgmt_veth(f"leaf-with-a-long-name-{i}") for i in range(200)] + [layout.mgmt_veth("s1")]
    assert all(len(n) <= 15 for n in names)
    assert len(set(names)) == len(names)
    assert layout.mgmt_veth("s1") == "t12345x9-s1"
    assert layout.mgmt_veth("mgmt") != layout.bridge


def test_spec_problems_are_collected_not_first_only() -> None:
    spec = clos_spec("ok1", 2, 2, 1)
    bad = dataclasses.replace(
        spec,
        prefix="Bad-Prefix",
        links=(*spec.links, lab.LabLink("leaf1", "swp1", "nowhere", "x" * 16, 9216)),
    )
    problems = lab.spec_problems(bad)
    assert any("prefix" in p for p in problems)
    assert any("unknown node 'nowhere'" in p for p in problems)
    assert any("cabled twice" in p for p in problems)
    assert any("not a valid Linux name" in p for p in problems)
    assert lab.spec_problems(spec) == []


def test_readiness_expectations_follow_the_cabling() -> None:
    state = plan_state(clos_spec("ok1", 2, 3, 2))
    leaf1, spine1 = state.switches["leaf1"], state.switches["spine1"]
    assert leaf1.fabric_ifnames == ["swp1", "swp2"] and leaf1.ecmp_width == 2
    assert "10.1.1.0/31" not in leaf1.remote_subnets and "10.1.3.2/31" in leaf1.remote_subnets
    assert spine1.remote_subnets == [] and spine1.fabric_ifnames == ["swp1", "swp2", "swp3"]


def test_bgp_and_ecmp_checks_name_what_is_missing() -> None:
    rec = SwitchRecord("leaf1", "n-leaf1", "1.1.1.1", "v", ["swp1", "swp2"], ["10.1.2.0/31"], 2)
    summary = {
        "ipv4Unicast": {"peers": {"swp1": {"state": "Established"}, "swp2": {"state": "Active"}}},
        "ipv6Unicast": {"peers": {"swp1": {"state": "Established"}}},
    }
    missing = bgp_missing(rec, summary)
    assert "leaf1: ipv4Unicast session swp2 is Active" in missing
    assert "leaf1: ipv6Unicast has 1 of 2 expected sessions (no neighbor on swp2)" in missing
    assert bgp_missing(rec, {}) == ["leaf1: no ipv4Unicast BGP sessions configured or up"]
    widths = route_widths([{"dst": "10.1.2.0/31", "nexthops": [{"dev": "swp1"}]}])
    assert ecmp_missing(rec, widths) == ["leaf1: route 10.1.2.0/31 has 1 of 2 ECMP next hops in the kernel"]


# --- the real lab ---------------------------------------------------------------------------------------


def assert_clean(spec: LabSpec, pids: list[int]) -> None:
    """Nothing of the lab is left: namespaces, root links, processes, mounts, workdir."""
    assert namespaces_with_prefix(spec.prefix) == []
    assert root_links_with_prefix(spec.prefix) == []
    assert [p for p in pids if alive(p)] == []
    assert mounts_under([f"/run/netns/{spec.prefix}-", f"{spec.workdir}/"]) == []
    assert not spec.workdir.exists()


def lab_pids(spec: LabSpec) -> list[int]:
    state = LabState.load(Layout(spec.prefix, spec.workdir).state_file)
    pids = [pid for daemons in state.pids.values() for pid in daemons.values()]
    assert len(pids) == 4 * len(spec.switches)  # zebra, bgpd, staticd, sshd per switch
    return pids


@pytest.fixture(scope="module")
def fabric(lab_names: Callable[[str], tuple[str, str]]) -> Iterator[tuple[LabSpec, lab.LabStatus]]:
    prefix, subnet = lab_names("m")
    spec = clos_spec(prefix, 2, 4, 2, mgmt_subnet=subnet)
    # leaf1 also carries per-switch extras: an ECMP hash sysctl and a setup script (nftables ECN marking).
    leaf1 = dataclasses.replace(
        spec.switch("leaf1"), sysctls={"net.ipv4.fib_multipath_hash_policy": "1"}, setup_script=ECN_SCRIPT
    )
    spec = dataclasses.replace(spec, switches=tuple(leaf1 if s.name == "leaf1" else s for s in spec.switches))
    status = lab.up(spec, timeout=60)
    try:
        yield spec, status
    finally:
        lab.down(spec)


@pytest.mark.lab
def test_up_converges_with_ecmp_and_hosts_reach_each_other(fabric: tuple[LabSpec, lab.LabStatus]) -> None:
    spec, status = fabric
    assert status.ready, status.missing
    for sw in status.switches:
        assert all(d for d in sw.daemons.values()), sw.daemons
        assert {s.afi for s in sw.sessions} == {"ipv4Unicast", "ipv6Unicast"}
        assert all(s.established for s in sw.sessions), sw.name
        assert len(sw.sessions) == 2 * (4 if sw.name.startswith("spine") else 2)
    host_nets = {str(hi.address.network) for h in spec.hosts for hi in h.interfaces}
    for sw in status.switches:
        if sw.name.startswith("leaf"):
            local = {n for n in host_nets if n.startswith(f"10.1.{sw.name[4:]}.")}
            assert {dst: sw.route_widths.get(dst) for dst in host_nets - local} == dict.fromkeys(host_nets - local, 2)
            assert sw.ecmp_width == 2
    # Across leaves both ways, and through every leaf.
    for src, dst in (("h1-1", "10.1.4.3"), ("h4-2", "10.1.1.1"), ("h2-1", "10.1.3.1")):
        ping = lab.exec(spec.prefix, src, ["ping", "-c1", "-W1", dst])
        assert ping.returncode == 0, f"{src} -> {dst}: {ping.stdout}{ping.stderr}"
    # On a switch, exec joins its UTS and mount namespaces too: its hostname, its FRR.
    assert lab.exec(spec.prefix, "leaf1", ["hostname"]).stdout.strip() == "leaf1"
    show = lab.exec(spec.prefix, "leaf3", ["vtysh", "-c", "show bgp summary json"])
    assert json.loads(show.stdout)["ipv4Unicast"]["routerId"] == "10.255.1.3"
    sysctl = lab.exec(spec.prefix, "leaf1", ["sysctl", "-n", "net.ipv4.fib_multipath_hash_policy"])
    assert sysctl.stdout.strip() == "1"
    assert lab.exec(spec.prefix, "leaf1", ["nft", "list", "table", "inet", "ecnlab"]).returncode == 0
    assert "dcb" in status.pfc_note and json.loads(json.dumps(status.to_dict()))["ready"] is True
    assert "ready" in status.render_text()


@pytest.mark.lab
def test_real_ssh_reaches_that_switch_with_host_key_checking(
    fabric: tuple[LabSpec, lab.LabStatus], tmp_path: Path
) -> None:
    spec, _ = fabric
    rc, out, err = lab.ssh_run(spec.prefix, "leaf2", "vtysh -c 'show bgp summary json'")
    assert rc == 0, err
    summary = json.loads(out)
    assert summary["ipv4Unicast"]["routerId"] == "10.255.1.2"
    assert {p["hostname"] for p in summary["ipv4Unicast"]["peers"].values()} == {"spine1", "spine2"}
    assert lab.ssh_run(spec.prefix, "leaf2", "hostname")[1].strip() == "leaf2"
    target = lab.ssh_target(spec.prefix, "leaf2")
    assert target["port"] == 22 and target["username"] == "root"
    known = Path(target["known_hosts"]).read_text()
    assert f"{target['host']} ssh-ed25519 " in known
    # Host-key checking is really on: an empty known_hosts makes the connection fail.
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    with pytest.raises(LabError, match="host key unknown"):
        session(target["host"], Path(target["key_file"]), empty)


@pytest.mark.lab
def test_reload_applies_and_rolls_back(fabric: tuple[LabSpec, lab.LabStatus]) -> None:
    spec, _ = fabric
    before = lab.running_config(spec, "spine1")
    original = spec.switch("spine1").frr_conf
    assert lab.reload_frr(spec, "spine1", original, dry_run=True).strip() == ""
    lab.reload_frr(spec, "spine1", original.replace("maximum-paths 64", "maximum-paths 16"))
    assert " maximum-paths 16" in lab.running_config(spec, "spine1")
    lab.reload_frr(spec, "spine1", original)
    assert lab.running_config(spec, "spine1") == before


@pytest.mark.lab
def test_a_second_lab_on_the_same_mgmt_subnet_is_refused(
    fabric: tuple[LabSpec, lab.LabStatus], lab_names: Callable[[str], tuple[str, str]]
) -> None:
    spec, _ = fabric
    prefix, _ = lab_names("o")
    other = clos_spec(prefix, 1, 1, 1, mgmt_subnet=str(spec.mgmt_subnet))
    with pytest.raises(LabError, match=f"management subnet {spec.mgmt_subnet} overlaps"):
        lab.up(other)
    assert namespaces_with_prefix(prefix) == []


@pytest.mark.lab
def test_down_leaves_nothing_behind(make_spec: Callable[..., LabSpec]) -> None:
    spec = make_spec(tag="d")
    lab.up(spec)
    pids = lab_pids(spec)
    assert all(alive(p) for p in pids)
    lab.down(spec)
    assert_clean(spec, pids)
    lab.down(spec.prefix)  # idempotent


@pytest.mark.lab
def test_repeated_up_down_cycles_are_clean(make_spec: Callable[..., LabSpec]) -> None:
    spec = make_spec(tag="c")
    for _ in range(3):
        status = lab.up(spec)
        assert status.ready
        pids = lab_pids(spec)
        lab.down(spec.prefix)
        assert_clean(spec, pids)


@pytest.mark.lab
def test_down_sweeps_after_a_killed_run_and_the_prefix_is_reusable(make_spec: Callable[..., LabSpec]) -> None:
    spec = make_spec(tag="k")
    # A separate python brings the lab up and is SIGKILLed: no teardown, no in-memory handle survives.
    child = "\n".join(
        [
            "import os, signal",
            "from netfab.lab import up",
            "from netfab.lab.sample import clos_spec",
            f"up(clos_spec({spec.prefix!r}, 2, 4, 2, mgmt_subnet={str(spec.mgmt_subnet)!r}))",
            "os.kill(os.getpid(), signal.SIGKILL)",
        ]
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    pids = lab_pids(spec)
    assert all(alive(p) for p in pids) and namespaces_with_prefix(spec.prefix)
    with pytest.raises(LabError, match="already in use"):
        lab.up(spec)
    # Lose the state file too: down must find everything by name prefix alone.
    Layout(spec.prefix, spec.workdir).state_file.unlink()
    lab.down(spec.prefix)
    assert_clean(spec, pids)
    assert lab.up(spec).ready
    pids = lab_pids(spec)
    lab.down(spec.prefix)
    assert_clean(spec, pids)


@pytest.mark.lab
def test_failed_bring_up_tears_down_and_says_why(make_spec: Callable[..., LabSpec]) -> None:
    spec = make_spec(2, 2, 1, tag="f")
    broken = dataclasses.replace(spec.switches[0], frr_conf=spec.switches[0].frr_conf + "router bgp 65000\n bogus\n")
    spec = dataclasses.replace(spec, switches=(broken, *spec.switches[1:]))
    with pytest.raises(LabError, match=r"spine1: starting FRR and sshd failed: .*Unknown command"):
        lab.up(spec)
    assert_clean(spec, [])


@pytest.mark.lab
def test_not_converging_names_the_missing_sessions_and_tears_down(make_spec: Callable[..., LabSpec]) -> None:
    spec = make_spec(2, 2, 1, tag="n")
    leaf1 = spec.switch("leaf1")
    conf = leaf1.frr_conf.replace(" neighbor swp2 interface peer-group fabric\n", "")
    cut = dataclasses.replace(leaf1, frr_conf=conf)
    spec = dataclasses.replace(spec, switches=tuple(cut if s.name == "leaf1" else s for s in spec.switches))
    with pytest.raises(LabError) as failure:
        lab.up(spec, timeout=4)
    message = str(failure.value)
    assert "not ready after 4 s" in message
    assert "leaf1: ipv4Unicast has 1 of 2 expected sessions (no neighbor on swp2)" in message
    assert "spine2: ipv4Unicast session swp1 is" in message
    assert_clean(spec, [])


@pytest.mark.lab
def test_workdir_frr_cannot_enter_is_refused_before_anything_exists(
    tmp_path: Path, lab_names: Callable[[str], tuple[str, str]]
) -> None:
    prefix, subnet = lab_names("w")
    tmp_path.chmod(0o700)
    spec = clos_spec(prefix, 1, 1, 1, mgmt_subnet=subnet, workdir=tmp_path / "lab")
    with pytest.raises(LabError, match="which user frr cannot enter"):
        lab.up(spec)
    assert namespaces_with_prefix(prefix) == [] and root_links_with_prefix(prefix) == []


@pytest.mark.lab
def test_red_ecn_probe_answers_and_cleans_up() -> None:
    before = set(namespaces_with_prefix("nfprobe"))
    assert isinstance(lab.probe_red_ecn(), bool)
    assert set(namespaces_with_prefix("nfprobe")) == before


def test_bridge_address_is_last_usable_host() -> None:
    spec = clos_spec("ok1", 1, 1, 1, mgmt_subnet="172.30.5.0/24")
    assert spec.bridge_address == ipaddress.IPv4Interface("172.30.5.254/24")
