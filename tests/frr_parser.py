"""FRR's own configuration parser, `vtysh -C` (check: parse every line against all daemons' command trees and
exit; no daemon runs). The one home of that call for every test that asks FRR whether it accepts a file
(tests/render for the lab and SONiC goldens, tests/oracles for the whole matrix)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

VTYSH = shutil.which("vtysh")
MISSING = None if VTYSH else "FRR's vtysh is not installed (apt-get install frr; CI installs it)"


def vtysh_check(text: str, workdir: Path) -> subprocess.CompletedProcess[str]:
    """One file through `vtysh -C`; returncode 0 = FRR accepts every line."""
    if VTYSH is None:
        raise RuntimeError(MISSING)
    path = workdir / "frr.conf"
    path.write_text(text, encoding="utf-8")
    command = [VTYSH, "-C", "-H", "/dev/null", "-f", str(path)]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


_LINE = re.compile(r"^line (\d+): (.*)$")


def vtysh_errors_many(texts: Sequence[str]) -> list[list[str]]:
    """Each file's refused lines, from one `vtysh -C` over all of them (a vtysh start costs more than parsing a
    file: the matrix has thousands). vtysh -C only parses, so one device's stanzas cannot clash with the next's;
    its `line N:` messages are mapped back to the file that line came from."""
    if not texts:
        return []
    starts: list[int] = []
    line = 1
    for text in texts:
        starts.append(line)
        line += text.count("\n") + (0 if text.endswith("\n") else 1)
    joined = "".join(t if t.endswith("\n") else t + "\n" for t in texts)
    with tempfile.TemporaryDirectory(prefix="netfab-vtysh-") as tmp:
        proc = vtysh_check(joined, Path(tmp))
    found: list[list[str]] = [[] for _ in texts]
    unplaced: list[str] = []
    for message in (proc.stdout + proc.stderr).splitlines():
        match = _LINE.match(message.strip())
        if match is None:
            continue
        number = int(match.group(1))
        index = max(i for i, start in enumerate(starts) if start <= number)
        found[index].append(f"line {number - starts[index] + 1}: {match.group(2).strip()}")
    if proc.returncode != 0 and not any(found):
        unplaced.append(f"vtysh -C exited {proc.returncode}: {(proc.stdout + proc.stderr).strip()[:300]}")
        found = [unplaced for _ in texts]
    return found
