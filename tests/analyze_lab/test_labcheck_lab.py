"""The kernel ECMP model held against the real lab: elephant UDP flows, uplink counters, each hash policy.

One lab for the module (2 spines x 4 leaves, intent/lab.yaml); 16 flows x 3 batches per policy, 100 datagrams
per flow, so every check's traffic takes well under a second.
"""

from __future__ import annotations

import json

import pytest
from labcheck_helpers import RunningLab, lab_plan

from netfab.analyze.labcheck import (
    ConfigResult,
    HashConfig,
    LabCheck,
    LabCheckError,
    LabCheckOptions,
    lab_exec,
    lab_findings,
    run_lab_check,
)
from netfab.lab import exec as lab_run

pytestmark = [pytest.mark.lab, pytest.mark.slow]

OPTIONS = LabCheckOptions(flows=16, batches=3, packets_per_flow=100)
HASH_KNOBS = [f"/proc/sys/net/ipv4/fib_multipath_hash_{k}" for k in ("policy", "fields", "seed")]


def _hash_sysctls(prefix: str, leaf: str = "leaf1") -> list[str]:
    proc = lab_run(prefix, leaf, ["cat", *HASH_KNOBS])
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.fixture(scope="module")
def check(running_lab: RunningLab) -> tuple[LabCheck, list[str], list[str]]:
    before = _hash_sysctls(running_lab.prefix)
    result = run_lab_check(lab_plan(), running_lab.prefix, OPTIONS, intent_config=HashConfig(1, 0x0037))
    return result, before, _hash_sysctls(running_lab.prefix)


def _config(check: LabCheck, policy: int, mask: int | None = None) -> ConfigResult:
    return next(
        c for c in check.configs if c.config.policy == policy and (mask is None or c.config.fields_mask == mask)
    )


def test_flows_cross_the_source_leafs_uplinks(check: tuple[LabCheck, list[str], list[str]]) -> None:
    result, _, _ = check
    assert (result.src.host, result.src.nic, result.src.leaf) == ("host1", "eth0", "leaf1")
    assert (result.dst.host, result.dst.leaf) == ("host3", "leaf3")
    assert result.uplinks == ["swp3", "swp4"]
    for c in result.configs:
        for b in c.batches:
            # Every datagram sent went out of an uplink: the counters account for the flows.
            assert b.send_errors == 0
            assert sum(b.uplink_packets.values()) >= b.sent_datagrams == 16 * OPTIONS.packets_per_flow
            assert sum(b.measured_flows.values()) == 16


def test_policy_0_puts_all_traffic_on_one_uplink_as_the_model_says(
    check: tuple[LabCheck, list[str], list[str]],
) -> None:
    result, _, _ = check
    for cfg in (_config(result, 0), _config(result, 3, 0x0003)):
        assert cfg.deterministic  # the model: one hash key, every seed puts all 16 flows on one uplink
        assert all(b.busiest_share >= 0.95 for b in cfg.batches), [b.uplink_bytes for b in cfg.batches]
        assert cfg.agrees


def test_policy_1_spreads_and_stays_in_the_models_band(check: tuple[LabCheck, list[str], list[str]]) -> None:
    result, _, _ = check
    for cfg in (_config(result, 1), _config(result, 3, 0x0037)):
        assert not cfg.deterministic
        assert any(min(b.uplink_bytes.values()) > 0 for b in cfg.batches), "no batch used both uplinks"
        for b in cfg.batches:
            assert b.model["busiest_p1"] <= b.busiest_flows <= b.model["busiest_p99"], b.model
        assert cfg.agrees
    assert _config(result, 1).intent and not _config(result, 0).intent
    assert lab_findings(result, "intent/lab.yaml") == []


def test_kernel_hash_replica_matches_the_lab_exactly_when_the_seed_is_set(
    check: tuple[LabCheck, list[str], list[str]],
) -> None:
    result, _, _ = check
    if not result.seed["replica_exact"]:
        pytest.skip(f"kernel without a settable fib_multipath_hash_seed (read {result.seed['read']})")
    assert result.seed["read"] == result.seed["plan"]  # the leaf's rendered script set the plan's seed
    for c in result.configs:
        for b in c.batches:
            assert b.replica_vs_kernel == 16  # per flow, the uplink `ip route get` names
            assert b.exact, (c.config.label, b.replica_flows, b.measured_flows)


def test_hash_sysctls_are_restored(check: tuple[LabCheck, list[str], list[str]]) -> None:
    result, before, after = check
    assert before == after
    assert before[:2] == ["1", str(0x0037)]  # what the frr template renders for the lab intent's 5-tuple
    assert result.restored


def test_sysctls_are_restored_when_the_check_fails_midway(running_lab: RunningLab) -> None:
    before = _hash_sysctls(running_lab.prefix)
    real = lab_exec(running_lab.prefix)
    senders = 0

    def failing(node: str, argv: list[str], stdin: str | None, timeout: float) -> tuple[int, str, str]:
        nonlocal senders
        if node == "host1" and "-c" in argv:
            senders += 1
            if senders == 2:  # policy 0 is set and one batch has run
                raise LabCheckError("simulated sender failure")
        return real(node, argv, stdin, timeout)

    with pytest.raises(LabCheckError, match="simulated"):
        run_lab_check(
            lab_plan(), running_lab.prefix, LabCheckOptions(flows=4, batches=2, packets_per_flow=10), run=failing
        )
    assert _hash_sysctls(running_lab.prefix) == before


def test_cli_writes_lab_check_json(running_lab: RunningLab) -> None:
    out = running_lab.work / "analysis"
    proc = running_lab.netfab(
        "analyze",
        str(running_lab.intent),
        "--out",
        str(out),
        "--format",
        "json",
        "--trials",
        "100",
        "--lab",
        running_lab.prefix,
        "--lab-flows",
        "8",
        "--lab-batches",
        "2",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    printed = json.loads(proc.stdout)
    written = json.loads((out / "lab-check.json").read_text())
    assert printed["verb"] == "analyze" and printed["details"]["lab_check"] == written
    assert written["summary"]["agrees"] and written["sysctls"]["restored"]
    assert [c["label"] for c in written["configs"]] == [
        "policy 0 (L3)",
        "policy 1 (L4 5-tuple)",
        "policy 3 0x0037 (5-tuple)",
        "policy 3 0x0003 (addresses)",
    ]
    assert (out / "analysis.json").exists()
    assert not list(out.glob(".*"))  # atomic writes leave no temp files


def test_cli_refuses_a_lab_that_is_not_up(running_lab: RunningLab) -> None:
    proc = running_lab.netfab(
        "analyze", str(running_lab.intent), "--out", str(running_lab.work / "x"), "--lab", "zz9none"
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "zz9none" in proc.stderr
