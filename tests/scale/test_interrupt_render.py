"""Ctrl-C while the render workers run ends the build, every time: the terminal sends SIGINT to the whole process
group, and a worker that took it could die holding the pool's queue lock, after which the parent's terminate()
waited for it for ever (3 of ~30 interrupts in a fault trial). Each run here interrupts a build of clos3-24k
(1,692 switches, 3,072 servers: the forked render) once its workers exist, at a different moment each time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INTENT = ROOT / "intent" / "clos3-24k.yaml"


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc to see the render workers start")
def test_ctrl_c_during_the_forked_render_always_ends_the_build(tmp_path: Path) -> None:
    for run, after in enumerate((0.0, 0.01, 0.03, 0.06, 0.1, 0.15, 0.2, 0.3)):
        out = tmp_path / f"out{run}"
        build = subprocess.Popen(
            [sys.executable, "-m", "netfab.cli.app", "build", str(INTENT), "-o", str(out), "-q"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while len(_children(build.pid)) < 2 and build.poll() is None and time.monotonic() < deadline:
                time.sleep(0.002)
            time.sleep(after)
            os.killpg(build.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
            try:
                _, err = build.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                pytest.fail(f"run {run}: the build did not end within 30 s of Ctrl-C ({after} s into the render)")
        finally:
            if build.poll() is None:
                os.killpg(build.pid, signal.SIGKILL)
                build.wait()
        assert "Traceback" not in err.decode(), err.decode()[-2000:]
        if build.returncode == 0:
            continue  # the render ended before the interrupt came: the build is whole
        assert build.returncode == 130, (run, build.returncode, err.decode()[-2000:])
        # Nothing half-built is left: no tree, no staging directory.
        assert not out.exists() or not any(out.iterdir()), sorted(os.listdir(out))
