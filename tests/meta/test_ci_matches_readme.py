"""CI must run exactly the test command README gives, so the documented command is the tested one."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_readme_test_command() -> None:
    blocks = re.findall(r"```\n(.*?)\n```", (ROOT / "README.md").read_text(), re.S)
    test_command = next(b for b in blocks if "pytest" in b)
    ci_lines = [line for line in (ROOT / ".ci/run").read_text().splitlines() if "pytest" in line]
    assert ci_lines == [test_command]
