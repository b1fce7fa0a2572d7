"""The trial's hostile command lines (RELIABILITY_TRIAL.md F8-C, F8-D, unclear errors): exit 2 with the path
and a hint, decided before anything is built, written or contacted. Run as real processes, so the exit code is
the one a shell sees (the trial's exit 3s came from the top-level handler, which CliRunner bypasses)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    # Management addresses on loopback: should a regression let a verb reach for devices after all, it can
    # only knock on this machine, never on a real management network.
    text = (REPO / "intent" / "lab.yaml").read_text() + "management:\n  subnet: 127.77.0.0/16\n"
    (tmp_path / "lab.yaml").write_text(text)
    return tmp_path


def netfab(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("NETFAB_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "netfab.cli.app", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def refused(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, (proc.returncode, out)
    assert "internal error" not in out and "Traceback" not in out, out
    for needle in needles:
        assert needle in out, (needle, out)
    return out


def test_deploy_lab_prefix_with_dots_cannot_escape_the_build_root(work: Path) -> None:
    victim = work / "victim" / "lab"
    victim.mkdir(parents=True)
    (victim / "important.txt").write_text("x")
    refused(netfab(work, "deploy", "lab.yaml", "--lab", "/../../victim", "--limit", "nomatch"), "1-8 lowercase")
    assert (victim / "important.txt").read_text() == "x"
    assert not (work / "build").exists()


@pytest.mark.parametrize("verb", ["deploy", "verify", "audit", "rollback"])
def test_a_lab_that_is_not_up_is_exit_2_and_nothing_is_built_or_contacted(verb: str, work: Path) -> None:
    args = ["RUNID", "--intent", "lab.yaml"] if verb == "rollback" else ["lab.yaml"]
    extra = ["--dry-run"] if verb == "deploy" else []
    proc = netfab(work, verb, *args, "--lab", "zz9none", *extra)
    refused(proc, "no lab with prefix 'zz9none' is up", "netfab lab up")
    # It used to build, then SSH as root to the intent's production management addresses.
    assert "127.77." not in proc.stderr and "SSH" not in proc.stderr
    assert not (work / "build").exists() and not (work / "runs").exists()


def test_build_out_pointing_at_a_file(work: Path) -> None:
    passwd = work / "passwd"
    passwd.write_text("root:x:0:0\n")
    refused(netfab(work, "build", "lab.yaml", "--out", str(passwd)), "is not a directory", "give --out a directory")
    assert passwd.read_text() == "root:x:0:0\n"


def test_build_out_never_replaces_a_directory_it_did_not_write(work: Path) -> None:
    (work / "d" / "lab").mkdir(parents=True)
    (work / "d" / "lab" / "notes.txt").write_text("mine")
    refused(netfab(work, "build", "lab.yaml", "--out", "d"), "not a netfab output directory", "hint:")
    assert (work / "d" / "lab" / "notes.txt").read_text() == "mine"


def test_build_out_never_follows_a_symlink_out_of_the_root(work: Path) -> None:
    (work / "elsewhere").mkdir()
    (work / "elsewhere" / "keep.txt").write_text("keep")
    (work / "d").mkdir()
    (work / "d" / "lab").symlink_to(work / "elsewhere")
    refused(netfab(work, "build", "lab.yaml", "--out", "d"), "is a symbolic link")
    assert (work / "elsewhere" / "keep.txt").read_text() == "keep"


def test_build_twice_into_the_same_root_still_works(work: Path) -> None:
    for _ in range(2):
        proc = netfab(work, "build", "lab.yaml", "--out", "out")
        assert proc.returncode == 0, proc.stderr
    assert (work / "out" / "lab" / "configs").is_dir()


def test_runs_pointing_at_a_file(work: Path) -> None:
    (work / "passwd").write_text("x\n")
    refused(netfab(work, "deploy", "lab.yaml", "--runs", "passwd", "--dry-run"), "--runs", "is not a directory")
    assert not (work / "build").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a read-only tmpfs needs root")
def test_read_only_runs_dir_is_exit_2_before_anything_happens(work: Path) -> None:
    ro = work / "ro"
    ro.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)], check=True)
    try:
        proc = netfab(work, "deploy", "lab.yaml", "--runs", str(ro), "--dry-run")
        refused(proc, "read-only file system", "--runs")
        audit = netfab(work, "audit", "lab.yaml", "--remediate", "--runs", str(ro))
        out = refused(audit, "read-only file system", "--runs")
        assert "playbook" not in out  # it used to blame the staging playbook
    finally:
        subprocess.run(["umount", str(ro)], check=True)


@pytest.mark.parametrize(
    "args",
    [
        ["deploy", "lab.yaml", "--confirm-timeout", "0"],
        ["deploy", "lab.yaml", "--confirm-timeout", "-5"],
        ["verify", "lab.yaml", "--workers", "0"],
        ["audit", "lab.yaml", "--workers", "-3"],
        ["audit", "lab.yaml", "--confirm-timeout", "0"],
    ],
    ids=lambda a: " ".join(a[0:1] + a[2:]),
)
def test_bad_numbers_are_usage_errors_before_any_device(args: list[str], work: Path) -> None:
    refused(netfab(work, *args), "Invalid value for", args[2])
    assert not (work / "build").exists() and not (work / "runs").exists()


@pytest.mark.parametrize("verb", ["deploy", "verify", "audit"])
def test_a_mistyped_inventory_dir_is_refused_not_skipped(verb: str, work: Path) -> None:
    # It used to read as an empty override: the run went ahead with the generated inventory alone.
    refused(netfab(work, verb, "lab.yaml", "--inventory", "no-such-dir"), "--inventory no-such-dir is not a directory")
    assert not (work / "build").exists()


@pytest.mark.parametrize("verb", ["verify", "audit"])
def test_report_output_is_checked_before_any_device(verb: str, work: Path) -> None:
    (work / "reports").mkdir()
    refused(netfab(work, verb, "lab.yaml", "--output", "reports"), "--output reports is a directory")
    (work / "afile").write_text("x")
    refused(netfab(work, verb, "lab.yaml", "--output", "afile/report.json"), "afile is not a directory")
    assert not (work / "build").exists()


def test_lab_up_with_a_bogus_mgmt_subnet(work: Path) -> None:
    refused(netfab(work, "lab", "up", "lab.yaml", "--prefix", "zz", "--mgmt-subnet", "bogus"), "not an IPv4 network")


def test_lab_status_with_a_bogus_format(work: Path) -> None:
    refused(netfab(work, "lab", "status", "--format", "bogus"), "unknown format 'bogus'")


@pytest.mark.parametrize("run_id", ["../../../etc", "/etc"])
def test_rollback_of_a_path_is_not_a_run_id(run_id: str, work: Path) -> None:
    refused(netfab(work, "rollback", run_id, "--intent", "lab.yaml"), "run id")


def test_audit_out_that_is_not_a_netfab_dir_is_refused_before_collecting(work: Path) -> None:
    home = work / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("years of work")
    refused(netfab(work, "audit", "lab.yaml", "--out", str(home)), "not a netfab output directory")
    assert (home / "thesis.tex").read_text() == "years of work"
