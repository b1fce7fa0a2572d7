"""`netfab diff` with a side in git (REV:PATH): every file name git can hold, REV:PATH as `git show` reads it from
any directory, links followed within the revision, findings named REV:PATH, and bad input as exit 2 with what was
wrong, never exit 3. Each case runs in a scratch repository, through main() as the `netfab` command does."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import pytest

from netfab.cli import app as app_module

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "intent" / "lab.yaml"
RAIL = ROOT / "intent" / "rail-4su.yaml"
Netfab = Callable[..., tuple[int, str]]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def _commit(repo: Path) -> None:
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.email=a@b", "-c", "user.name=n", "-c", "commit.gpgsign=false", "commit", "-qm", "c")


def _split(text: str, *keys: str) -> list[str]:
    """The intent's text cut before each of these top-level keys: parts whose merge is the intent again."""
    cuts = [0, *(text.index(f"\n{key}:") + 1 for key in keys), len(text)]
    return [text[start:end] for start, end in pairwise(cuts)]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One commit: intent/lab.yaml; split/ the same intent in three files, two named as git would quote them;
    docs/ without intent; odd/bin.yaml not UTF-8; links in and out of the revision. The test runs at its top."""
    repo = tmp_path / "repo"
    for folder in ("intent", "split", "docs", "odd", "links", "linked"):
        (repo / folder).mkdir(parents=True)
    shutil.copy(LAB, repo / "intent" / "lab.yaml")
    head, qos, rest = _split(LAB.read_text(encoding="utf-8"), "qos", "load_balancing")
    (repo / "split" / "a.yaml").write_text(head, encoding="utf-8")
    (repo / "split" / "zé.yaml").write_text(qos, encoding="utf-8")
    (repo / "split" / "z\nrest.yaml").write_text(rest, encoding="utf-8")
    (repo / "docs" / "README").write_text("no intent here\n", encoding="utf-8")
    (repo / "odd" / "bin.yaml").write_bytes(b"version: 1\nfabric: {name: \xff}\n")
    os.symlink("../intent/lab.yaml", repo / "links" / "current.yaml")
    os.symlink("../../outside.yaml", repo / "links" / "out.yaml")
    os.symlink("nothere.yaml", repo / "links" / "gone.yaml")
    os.symlink("../intent/lab.yaml", repo / "linked" / "lab.yaml")
    _git(repo, "init", "-q")
    _commit(repo)
    monkeypatch.chdir(repo)
    return repo


@pytest.fixture
def netfab(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Netfab:
    """netfab(*args) -> (exit code, stdout and stderr): main() in-process, so bad input is the exit 2 and a
    crash the exit 3 an operator would get (the `cli` fixture stops at the verb, before main() maps them)."""

    def run(*args: str) -> tuple[int, str]:
        monkeypatch.setattr(sys, "argv", ["netfab", *args])
        with pytest.raises(SystemExit) as ended:
            app_module.main()
        out = capsys.readouterr()
        return int(ended.value.code or 0), out.out + out.err

    return run


def test_a_revision_directory_keeps_the_names_git_quotes(repo: Path, netfab: Netfab) -> None:
    """Without -z, git C-quotes `zé.yaml` and a name with a line break, and they no longer end in .yaml."""
    code, out = netfab("diff", "intent/lab.yaml", "HEAD:split")
    assert code == 0, out
    assert "nothing changed" in out


def test_a_revision_directory_without_intent_files_is_exit_2(repo: Path, netfab: Netfab) -> None:
    code, out = netfab("diff", "intent/lab.yaml", "HEAD:docs")
    assert code == 2, out
    assert "HEAD:docs: error[LOAD001] directory contains no *.yaml or *.yml files" in out


def test_a_revision_file_that_is_not_utf8_is_load001_as_on_disk(repo: Path, netfab: Netfab) -> None:
    code, out = netfab("diff", "intent/lab.yaml", "HEAD:odd/bin.yaml")
    assert code == 2, out
    assert re.search(r"HEAD:odd/bin\.yaml:2:\d+: error\[LOAD001\] not UTF-8 text \(byte 0xff at offset 26\)", out)


@pytest.mark.parametrize(
    ("spec", "code", "said"),
    [
        ("HEAD:intent/../intent/lab.yaml", 0, "nothing changed"),
        ("HEAD::(top)intent/lab.yaml", 2, ":(top)intent/lab.yaml does not exist at revision HEAD"),
        ("HEAD:intent/../../lab.yaml", 2, "intent/../../lab.yaml is outside the repository"),
    ],
)
def test_a_path_git_does_not_take_as_it_is(repo: Path, netfab: Netfab, spec: str, code: int, said: str) -> None:
    """A '..' inside a path, and pathspec magic (which a REV:PATH does not have): never an internal error."""
    got, out = netfab("diff", "intent/lab.yaml", spec)
    assert (got, said in out) == (code, True), out


def test_a_revision_that_looks_like_an_option_is_refused(repo: Path, netfab: Netfab) -> None:
    code, out = netfab("diff", "intent/lab.yaml", "--", "--full-tree:HEAD")
    assert code == 2, out
    assert "revision '--full-tree' starts with '-'" in out


def test_git_error_text_that_is_not_utf8_is_still_reported(
    repo: Path, netfab: Netfab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git quotes the path it could not use as the bytes it is: here a repository whose name is not UTF-8."""
    monkeypatch.setenv("GIT_DIR", os.fsdecode(b"/nonexistent/\xff"))
    code, out = netfab("diff", "intent/lab.yaml", "HEAD:intent/lab.yaml")
    assert code == 2, out
    assert "not a git repository: '/nonexistent/\ufffd'" in out


@pytest.mark.parametrize(
    "spec", ["HEAD:intent/lab.yaml", "HEAD:./lab.yaml", "HEAD:../intent/lab.yaml", "HEAD:.", "HEAD:intent"]
)
def test_rev_path_means_what_git_show_means_from_a_subdirectory(
    repo: Path, netfab: Netfab, monkeypatch: pytest.MonkeyPatch, spec: str
) -> None:
    """From the top of the repository, unless it starts with ./ or ../ (or is .): then from here."""
    monkeypatch.chdir(repo / "intent")
    code, out = netfab("diff", "lab.yaml", spec)
    assert code == 0, out
    assert "nothing changed" in out


def test_annotations_name_the_changed_file_from_where_diff_runs(
    repo: Path, netfab: Netfab, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(RAIL, repo / "intent" / "rail.yaml")
    _commit(repo)
    text = RAIL.read_text(encoding="utf-8")
    (repo / "intent" / "rail.yaml").write_text(text.replace("kmin: 150KB", "kmin: 200KB"), encoding="utf-8")
    _commit(repo)
    monkeypatch.chdir(repo / "intent")
    code, out = netfab("diff", "HEAD~1:./rail.yaml", "HEAD:intent/rail.yaml", "--format", "json")
    assert code == 1, out
    report = json.loads(out[: out.rindex("}") + 1])
    ecn = [f for f in report["findings"] if f["rule_id"] == "DIFF-ECN"]
    assert len(ecn) == 48 and {f["location"]["file"] for f in ecn} == {"rail.yaml"}


def test_findings_of_a_revision_name_rev_path_not_the_scratch_copy(repo: Path, netfab: Netfab) -> None:
    code, out = netfab("diff", "HEAD:intent/lab.yaml", "HEAD:split")
    assert code == 0, out
    assert re.search(r"^HEAD:intent/lab\.yaml:\d+:\d+: info\[CAP026\]", out, re.M), out
    assert re.search(r"^HEAD:split/zé\.yaml:\d+:\d+: info\[CAP026\]", out, re.M), out
    assert "netfab-diff-" not in out


@pytest.mark.parametrize(
    ("spec", "code", "said"),
    [
        ("HEAD:links/current.yaml", 0, "nothing changed"),
        ("HEAD:linked", 0, "nothing changed"),
        ("HEAD:links/out.yaml", 2, "HEAD:links/out.yaml is a symbolic link out of the repository"),
        ("HEAD:links/gone.yaml", 2, "HEAD:links/gone.yaml is a dangling symbolic link"),
    ],
)
def test_a_symbolic_link_is_followed_within_the_revision(
    repo: Path, netfab: Netfab, spec: str, code: int, said: str
) -> None:
    """git stores a link as its target's name: read as the intent, that is a one-line string (LOAD002)."""
    got, out = netfab("diff", "intent/lab.yaml", spec)
    assert (got, said in out) == (code, True), out
