"""A reader that goes away (`netfab deploy ... | head -1`) must not stop the process half-way (trial F8-E)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from netfab.cli.streams import PipeSafeStream

ROOT = Path(__file__).resolve().parents[2]


def test_a_write_to_a_closed_pipe_is_dropped_and_later_writes_succeed(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    raw = os.fdopen(write_end, "w", buffering=1)
    stream = PipeSafeStream(raw)  # type: ignore[arg-type]
    assert stream.write("first line\n") == len("first line\n")
    assert stream.reader_gone
    stream.write("x" * 100_000)
    stream.flush()
    raw.close()


def test_other_os_errors_are_not_swallowed(tmp_path: Path) -> None:
    class Full:
        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

        def fileno(self) -> int:
            return 1

    stream = PipeSafeStream(Full())  # type: ignore[arg-type]
    try:
        stream.write("x")
    except OSError as exc:
        assert exc.errno == 28
    else:
        raise AssertionError("a full disk must still be an error")
    assert not stream.reader_gone


CHILD = """
import sys
from pathlib import Path
from netfab.cli.streams import protect_standard_streams
protect_standard_streams()
for i in range(20000):
    print(f"line {i} " + "x" * 60)
    print(f"err {i}", file=sys.stderr)
Path(sys.argv[1]).write_text("reached the end")
"""


def test_the_process_runs_to_its_end_when_the_reader_leaves(tmp_path: Path) -> None:
    marker = tmp_path / "done"
    res = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {sys.executable} -c '{CHILD}' {marker} 2>&1 | head -1"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert res.stdout.startswith("line 0 "), res.stdout
    assert marker.read_text() == "reached the end"
    assert res.returncode == 0, res.stderr
    assert "BrokenPipeError" not in res.stdout + res.stderr


def test_without_the_guard_the_same_child_dies(tmp_path: Path) -> None:
    """The test above can fail: the unguarded child never reaches its end."""
    marker = tmp_path / "done"
    child = CHILD.replace("protect_standard_streams()", "")
    subprocess.run(
        ["bash", "-c", f"{sys.executable} -c '{child}' {marker} 2>&1 | head -1"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert not marker.exists()
