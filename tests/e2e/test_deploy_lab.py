"""Deploy and verify against the real lab: staged rollout, dry run, fault injection, timers, a killed run.

Every failure case ends with the same proof: each device's running config, loaded back as a candidate,
gives an empty `frr-reload.py --test` diff against the config it had before the run.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from netfab.lab import reload_frr, running_config
from tests.e2e.conftest import ROOT, RunningLab

pytestmark = pytest.mark.lab

SWITCHES = ["leaf1", "leaf2", "leaf3", "leaf4", "spine1", "spine2"]


def _config_body(text: str) -> str:
    # `show running-config` starts with "Building configuration..." / "Current configuration:", which are not
    # config lines (frr-reload refuses them).
    lines = text.splitlines()
    start = next((i + 1 for i, line in enumerate(lines) if line.startswith("Current configuration")), 0)
    return "\n".join(lines[start:]) + "\n"


def snapshot(lab: RunningLab) -> dict[str, str]:
    return {sw: _config_body(running_config(lab.prefix, sw)) for sw in SWITCHES}


def assert_exactly(lab: RunningLab, configs: dict[str, str]) -> None:
    """frr-reload's own diff (not a text diff: FRR reorders sections) is empty for every switch."""
    for sw, conf in configs.items():
        assert reload_frr(lab.prefix, sw, conf, dry_run=True).strip() == "", f"{sw} is not back to its config"


def override(lab: RunningLab, name: str, data: dict) -> Path:
    path = lab.work / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def playbook(lab: RunningLab, name: str, confirm: str, settle: str, waves: list[dict]) -> Path:
    path = lab.work / f"{name}.playbook.yaml"
    path.write_text(
        yaml.safe_dump({"name": name, "confirm_timeout": confirm, "settle_timeout": settle, "waves": waves})
    )
    return path


def last_run(lab: RunningLab) -> dict:
    runs = sorted((lab.work / "runs" / "lab").iterdir())
    return json.loads((runs[-1] / "run.json").read_text())


def test_a_fresh_lab_is_already_what_deploy_would_push(lab: RunningLab) -> None:
    """lab up applies the rendered frr.conf and Linux script: the first deploy has nothing to change."""
    res = lab.netfab("deploy", str(lab.intent), "--lab", lab.prefix, "--dry-run")
    assert res.returncode == 0, res.stderr
    assert "--- " not in res.stdout, res.stdout
    assert all(d["diff_lines"] == 0 for d in last_run(lab)["devices"].values())


def test_dry_run_changes_nothing(lab: RunningLab) -> None:
    before = snapshot(lab)
    change = override(lab, "paths16", {"underlay": {"max_paths": 16}})
    res = lab.netfab("deploy", str(lab.intent), str(change), "--lab", lab.prefix, "--dry-run")
    assert res.returncode == 0, res.stderr
    assert "maximum-paths 16" in res.stdout  # the diff is shown
    assert snapshot(lab) == before
    assert last_run(lab)["state"] == "dry_run"


def test_deploy_a_change_and_verify_it(lab: RunningLab, check_report_json) -> None:
    change = override(lab, "paths32", {"underlay": {"max_paths": 32}})
    res = lab.netfab("deploy", str(lab.intent), str(change), "--lab", lab.prefix, "--confirm-timeout", "120")
    assert res.returncode == 0, res.stderr
    assert all("maximum-paths 32" in conf for conf in snapshot(lab).values())
    run = last_run(lab)
    assert run["state"] == "completed"
    assert run["waves"][0]["name"] == "canary"
    assert {d["state"] for d in run["devices"].values()} == {"confirmed"}
    verify = lab.netfab("verify", str(lab.intent), str(change), "--lab", lab.prefix, "--format", "json")
    assert verify.returncode == 0, verify.stdout
    envelope = check_report_json(verify.stdout, "verify")
    summary = envelope["summary"]
    assert summary["fail"] == 0 and summary["pass"] > 0
    assert {f["rule_id"] for f in envelope["findings"]} >= {"VERIFY-BGP", "VERIFY-INTERFACES"}
    # The journal holds before/after/diff per device, and no secret material.
    run_dir = sorted((lab.work / "runs" / "lab").iterdir())[-1]
    assert "maximum-paths 32" in (run_dir / "devices" / "leaf1" / "after.conf").read_text()
    assert (run_dir / "devices" / "leaf1" / "diff.txt").read_text().strip()


def test_post_check_failure_rolls_the_wave_back(lab: RunningLab) -> None:
    """A config FRR accepts but that breaks BGP (every leaf ASN shifted): post-checks fail, the wave reverts."""
    before = snapshot(lab)
    broken = override(lab, "badasn", {"underlay": {"asn": {"leaf_base": 65300}}})
    book = playbook(lab, "leaves", "120s", "8s", [{"name": "leaves", "select": {"role": "leaf"}, "parallelism": 4}])
    res = lab.netfab("deploy", str(lab.intent), str(broken), "--lab", lab.prefix, "--playbook", str(book))
    assert res.returncode == 1, res.stdout + res.stderr
    assert "post-checks failed" in res.stderr
    assert_exactly(lab, before)
    run = last_run(lab)
    assert run["state"] in ("rolled_back", "failed")
    assert {d["state"] for n, d in run["devices"].items() if n.startswith("leaf")} == {"rolled_back"}


def test_interrupted_run_is_reported_and_devices_revert_by_themselves(lab: RunningLab) -> None:
    """Kill -9 the deploy while it waits on post-checks: the device timers revert every committed device,
    and the next run refuses to start until told to resume."""
    before = snapshot(lab)
    broken = override(lab, "badasn2", {"underlay": {"asn": {"leaf_base": 65400}}})
    book = playbook(lab, "slow", "15s", "120s", [{"name": "leaves", "select": {"role": "leaf"}, "parallelism": 4}])
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "netfab.cli.app",
            "deploy",
            str(lab.intent),
            str(broken),
            "--lab",
            lab.prefix,
            "--playbook",
            str(book),
        ],
        cwd=lab.work,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        runs = sorted((lab.work / "runs" / "lab").iterdir())
        state = json.loads((runs[-1] / "run.json").read_text())
        if state["pid"] == proc.pid and any(d["state"] == "committed" for d in state["devices"].values()):
            break
        time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail("deploy never reached a committed device")
    time.sleep(1.0)  # let the rest of the wave commit
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # Right now each device is old or new; after the 15 s timer every committed one is old again.
    time.sleep(22)
    assert_exactly(lab, before)
    again = lab.netfab("deploy", str(lab.intent), "--lab", lab.prefix, "--dry-run")
    assert again.returncode == 1
    assert "was interrupted" in again.stderr and "--resume" in again.stderr
    # A dry run of the resume changes nothing and answers for nothing: the interrupted run still blocks.
    looked = lab.netfab("deploy", str(lab.intent), "--lab", lab.prefix, "--resume", "--dry-run")
    assert looked.returncode == 0, looked.stderr
    still = lab.netfab("deploy", str(lab.intent), "--lab", lab.prefix, "--dry-run")
    assert still.returncode == 1 and "was interrupted" in still.stderr
    # The resume itself re-diffs (every device is back at the intent: nothing to push) and unblocks the fabric.
    resumed = lab.netfab("deploy", str(lab.intent), "--lab", lab.prefix, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    after = lab.netfab("deploy", str(lab.intent), "--lab", lab.prefix, "--dry-run")
    assert after.returncode == 0, after.stderr


def test_unreachable_switch_mid_rollout_stops_and_rolls_back(lab: RunningLab) -> None:
    """spine1 loses management before its wave: the spine wave fails before committing anything, the
    rollout stops, and no spine changed."""
    before = snapshot(lab)
    change = override(lab, "paths8", {"underlay": {"max_paths": 8}})
    book = playbook(
        lab,
        "staged",
        "120s",
        "30s",
        [
            {"name": "leaves", "select": {"role": "leaf"}, "parallelism": 4},
            {"name": "spines", "select": {"role": "spine"}, "parallelism": 2},
        ],
    )
    hosts = yaml.safe_load((Path(f"/var/tmp/netfab-lab/{lab.prefix}") / "inventory" / "hosts.yaml").read_text())
    spine1_ip = hosts["spine1"]["hostname"]
    # Unreachable = its management address drops every packet (the lab's own namespace only).
    subprocess.run(["ip", "netns", "exec", f"{lab.prefix}-spine1", "ip", "link", "set", "mgmt0", "down"], check=True)
    try:
        res = lab.netfab("deploy", str(lab.intent), str(change), "--lab", lab.prefix, "--playbook", str(book))
    finally:
        subprocess.run(["ip", "netns", "exec", f"{lab.prefix}-spine1", "ip", "link", "set", "mgmt0", "up"], check=True)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "spine1" in res.stderr and spine1_ip
    run = last_run(lab)
    assert run["devices"]["spine1"]["state"] == "failed"
    assert {run["devices"][s]["state"] for s in ("leaf1", "leaf2", "leaf3", "leaf4")} == {"confirmed"}
    # The spines are exactly as before; the leaves are provably at the new intended state.
    assert_exactly(lab, {s: before[s] for s in ("spine1", "spine2")})
    assert all("maximum-paths 8" in running_config(lab.prefix, leaf) for leaf in ("leaf1", "leaf2", "leaf3", "leaf4"))
    # netfab rollback RUN_ID undoes the run: the leaves go back too.
    rb = lab.netfab("rollback", run["run_id"], "--intent", str(lab.intent), "--lab", lab.prefix)
    assert rb.returncode == 0, rb.stderr
    assert_exactly(lab, before)


def test_lab_is_converged_and_forwards_across_leaves(lab: RunningLab) -> None:
    """intent/lab.yaml as the lab: every session Established, ECMP over both spines, hosts reach each other."""
    res = lab.netfab("lab", "status", "--prefix", lab.prefix, "--format", "json")
    assert res.returncode == 0, res.stdout + res.stderr
    status = json.loads(res.stdout)
    assert status["ready"] is True
    for sw in status["switches"]:
        assert sw["sessions"] and all(s["state"] == "Established" for s in sw["sessions"]), sw["name"]
        if sw["name"].startswith("leaf"):
            assert sw["ecmp_width"] == 2, sw["name"]
    assert "not supported on veth" in status["pfc_note"]
    # host1 (SU 1) to host3 (SU 2) on rail 1: leaf1 -> spine -> leaf3.
    ping = lab.netfab("lab", "exec", "host1", "--prefix", lab.prefix, "--", "ping", "-c", "2", "-W", "1", "10.64.0.5")
    assert ping.returncode == 0, ping.stdout + ping.stderr


def test_config_rejected_by_frr_changes_nothing(lab: RunningLab) -> None:
    """One device's candidate has a line FRR's parser refuses: that device fails before any change, the
    wave stops, and every device is exactly as it was."""
    from netfab.deploy.engine import Deployer
    from netfab.deploy.inventory import build_nornir, load_inventory_data
    from netfab.deploy.journal import DeviceRecord, Journal, RunRecord, new_run_id
    from netfab.deploy.target import device_artifacts, resolve_target
    from netfab.deploy.waves import Wave
    from netfab.design import design
    from netfab.intent import Intent
    from netfab.lab.fromplan import lab_intent
    from netfab.render.build import build

    before = snapshot(lab)
    intent = lab_intent(Intent.model_validate(yaml.safe_load(lab.intent.read_text())))
    plan = design(intent)
    build(plan, lab.work / "build")
    target = resolve_target(plan, lab.work / "build", lab.prefix, [])
    hosts, groups = load_inventory_data(target.generated_inventory, target.overrides)
    nr = build_nornir(hosts, groups, target.credentials)
    artifacts = device_artifacts(plan, ["leaf1", "leaf2"])
    artifacts["leaf1"].config = artifacts["leaf1"].config.replace(
        " bgp bestpath as-path multipath-relax", " bgp bestpath as-path multipath-relax\n bogus-knob 42"
    )
    artifacts["leaf2"].config = artifacts["leaf2"].config.replace("maximum-paths 64", "maximum-paths 8")
    wave = Wave("pair", ("leaf1", "leaf2"), 2, 0)
    record = RunRecord(
        new_run_id(),
        plan.name,
        [str(lab.intent)],
        "inline",
        False,
        waves=[{"name": "pair", "devices": ["leaf1", "leaf2"]}],
        devices={d: DeviceRecord(d, "pair") for d in ("leaf1", "leaf2")},
    )
    journal = Journal(lab.work / "runs", record)
    outcome = Deployer(nr, plan, artifacts, journal, 120, 10).run([wave])
    assert not outcome.ok
    assert "leaf1" in outcome.failed and outcome.changed == []
    assert journal.record.devices["leaf1"].state == "failed"
    assert_exactly(lab, before)


def test_a_failed_leaf_within_the_failure_budget_is_a_partial_rollout_exit_1(lab: RunningLab) -> None:
    """RELIABILITY_TRIAL F2-C: failure_budget 1 and an unreachable leaf printed 'all waves confirmed ... 1
    failed' and exited 0, so a CI gate passed although a device never got its config."""
    before = snapshot(lab)
    change = override(lab, "paths12", {"underlay": {"max_paths": 12}})
    book = playbook(
        lab,
        "budget1",
        "120s",
        "30s",
        [
            {"name": "leaves", "select": {"role": "leaf"}, "parallelism": 4, "failure_budget": 1},
            {"name": "spines", "select": {"role": "spine"}, "parallelism": 2},
        ],
    )
    subprocess.run(["ip", "netns", "exec", f"{lab.prefix}-leaf4", "ip", "link", "set", "mgmt0", "down"], check=True)
    try:
        res = lab.netfab("deploy", str(lab.intent), str(change), "--lab", lab.prefix, "--playbook", str(book))
    finally:
        subprocess.run(["ip", "netns", "exec", f"{lab.prefix}-leaf4", "ip", "link", "set", "mgmt0", "up"], check=True)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "partial:" in res.stderr and "all waves confirmed" not in res.stderr
    run = last_run(lab)
    assert run["devices"]["leaf4"]["state"] == "failed"
    assert {run["devices"][s]["state"] for s in ("leaf1", "leaf2", "leaf3", "spine1", "spine2")} == {"confirmed"}
    assert_exactly(lab, {"leaf4": before["leaf4"]})  # the failed leaf never changed
    rb = lab.netfab("rollback", run["run_id"], str(lab.intent), "--lab", lab.prefix)
    assert rb.returncode == 0, rb.stderr
    assert_exactly(lab, before)
