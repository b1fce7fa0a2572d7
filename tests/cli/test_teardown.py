"""The console entry's fast exit (netfab.cli.teardown): same exit codes, same complete output, atexit handlers
run, and the interpreter's usual path whenever a thread still runs or the caller is not the console entry."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from netfab.cli import teardown

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "lint" / "corpus"


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "netfab.cli.app", *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


def test_lint_exit_codes_and_whole_report_survive_the_fast_exit() -> None:
    clean = _run("lint", "--no-cache", "--format", "json", str(REPO / "intent" / "lab.yaml"))
    assert clean.returncode == 0, clean.stderr
    assert all(f["severity"] != "error" for f in json.loads(clean.stdout)["findings"])
    bad = _run("lint", "--no-cache", "--format", "json", str(CORPUS / "dcqcn-min-above-max.yaml"))
    assert bad.returncode == 1, bad.stderr
    report = json.loads(bad.stdout)  # a truncated (unflushed) report would not parse
    assert any(f["severity"] == "error" for f in report["findings"])


def test_build_through_the_fast_exit_writes_its_tree(tmp_path: Path) -> None:
    done = _run("build", str(REPO / "intent" / "lab.yaml"), "--out", str(tmp_path), "--quiet")
    assert done.returncode == 0, done.stderr
    assert "built" in done.stderr
    trees = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert trees and (trees[0] / ".netfab-build.json").is_file()


def _script(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    code = textwrap.dedent(
        """
        import atexit, sys, threading, time
        from pathlib import Path
        from netfab.cli import teardown
        out = Path(sys.argv[1])
        atexit.register(lambda: (out / "atexit").write_text("ran"))
        teardown.arm()
        teardown.memory_only()
        sys.stdout.write("buffered, no newline")
        """
    ) + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60)


def test_fast_exit_runs_atexit_flushes_and_keeps_the_code(tmp_path: Path) -> None:
    done = _script(tmp_path, "teardown.finish(5)\n")
    assert done.returncode == 5
    assert done.stdout == "buffered, no newline"
    assert (tmp_path / "atexit").read_text() == "ran"


def test_a_running_thread_gets_the_interpreters_usual_exit(tmp_path: Path) -> None:
    # os._exit would kill the thread before it writes; sys.exit joins it first.
    body = """
        def late(): time.sleep(0.3); (out / "thread").write_text("done")
        threading.Thread(target=late).start()
        teardown.finish(4)
        """
    done = _script(tmp_path, body)
    assert done.returncode == 4
    assert (tmp_path / "thread").read_text() == "done"
    assert (tmp_path / "atexit").read_text() == "ran"


def test_in_process_callers_keep_nothing_alive_and_keep_their_gc() -> None:
    # Not armed (no console entry in this test process): outliving() must not hold the result, or every
    # in-process lint of a big plan would leak it, nor freeze the caller's heap.
    assert not teardown._entry
    before, frozen = len(teardown._kept), gc.get_freeze_count()
    teardown.memory_only()
    made = teardown.outliving(dict, a=1)
    assert made == {"a": 1}
    assert len(teardown._kept) == before and gc.get_freeze_count() == frozen and gc.isenabled()


def test_armed_outliving_keeps_the_result_and_freezes_it_before_the_gc_is_back(tmp_path: Path) -> None:
    body = """
        import gc
        seen = []
        def make():
            seen.append(gc.isenabled())
            return [[i] for i in range(1000)]
        made = teardown.outliving(make)
        assert seen == [False] and gc.isenabled() and gc.get_freeze_count() >= 1000
        assert any(k is made for k in teardown._kept)
        teardown.finish(0)
        """
    done = _script(tmp_path, body)
    assert done.returncode == 0, done.stderr
