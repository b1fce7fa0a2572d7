"""Adding a platform is one record plus templates (docs/platforms.md): a toy NOS registered from a temporary
directory through NETFAB_PLATFORMS_PATH goes through lint, build and an offline audit with no code change."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]

RECORD = """\
name: toyos
title: Toy OS (test)
capabilities:
  max_lossless_classes: 2
  pfc_watchdog: {supported: true, actions: {drop: true}}
  ecn_units: [bytes]
  hash_fields: {src_ip: true, dst_ip: true, ip_protocol: true, src_port: true, dst_port: true}
  max_ecmp_paths: 64
  buffer: {asic: toy, shared_bytes: 32MB}
outputs:
  - file: "{name}.toy"
    template: device.j2
    audit: {kind: cli, facts: netfab.audit.facts.frr, remediation: cli}
naming:
  port: {format: "xe-{index}"}
  loopback: lo0
driver: {napalm: toyos}
cli:
  dialect: {comment: ["!"]}
  hconfig: {stock: generic, idempotent: [[interface, description]]}
lab:
  containerlab: {kind: linux, image: "toy:1"}
"""

# FRR-shaped CLI, so the existing FRR facts module reads it: a new NOS reuses a facts module where its
# grammar matches (or brings its own module, named in the record).
DEVICE_J2 = """\
hostname {{ dev.name }}
interface {{ naming.loopback }}
 ip address {{ dev.loopback }}/32
{% for itf in dev.interfaces %}
interface {{ itf.name }}
 description {{ itf.description }}
{% endfor %}
router bgp {{ dev.asn }}
 bgp router-id {{ dev.loopback }}
"""


def netfab(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "netfab.cli.app", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "200", **env},
    )


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    work = tmp_path_factory.mktemp("toy-platform")
    record = work / "records" / "toyos"
    (record / "templates").mkdir(parents=True)
    (record / "platform.yaml").write_text(RECORD)
    (record / "templates" / "device.j2").write_text(DEVICE_J2)
    intent = yaml.safe_load((ROOT / "intent" / "lab.yaml").read_text())
    intent["topology"]["leaf"]["platform"] = intent["topology"]["spine"]["platform"] = "toyos"
    (work / "intent.yaml").write_text(yaml.safe_dump(intent))
    return work, {"NETFAB_PLATFORMS_PATH": str(work / "records")}


def test_unknown_without_the_record(workspace: tuple[Path, dict[str, str]]) -> None:
    work, _ = workspace
    res = netfab(work, {"NETFAB_PLATFORMS_PATH": ""}, "lint", "intent.yaml")
    assert res.returncode == 1, res.stdout + res.stderr  # a schema finding at the user's line, as lint reports
    assert "intent.yaml:26:15: error[SCHEMA-value] topology.leaf.platform" in res.stdout
    assert "unknown platform 'toyos'; known: arista_eos," in res.stdout


def test_lint_build_and_offline_audit(workspace: tuple[Path, dict[str, str]]) -> None:
    work, env = workspace
    lint = netfab(work, env, "lint", "intent.yaml")
    assert lint.returncode == 0, lint.stdout + lint.stderr

    build = netfab(work, env, "build", "intent.yaml")
    assert build.returncode == 0, build.stdout + build.stderr
    configs = work / "build" / "lab" / "configs"
    leaf = (configs / "leaf1.toy").read_text()
    assert leaf.startswith("hostname leaf1\ninterface lo0\n")
    assert "interface xe-0\n description " in leaf  # the record's port naming, faceplate port 1
    groups = yaml.safe_load((work / "build" / "lab" / "inventory" / "groups.yaml").read_text())
    assert groups["platform_toyos"]["connection_options"]["netfab_napalm"]["platform"] == "toyos"

    running = work / "running"
    shutil.copytree(configs, running)
    in_sync = netfab(work, env, "audit", "intent.yaml", "--from-dir", "running")
    assert in_sync.returncode == 0, in_sync.stdout + in_sync.stderr

    (running / "leaf1.toy").write_text(leaf.replace("hostname leaf1", "hostname renamed"))
    drift = netfab(work, env, "audit", "intent.yaml", "--from-dir", "running", "--format", "json")
    assert drift.returncode == 1, drift.stdout + drift.stderr
    report = json.dumps(json.loads(drift.stdout))
    assert "hostname" in report and "renamed" in report


def test_a_broken_record_is_bad_input(tmp_path: Path) -> None:
    record = tmp_path / "records" / "toyos"
    record.mkdir(parents=True)
    (record / "platform.yaml").write_text(RECORD.replace("max_ecmp_paths: 64", "max_ecmp_paths: many"))
    intent = yaml.safe_load((ROOT / "intent" / "lab.yaml").read_text())
    intent["topology"]["leaf"]["platform"] = "toyos"
    (tmp_path / "intent.yaml").write_text(yaml.safe_dump(intent))
    res = netfab(tmp_path, {"NETFAB_PLATFORMS_PATH": str(tmp_path / "records")}, "lint", "intent.yaml")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "platform.yaml" in res.stderr and "max_ecmp_paths" in res.stderr
    assert "Traceback" not in res.stderr
