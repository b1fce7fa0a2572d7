"""The three fabrics of the newcomer trial (reference/NEWCOMER_TRIAL.md), as designed: each lints clean and
designs into the shape its author asked for (tests/fixtures/newcomer/)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import yaml

from netfab.core.findings import Severity
from netfab.design import design
from netfab.intent import Intent
from netfab.lint import lint_paths

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "newcomer"


def intent_of(name: str) -> Intent:
    path = FIXTURES / name
    result = lint_paths([path])
    # Lint-clean: no error, no warning. Cumulus tiers carry one info note, CAP024 (NVUE has no restore timer).
    unexpected = [f for f in result.findings if f.rule_id != "CAP024" or f.severity is not Severity.INFO]
    assert unexpected == [], [(f.rule_id, f.message) for f in unexpected]
    return Intent.model_validate(yaml.safe_load(path.read_text()))


def test_spod_2su_dgx_h100_superpod() -> None:
    intent = intent_of("spod-2su.yaml")
    plan = design(intent)
    roles = Counter(d.role for d in plan.devices.values())
    assert roles == {"leaf": 16, "spine": 8}
    assert len(plan.servers) == 64 and len([lk for lk in plan.links if lk.tier == "host"]) == 512
    # Real DGX names, not eth0..7 (HOST-1).
    assert plan.servers[0].nics[0].netdev == "enp24s0np0" and plan.servers[0].nics[7].rdma_device == "mlx5_11"


def test_meta_2zone_three_tiers_dcqcn_off_16_qps() -> None:
    # As written, lint now says what the trial found by reading the output: destination-QP hashing is
    # Sand-only on EOS, and no model says these EOS tiers are Sand boxes (MODEL004, hw's rule). Everything else
    # is said as designed.
    path = FIXTURES / "meta-2zone.yaml"
    found = {f.rule_id for f in lint_paths([path]).findings}
    assert found == {"MODEL004"}, found
    intent = Intent.model_validate(yaml.safe_load(path.read_text()))
    plan = design(intent)
    roles = Counter(d.role for d in plan.devices.values())
    assert roles == {"leaf": 64, "spine": 32, "superspine": 8}
    assert not plan.nic.dcqcn_enabled and plan.hashing.qps_per_gpu_pair == 16
    # "2:1 towards the ATSW layer" is read as written: 32 down, 16 up on every CTSW.
    ctsw = plan.devices_of("spine")[0]
    assert Counter(i.role for i in ctsw.interfaces) == {"fabric_down": 32, "fabric_up": 16}


def test_ent64_two_leaves_four_rails_each_two_spines_and_a_storage_network() -> None:
    intent = intent_of("ent64.yaml")
    backend = design(intent)
    assert sorted(d.name for d in backend.devices.values()) == ["spine1", "spine2", "su1-leaf1", "su1-leaf2"]
    assert [n.leaf for n in backend.servers[0].nics] == ["su1-leaf1"] * 4 + ["su1-leaf2"] * 4
    storage = design(intent, network="storage")
    assert len(storage.devices) == 4 and storage.name == "ent64-storage"
    # The storage network's host ports never reuse the back end's (the trial's second script collided).
    b, s = backend.servers[0], storage.servers[0]
    assert b.name == s.name
    assert not {n.netdev for n in b.nics} & {n.netdev for n in s.nics}
    assert not {n.table for n in b.nics} & {n.table for n in s.nics}
