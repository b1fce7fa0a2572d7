"""--remediate hands the drifted devices to the deploy engine; kernel drift forces the host script to run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from audit_helpers import ROOT, plan_for

import netfab.deploy.engine as engine
from netfab.audit.apply import remediate, stamp_host_script
from netfab.audit.model import AuditReport, DeviceAudit, Drift


def test_stamp_goes_after_the_shebang() -> None:
    dev = DeviceAudit("leaf4", "frr", "drift", drifts=[Drift("hash.fields[ipv4]", "a", "b")], kernel_drift=True)
    stamped = stamp_host_script("#!/bin/sh\nset -eu\n", "RUN1", dev)
    assert stamped == (
        "#!/bin/sh\n# netfab audit RUN1: re-applied to correct kernel drift (hash.fields[ipv4])\nset -eu\n"
    )


def test_only_drifted_devices_go_through_the_staged_deploy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    class FakeDeployer:
        def __init__(self, nr: object, plan: object, artifacts: dict[str, Any], journal: Any, *args: Any,
                     **kwargs: Any) -> None:  # fmt: skip
            seen["artifacts"], seen["timeouts"] = artifacts, args

        def run(self, waves: list[Any]) -> engine.DeployOutcome:
            seen["waves"] = [(w.name, w.devices) for w in waves]
            return engine.DeployOutcome(ok=True, message="all waves confirmed", changed=["leaf3", "leaf4"])

    monkeypatch.setattr(engine, "Deployer", FakeDeployer)
    kernel = DeviceAudit("leaf4", "frr", "drift", drifts=[Drift("hash.seed", 1, 2)], kernel_drift=True)
    bgp = DeviceAudit("leaf3", "frr", "drift", drifts=[Drift("bgp.neighbor[swp3]", None, "present")])
    report = AuditReport("lab", "lab", [DeviceAudit("leaf1", "frr", "in_sync"), bgp, kernel], {}, [])
    run = remediate(report, plan_for("frr"), None, ROOT / "playbooks" / "deploy.yaml", tmp_path, ["lab.yaml"], ())
    assert sorted(seen["artifacts"]) == ["leaf3", "leaf4"]
    assert "# netfab audit " in seen["artifacts"]["leaf4"].companions["leaf4.sh"]
    assert "# netfab audit " not in seen["artifacts"]["leaf3"].companions["leaf3.sh"]
    assert seen["timeouts"][0] == 300  # the staging playbook's confirm timer
    assert {d for _, devices in seen["waves"] for d in devices} == {"leaf3", "leaf4"}
    record = json.loads((Path(run.journal_dir) / "run.json").read_text())
    assert record["state"] == "completed" and record["message"].startswith("audit remediation:")
    assert run.as_dict()["changed"] == ["leaf3", "leaf4"]
