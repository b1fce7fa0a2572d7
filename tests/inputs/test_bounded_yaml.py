"""Every YAML netfab reads is bounded the same way (RELIABILITY_TRIAL.md F8-A, F8-B).

The trial: a 60 KB intent nested 30,000 deep killed every verb with SIGSEGV (exit 139); a billion-laughs
playbook ran 117 s to 2.5 GB, a deep playbook gave a raw RecursionError (audit: exit 3).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from netfab.audit.rules import load_audit_playbook
from netfab.deploy.inventory import InventoryError, load_inventory_data
from netfab.deploy.playbook import load_playbook
from netfab.load import load_intent_source, parse_yaml_text
from netfab.load.document import DocumentError
from netfab.load.yamlsource import MAX_BYTES, MAX_DEPTH

REPO = Path(__file__).resolve().parents[2]
DEEP = 30_000  # the trial's depth: fine at 20,000, SIGSEGV at 30,000 before the fix


def flow_list(depth: int) -> str:
    return "[" * depth + "]" * depth


def flow_map(depth: int) -> str:
    return "{a: " * depth + "1" + "}" * depth


def block_seq(depth: int) -> str:
    return "\n" + "- " * depth + "x"


def billion_laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("nested", [flow_list, flow_map, block_seq], ids=["flow-list", "flow-map", "block-seq"])
def test_deep_nesting_is_a_finding_not_a_crash(nested: Callable[[int], str], tmp_path: Path) -> None:
    text = "version: 1\nfabric: {name: lab}\nx: " + nested(DEEP) + "\n"
    parsed = parse_yaml_text(text, tmp_path / "deep.yaml")
    assert [f.rule_id for f in parsed.findings] == ["LOAD003"]
    finding = parsed.findings[0]
    assert finding.message == f"nesting deeper than {MAX_DEPTH} levels"
    assert finding.location.line >= 3 and finding.location.column > MAX_DEPTH  # points into the brackets


def test_nesting_just_inside_the_cap_still_loads(tmp_path: Path) -> None:
    # MAX_DEPTH levels below the root mapping: the cap is a limit, not an off-by-one refusal.
    parsed = parse_yaml_text("x: " + flow_list(MAX_DEPTH - 1) + "\n", tmp_path / "ok.yaml")
    assert parsed.findings == [] and parsed.data is not None


def test_lint_of_a_30000_deep_intent_exits_2_with_a_location(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("version: 1\nfabric: {name: lab}\nx: " + flow_list(DEEP) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "netfab.cli.app", "lint", str(deep)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=tmp_path,
    )
    assert proc.returncode == 2, (proc.returncode, proc.stderr)  # was -11 / 139 (SIGSEGV)
    out = proc.stdout + proc.stderr
    assert "deep.yaml:3:" in out and "LOAD003" in out


def _playbook(path: Path, body: str) -> Path:
    path.write_text(body)
    return path


LOADERS: dict[str, Callable[[Path], Any]] = {
    "playbook": load_playbook,
    "audit runbook": load_audit_playbook,
}


@pytest.mark.parametrize("kind", sorted(LOADERS))
def test_billion_laughs_is_refused_quickly_and_in_bounded_memory(kind: str, tmp_path: Path) -> None:
    bomb = _playbook(tmp_path / "bomb.yaml", billion_laughs() + "name: x\nwaves: [{name: w}]\n")
    peak: list[int] = []
    with pytest.raises(DocumentError) as err:
        _with_peak_rss(lambda: LOADERS[kind](bomb), peak)
    assert [f.rule_id for f in err.value.findings] == ["LOAD003"]
    assert "alias explosion" in str(err.value) and "bomb.yaml:" in str(err.value)
    # 10^10 values if expanded; refused after 200,000 (speed is measured in bench/, not asserted here).
    assert peak[0] < 1024 * 1024, f"peak RSS grew to {peak[0]} KB"  # the trial: 2.5 GB


def _with_peak_rss(fn: Callable[[], Any], peak: list[int]) -> Any:
    try:
        return fn()
    finally:
        peak.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)  # KB on Linux


@pytest.mark.parametrize("kind", sorted(LOADERS))
def test_deep_playbook_is_a_located_finding_not_a_recursion_error(kind: str, tmp_path: Path) -> None:
    deep = _playbook(tmp_path / "deep.yaml", "name: x\nwaves: " + flow_list(DEEP) + "\n")
    with pytest.raises(DocumentError, match=r"deep\.yaml:2:\d+: LOAD003 nesting deeper than 100 levels"):
        LOADERS[kind](deep)


def test_playbook_schema_errors_point_at_the_line(tmp_path: Path) -> None:
    book = _playbook(tmp_path / "p.yaml", "name: x\nwaves:\n  - name: leaves\n    failure_budget: -1\n")
    with pytest.raises(DocumentError, match=r"p\.yaml:4:21: SCHEMA-value waves\[0\]\.failure_budget"):
        load_playbook(book)


def test_playbook_with_a_duplicate_key_is_refused(tmp_path: Path) -> None:
    # YAML keeps the last value silently: a doubled failure_budget would run with whichever one won.
    text = "name: x\nwaves:\n  - name: leaves\n    failure_budget: 0\n    failure_budget: 5\n"
    with pytest.raises(DocumentError, match="YAML001 duplicate key 'failure_budget'"):
        load_playbook(_playbook(tmp_path / "dup.yaml", text))


@pytest.mark.parametrize("timeout", ["0s", "500ms"])
def test_playbook_confirm_timeout_under_a_second_is_refused_at_load(timeout: str, tmp_path: Path) -> None:
    # The trial: a timer of 0 was refused only per device, after every device had been backed up and diffed.
    book = _playbook(tmp_path / "p.yaml", f"name: x\nconfirm_timeout: {timeout}\nwaves: [{{name: w}}]\n")
    with pytest.raises(DocumentError, match=r"p\.yaml:2:\d+: SCHEMA-value confirm_timeout"):
        load_playbook(book)


def test_a_fifo_as_playbook_is_refused_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "book.yaml"
    os.mkfifo(fifo)
    result: list[BaseException] = []

    def load() -> None:
        try:
            load_playbook(fifo)
        except BaseException as exc:  # collected for the assertion below
            result.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "reading a FIFO blocked"
    assert isinstance(result[0], DocumentError) and "LOAD001 not a regular file" in str(result[0])


def test_oversized_document_is_refused_before_parsing(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as fh:
        fh.truncate(MAX_BYTES + 1)  # sparse: no disk space used
    source = load_intent_source([big])
    assert [f.rule_id for f in source.findings] == ["LOAD003"] and source.unreadable
    assert "larger than 64 MiB" in source.findings[0].message


def _inventory(tmp_path: Path, hosts: str) -> tuple[Path, Path]:
    generated = tmp_path / "gen"
    generated.mkdir()
    (generated / "hosts.yaml").write_text("leaf1:\n  hostname: 192.0.2.1\n  platform: frr\n")
    override = tmp_path / "inv"
    override.mkdir()
    (override / "hosts.yaml").write_text(hosts)
    return generated, override


def test_inventory_override_alias_bomb_is_an_inventory_error(tmp_path: Path) -> None:
    generated, override = _inventory(tmp_path, billion_laughs() + "leaf1: {data: {x: *a9}}\n")
    with pytest.raises(InventoryError, match=r"inv/hosts\.yaml:\d+:\d+: LOAD003 more than 200000 values"):
        load_inventory_data(generated, [override])


def test_inventory_override_deep_nesting_is_an_inventory_error(tmp_path: Path) -> None:
    generated, override = _inventory(tmp_path, "leaf1: {data: {x: " + flow_list(DEEP) + "}}\n")
    with pytest.raises(InventoryError, match="LOAD003 nesting deeper than 100 levels"):
        load_inventory_data(generated, [override])


def test_inventory_host_that_is_not_a_mapping_is_an_inventory_error(tmp_path: Path) -> None:
    generated, override = _inventory(tmp_path, "leaf1: just-a-string\n")
    with pytest.raises(InventoryError, match="host 'leaf1' must be a mapping"):
        load_inventory_data(generated, [override])


def test_shipped_playbooks_and_a_generated_inventory_still_load(tmp_path: Path) -> None:
    assert load_playbook(REPO / "playbooks" / "deploy.yaml").waves
    assert load_audit_playbook(REPO / "playbooks" / "audit.yaml").name
    generated, override = _inventory(tmp_path, "leaf1:\n  port: 2222\n")
    hosts, _ = load_inventory_data(generated, [override])
    assert hosts["leaf1"]["port"] == 2222 and hosts["leaf1"]["hostname"] == "192.0.2.1"


def test_a_playbook_that_is_a_list_says_so_in_playbook_terms(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match=r"LOAD002 top level is a list, not a mapping \(a playbook file is a"):
        load_playbook(_playbook(tmp_path / "list.yaml", "- name: x\n"))


def test_device_data_gets_the_same_caps_but_keeps_its_own_shape() -> None:
    # An NVUE config saved for `audit --from-dir` is user input too: the 30,000-deep document crashed it.
    from netfab.audit.facts import nvidia_cumulus
    from netfab.load.document import load_data

    with pytest.raises(DocumentError, match="LOAD003 nesting deeper than 100 levels"):
        nvidia_cumulus.parse("- set:\n    x: " + flow_list(DEEP) + "\n")
    with pytest.raises(DocumentError, match="LOAD003 more than 200000 values"):
        load_data(billion_laughs() + "x: *a9\n", "saved.yaml", "NVUE config")
    # A list at the top, YAML 1.1 booleans: the device's own notation, read as safe_load read it, not refused.
    assert load_data("- set: {pfc: on, mtu: 9216}\n", "saved.yaml", "NVUE config") == [
        {"set": {"pfc": True, "mtu": 9216}}
    ]
    tree = nvidia_cumulus.parse("- set:\n    interface:\n      swp1: {link: {mtu: 9216}}\n")
    assert tree == {"interface": {"swp1": {"link": {"mtu": 9216}}}}
