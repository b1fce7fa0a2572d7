"""Credentials never appear in files, logs, diffs or reports.

NETFAB_PASSWORD is set to a distinctive value and a full Deployer run goes over test_engine_flow's fake
driver, arranged so the secret shows up everywhere a device could put it: in the running config and the
diff (as `secret`, `password` and SNMP community values), in a commit error that echoes the password, and
in a post-check message. The run's events are printed the way the CLI prints them. Then the secret must be
in no file under the journal, in nothing printed, in no log record (captured at DEBUG), and in no repr of
the credentials, the Nornir inventory objects or the outcome. `netfab build` must write no credentials.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_engine_flow import BASE, DEVICES, FakeDevice, FakeDriver, fake_check

from netfab.core.events import DeployEvent
from netfab.core.redact import MASK
from netfab.deploy import connection, engine
from netfab.deploy.credentials import Credentials
from netfab.deploy.engine import Deployer, DeviceArtifacts
from netfab.deploy.inventory import build_nornir
from netfab.deploy.journal import DeviceRecord, Journal, RunRecord
from netfab.deploy.waves import Wave

ROOT = Path(__file__).resolve().parents[2]
SECRET = "Zq7-distinctive-S3cret-4242"
NAMES = ["leaf1", "leaf2", "leaf3", "spine1"]


def _files_containing(root: Path, needle: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_secret_never_reaches_journal_output_logs_or_reprs(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("NETFAB_PASSWORD", SECRET)
    monkeypatch.setenv("NETFAB_USERNAME", "netops")
    caplog.set_level(logging.DEBUG)
    credentials = Credentials.from_env()
    assert credentials.password == SECRET

    DEVICES.clear()
    for n in NAMES:
        # What a device hands back: secrets in its running config (and so in the backup and the diff).
        DEVICES[n] = FakeDevice(
            n, BASE.format(name=n) + f"username admin secret sha512 {SECRET}\nsnmp-server community {SECRET} ro\n"
        )
    DEVICES["leaf2"].fail_commit = "% Authentication failed for netops/{password}"  # the device echoes it
    DEVICES["leaf3"].checks_pass = False
    real_resolve = connection.resolve_driver
    monkeypatch.setattr(connection, "resolve_driver", lambda p: FakeDriver if p == "fake" else real_resolve(p))
    monkeypatch.setattr(engine, "run_checks", fake_check({"leaf3": f"neighbor 10.0.0.1 password {SECRET} rejected"}))

    hosts = {n: {"hostname": n, "port": 22, "groups": ["platform_fake"]} for n in NAMES}
    groups = {"platform_fake": {"connection_options": {"netfab_napalm": {"platform": "fake"}}}}
    nr = build_nornir(hosts, groups, credentials)
    waves = [Wave("leaves", ("leaf1", "leaf2", "leaf3"), 3, 3), Wave("spines", ("spine1",), 1, 0)]
    record = RunRecord(
        "run1", "fab", ["intent.yaml"], "deploy.yaml", False,
        waves=[{"name": w.name, "devices": list(w.devices)} for w in waves],
        devices={d: DeviceRecord(d, w.name) for w in waves for d in w.devices},
    )  # fmt: skip
    journal = Journal(tmp_path / "runs", record, credentials.secrets())
    intended = {
        n: BASE.format(name=n).replace("9214", "9216")
        + f"username admin secret 0 {SECRET}\nrouter bgp 65001\n   neighbor 10.0.0.1 password {SECRET}\n"
        for n in NAMES
    }

    def on_event(event: DeployEvent) -> None:  # as the CLI prints them
        text = (
            f"--- {event.subject}\n{event.message}"
            if event.kind == "diff"
            else f"[{event.kind}] {event.subject}: {event.message}"
        )
        print(text, file=sys.stderr)

    deployer = Deployer(
        nr, type("Plan", (), {"devices": {n: type("D", (), {"name": n})() for n in NAMES}})(),  # type: ignore[arg-type]
        {n: DeviceArtifacts(config=intended[n]) for n in NAMES}, journal, 300, 0, on_event=on_event,
    )  # fmt: skip
    outcome = deployer.run(waves)
    for host, err in sorted(outcome.failed.items()):  # the CLI's closing summary
        print(f"  {host}: {err}", file=sys.stderr)
    journal.finish("failed", outcome.message)

    # The run really carried the secret through every path being checked.
    assert DEVICES["leaf1"].opened_with is not None and FakeDriver is not None
    assert SECRET in DEVICES["leaf1"].running and outcome.changed == ["leaf1", "spine1"]
    assert set(outcome.failed) == {"leaf2", "leaf3"} and outcome.rolled_back == ["leaf3"]

    # 1. Files: nothing under the run's journal holds it; the masks are where the secrets were.
    assert _files_containing(tmp_path, SECRET) == []
    devdir = journal.dir / "devices" / "leaf1"
    assert f"username admin secret sha512 {MASK}" in (devdir / "before.conf").read_text()
    assert f"+   neighbor 10.0.0.1 password {MASK}" in (devdir / "diff.txt").read_text()
    assert f"snmp-server community {MASK} ro" in (devdir / "before.conf").read_text()
    assert f"username admin secret 0 {MASK}" in (devdir / "after.conf").read_text()
    assert MASK in (journal.dir / "run.json").read_text()  # leaf2's echoed error, masked
    assert MASK in (journal.dir / "devices" / "leaf3" / "checks.json").read_text()

    # 2. What was printed: diffs, events, the failure summary.
    out, err = capsys.readouterr()
    assert SECRET not in out + err
    assert f"+   neighbor 10.0.0.1 password {MASK}" in err and f"netops/{MASK}" in err

    # 3. Log records, at DEBUG, from every logger (Nornir's included).
    for rec in caplog.records:
        assert SECRET not in rec.getMessage() and SECRET not in (rec.exc_text or ""), rec.name
    assert SECRET not in caplog.text

    # 4. Reprs of what holds the credentials.
    host = nr.inventory.hosts["leaf1"]
    params = host.get_connection_parameters("netfab_napalm")
    for obj in (credentials, host, nr.inventory.hosts, nr.inventory, params, host.connection_options, outcome):
        assert SECRET not in repr(obj) and SECRET not in str(obj), type(obj).__name__
    assert params.password == SECRET  # it is there for the driver, just never shown
    DEVICES.clear()


def test_netfab_build_writes_no_credentials(tmp_path: Path) -> None:
    env = dict(os.environ, NETFAB_PASSWORD=SECRET, NETFAB_USERNAME="user-Zq7-distinctive", PYTHONPATH=str(ROOT))
    res = subprocess.run(
        [sys.executable, "-c", "from netfab.cli.app import main; main()", "build", str(ROOT / "intent" / "lab.yaml"),
         "--out", str(tmp_path / "build"), "-q"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    inventory = next((tmp_path / "build").glob("*/inventory"))
    assert sorted(p.name for p in inventory.iterdir()) == ["defaults.yaml", "groups.yaml", "hosts.yaml"]
    assert _files_containing(tmp_path / "build", SECRET) == []
    assert _files_containing(tmp_path / "build", "user-Zq7-distinctive") == []
    assert SECRET not in res.stdout + res.stderr

    def keys(node: object) -> set[str]:
        if isinstance(node, dict):
            return set(node) | {k for v in node.values() for k in keys(v)}
        if isinstance(node, list):
            return {k for v in node for k in keys(v)}
        return set()

    for path in inventory.iterdir():
        found = keys(yaml.safe_load(path.read_text())) & {"password", "username", "secret", "key_file"}
        assert not found, f"{path.name} carries {found}"
