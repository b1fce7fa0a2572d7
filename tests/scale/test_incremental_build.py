"""Rebuilds: nothing changed -> nothing written (inodes and mtimes prove it); one knob -> only the files it
changes are rewritten, with a summary in the audit's words; parallel == serial; a killed build leaves the old
tree; the inputs digest covers templates and code."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from netfab.cli.pipeline import load_plan
from netfab.core import digest as digest_module
from netfab.render import build as build_module
from netfab.render.manifest import MANIFEST, inputs_digest, read_manifest

ROOT = Path(__file__).resolve().parents[2]
RAIL = ROOT / "intent" / "rail-4su.yaml"
Cli = Callable[..., tuple[int, str]]
"""The `cli` fixture (tests/scale/conftest.py)."""


def _stats(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_ino, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def _knob(tmp_path: Path) -> Path:
    changed = tmp_path / "rail-4su.yaml"
    text = RAIL.read_text()
    assert "kmin: 150KB" in text
    changed.write_text(text.replace("kmin: 150KB", "kmin: 200KB"))
    return changed


def test_a_rebuild_with_nothing_changed_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "build"
    code, _ = cli("build", str(RAIL), "-o", str(out), "-q")
    assert code == 0
    tree = out / "rail-4su"
    before, tree_inode = _stats(tree), tree.stat().st_ino
    code, text = cli("build", str(RAIL), "-o", str(out), "-q")
    assert code == 0 and "is up to date" in text and "nothing written" in text
    assert _stats(tree) == before  # every file and directory: same inode, same mtime
    assert tree.stat().st_ino == tree_inode  # the tree was not swapped either
    assert sorted(p.name for p in out.iterdir()) == ["rail-4su"]  # no staging left behind


def test_a_hand_edited_file_is_rewritten_not_trusted(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "build"
    cli("build", str(RAIL), "-o", str(out), "-q")
    config = next((out / "rail-4su" / "configs").iterdir())
    original = config.read_bytes()
    config.write_bytes(original + b"! hand edit\n")
    code, text = cli("build", str(RAIL), "-o", str(out), "-q")
    assert code == 0 and "up to date" not in text
    assert config.read_bytes() == original
    assert "1 written" in text


def test_one_knob_rewrites_only_what_it_changes_and_says_what(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "build"
    cli("build", str(RAIL), "-o", str(out), "-q")
    tree = out / "rail-4su"
    before = _stats(tree)
    code, text = cli("build", str(_knob(tmp_path)), "-o", str(out), "-q")
    assert code == 0, text
    after = _stats(tree)
    rewritten = {f for f in before if f in after and before[f] != after[f] and (tree / f).is_file()}
    configs = {f for f in after if f.startswith("configs/") and (tree / f).is_file()}
    # ECN lives in the switches' primary configs; hosts, cabling, inventory and companion files keep their inodes.
    assert rewritten - {MANIFEST, ".netfab-output"} == {f for f in configs if f in rewritten}
    assert not any(f.startswith(("hosts/", "inventory/")) or f == "cabling.csv" for f in rewritten)
    assert len(rewritten - {MANIFEST, ".netfab-output"}) == 48  # every switch has the lossless queue
    assert "32 leaf configs changed" in text and "16 spine configs changed" in text
    assert "ECN Kmin on queue 3: 150 KB -> 200 KB on 32 leaves and 16 spines" in text
    assert "host scripts: 128 unchanged" in text


def test_a_parallel_build_is_byte_identical_to_a_serial_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = load_plan([RAIL]).plan
    build_module.build(plan, tmp_path / "serial", workers=1)
    monkeypatch.setattr(build_module, "_PARALLEL_THRESHOLD", 1)
    build_module.build(plan, tmp_path / "parallel", workers=2)
    serial, parallel = tmp_path / "serial" / "rail-4su", tmp_path / "parallel" / "rail-4su"
    files = sorted(str(p.relative_to(serial)) for p in serial.rglob("*") if p.is_file())
    assert files == sorted(str(p.relative_to(parallel)) for p in parallel.rglob("*") if p.is_file())
    assert len(files) > 150
    for f in files:
        if f != MANIFEST:  # it records inodes and mtimes, which two trees never share
            assert (serial / f).read_bytes() == (parallel / f).read_bytes(), f
    a, b = read_manifest(serial), read_manifest(parallel)
    assert a is not None and b is not None
    assert {f: r.digest for f, r in a.files.items()} == {f: r.digest for f, r in b.files.items()}


def _killed_build(plan_path: str, out: str) -> None:
    """Child: an incremental build that SIGKILLs itself half-way through rendering."""
    plan = load_plan([Path(plan_path)]).plan
    real, calls = build_module.render_device, {"n": 0}

    def dying(dev, context=None):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 20:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(dev, context)

    build_module.render_device = dying  # type: ignore[assignment]
    build_module.build(plan, Path(out), workers=1)


def test_a_killed_incremental_build_leaves_the_old_tree(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "build"
    cli("build", str(RAIL), "-o", str(out), "-q")
    tree = out / "rail-4su"
    before = {f: (tree / f).read_bytes() for f in _stats(tree) if (tree / f).is_file()}
    child = multiprocessing.get_context("fork").Process(target=_killed_build, args=(str(_knob(tmp_path)), str(out)))
    child.start()
    child.join(60)
    assert child.exitcode == -signal.SIGKILL
    assert {f: (tree / f).read_bytes() for f in _stats(tree) if (tree / f).is_file()} == before
    code, text = cli("build", str(RAIL), "-o", str(out), "-q")
    assert code == 0 and "up to date" in text  # the old tree is whole, manifest and all


def test_the_inputs_digest_covers_the_intent_the_templates_and_the_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    templates = tmp_path / "templates"
    (templates / "host").mkdir(parents=True)
    (templates / "host" / "nic.sh.j2").write_text("a\n")
    monkeypatch.setattr(digest_module, "templates_dir", lambda: templates)
    base = inputs_digest([RAIL], "strict=False")
    assert inputs_digest([RAIL], "strict=False") == base
    assert inputs_digest([RAIL], "strict=True") != base
    assert inputs_digest([_knob(tmp_path)], "strict=False") != base
    (templates / "host" / "nic.sh.j2").write_text("b\n")
    assert inputs_digest([RAIL], "strict=False") != base


def test_the_code_digest_reads_through_linked_folders(tmp_path: Path) -> None:
    """A platform record kept elsewhere and linked into NETFAB_PLATFORMS_PATH is read through the link by the
    registry and the template loader, so an edit there must change the digest (it did not: os.walk does not
    enter a linked folder, and such a build stayed "up to date" for good)."""
    real = tmp_path / "kept" / "myfrr"
    (real / "templates").mkdir(parents=True)
    (real / "templates" / "frr.conf.j2").write_text("a\n")
    path = tmp_path / "platforms"
    path.mkdir()
    (path / "myfrr").symlink_to(real, target_is_directory=True)
    base = digest_module.code_digest(str(path))
    (real / "templates" / "frr.conf.j2").write_text("b\n")
    edited = digest_module.code_digest(str(path))
    assert edited != base
    # A link back up is named, not walked for ever; adding one is still a change.
    (real / "templates" / "up").symlink_to(tmp_path, target_is_directory=True)
    assert digest_module.code_digest(str(path)) not in (base, edited)


def test_the_code_digest_survives_a_dangling_link(tmp_path: Path) -> None:
    """An editor's lock file (`.#frr.conf.j2 -> user@host.1234`) is a link to nothing: the build digests a
    marker for it instead of failing with an internal error, and the digest changes once it can be read."""
    folder = tmp_path / "platforms" / "myfrr"
    folder.mkdir(parents=True)
    (folder / "platform.yaml").write_text("name: myfrr\n")
    base = digest_module.code_digest(str(tmp_path / "platforms"))
    lock = folder / ".#platform.yaml"
    lock.symlink_to(tmp_path / "user@host.1234")
    locked = digest_module.code_digest(str(tmp_path / "platforms"))
    assert locked != base
    (tmp_path / "user@host.1234").write_text("x\n")
    assert digest_module.code_digest(str(tmp_path / "platforms")) not in (base, locked)


@pytest.mark.parametrize("partial", [[], ["--platform", "host"]])
def test_every_tree_of_a_build_records_the_code_digest_taken_once(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, partial: list[str]
) -> None:
    """The Jinja environment keeps the templates the first network compiled. A code digest taken again for each
    network named a template saved meanwhile in the later trees, over text rendered from the one before, and
    every later build called them up to date. The build takes it once and hands it to every tree."""
    intent = ROOT / "intent" / "ent64.yaml"  # two networks: backend and storage

    def taken_again(*_: object) -> str:
        pytest.fail("the render took the code digest again instead of using the build's")

    monkeypatch.setattr(build_module, "code_digest", taken_again)
    code, text = cli("build", str(intent), "-o", str(tmp_path / "out"), "-q", *partial)
    assert code == 0, text
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["ent64", "ent64-storage"]


@pytest.mark.parametrize("library", ["jinja2", "PyYAML", "pydantic"])
def test_the_inputs_digest_covers_the_libraries_that_shape_the_output(
    library: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Jinja2 and PyYAML write the files; pydantic validates the intent, and another release may give another
    model of the same bytes: a build by another release of any of them is never "up to date"."""
    base = inputs_digest([RAIL], "strict=False")
    real = digest_module._version
    monkeypatch.setattr(digest_module, "_version", lambda dist: "0.0-other" if dist == library else real(dist))
    assert inputs_digest([RAIL], "strict=False") != base


def test_netfab_diff_shows_the_change_grouped_and_exits_1(cli: Cli, tmp_path: Path) -> None:
    code, text = cli("diff", str(RAIL), str(_knob(tmp_path)))
    assert code == 1
    assert "ECN Kmin on queue 3: 150 KB -> 200 KB on 32 leaves and 16 spines" in text
    code, text = cli("diff", str(RAIL), str(RAIL))
    assert code == 0 and "nothing changed" in text
    assert not list(tmp_path.glob("**/configs"))  # nothing was built


def test_netfab_diff_reads_git_revisions_and_writes_json(cli: Cli, tmp_path: Path, check_report_json) -> None:  # type: ignore[no-untyped-def]
    repo = tmp_path / "repo"
    (repo / "intent").mkdir(parents=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)

    git("init", "-q")
    (repo / "intent" / "x.yaml").write_text(RAIL.read_text())
    git("add", ".")
    git("commit", "-qm", "a")
    (repo / "intent" / "x.yaml").write_text(_knob(tmp_path).read_text())
    git("commit", "-qam", "b")
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        code, text = cli("diff", "HEAD~1:intent/x.yaml", "HEAD:intent/x.yaml", "--format", "json", stdout_only=True)
        bad = subprocess.run(
            [sys.executable, "-m", "netfab.cli.app", "diff", "HEAD~1:intent/missing.yaml", "HEAD:intent/x.yaml"],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    finally:
        os.chdir(cwd)
    assert code == 1

    report = check_report_json(text, "diff")  # the shared envelope, docs/report.schema.json
    ecn = [f for f in report["findings"] if f["rule_id"] == "DIFF-ECN"]
    assert len(ecn) == 48 and {f["actual"] for f in ecn} == {150000} and {f["expected"] for f in ecn} == {200000}
    assert bad.returncode == 2 and "does not exist at revision" in bad.stderr and "Traceback" not in bad.stderr


def test_a_change_that_names_every_host_is_one_group_of_host_scripts(cli: Cli, tmp_path: Path) -> None:
    """Each host script names its server in the changed lines; the summary still says it once, not 128 times."""
    out = tmp_path / "build"
    cli("build", str(RAIL), "-o", str(out), "-q")
    text = RAIL.read_text()
    changed = tmp_path / "ets.yaml"
    changed.write_text(
        text.replace("lossless: true, weight: 50,", "lossless: true, weight: 60,").replace(
            "priority: 0, weight: 50}", "priority: 0, weight: 40}"
        )
    )
    code, summary = cli("build", str(changed), "-o", str(out), "-q")
    assert code == 0, summary
    assert "128 host scripts changed" in summary
    groups = [line for line in summary.splitlines() if line.startswith("  - ")]
    hosts = [line for line in groups if "host scripts" in line]
    # The host script's first changed lines are now its ETS comment and the inbox `dcb ets` line (the mlnx_qos
    # line follows): the group shows the new shares either way.
    assert len(hosts) == 1 and hosts[0].startswith("  - 128 host scripts: ") and "shares 40,0,0,60" in hosts[0]
    assert "  - DWRR share of queue 3: 50 -> 60 on 32 leaves and 16 spines (plane 1)" in groups


def test_a_value_of_its_own_on_every_device_is_one_line(cli: Cli, tmp_path: Path) -> None:
    """A new leaf loopback pool gives each of the 32 leaves its own router ID: one line for them all, with an
    example, not a line per leaf and "... and N more kinds of change"."""
    out = tmp_path / "build"
    cli("build", str(RAIL), "-o", str(out), "-q")
    changed = tmp_path / "loopbacks.yaml"
    changed.write_text(
        RAIL.read_text().replace(
            "  addressing: unnumbered\n", "  addressing: unnumbered\n  loopbacks: {leaf: 10.0.32.0/20}\n"
        )
    )
    code, summary = cli("build", str(changed), "-o", str(out), "-q")
    assert code == 0, summary
    groups = [line for line in summary.splitlines() if line.startswith("  - ")]
    router_id = [line for line in groups if "router-id" in line]
    assert router_id == [
        "  - BGP router-id: a change of its own on each of 32 leaves, e.g. 10.0.16.1 -> 10.0.32.1 on su1-leaf1"
    ], groups
    assert "more kinds of change" not in summary


def test_the_summary_stops_reducing_to_facts_after_its_budget() -> None:
    from netfab.diff.changes import Explainer

    explain = Explainer({"leaf1": "arista_eos", "leaf2": "arista_eos"}, max_fact_diffs=1)
    old = "interface Ethernet1\n   mtu 9216\n"
    first = explain("configs/leaf1.cfg", old, old.replace("9216", "9000"))
    assert first.drifts and first.drifts[0].path.endswith("mtu")
    second = explain("configs/leaf2.cfg", old, old.replace("9216", "1500"))  # another shape: over budget
    assert not second.drifts and second.added == ("mtu 1500",) and second.removed == ("mtu 9216",)


def test_diff_renders_only_what_the_change_can_touch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An ECN knob changes switch configs only: no host script is rendered for the diff (both sides' render
    inputs digest alike), and the summary still counts every one of them unchanged."""
    from netfab.diff import compare

    rendered: list[str] = []
    real = compare.render_server
    monkeypatch.setattr(compare, "render_server", lambda s, *a: rendered.append(s.name) or real(s, *a))
    a, b = load_plan([RAIL]).plan, load_plan([_knob(tmp_path)]).plan
    out = compare.compare_plans(a, b, workers=1)
    assert rendered == []
    hosts = [f for f in out.new if f.startswith("hosts/") and f.endswith(".sh")]
    assert len(hosts) == 128 and all(out.old[f] == out.new[f] for f in hosts)
    changed = [f for f in out.new if out.old.get(f) != out.new[f]]
    assert changed and all(f.startswith("configs/") for f in changed)
    # A knob the host scripts do read renders them, on both sides.
    nic = tmp_path / "nic.yaml"
    assert "roce_mtu: 4096" in RAIL.read_text()
    nic.write_text(RAIL.read_text().replace("roce_mtu: 4096", "roce_mtu: 2048"))
    compare.compare_plans(a, load_plan([nic]).plan, workers=1)
    assert len(rendered) == 2 * 128
