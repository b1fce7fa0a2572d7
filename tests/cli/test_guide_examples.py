"""docs/guide-describe-your-cluster.md: every complete intent in it (a ```yaml block starting `version: 1`) is
lint-clean with its plan, and every fragment is valid YAML; a guide that teaches a refused intent is a bug."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from netfab.cli.plan_lint import with_plan
from netfab.lint import lint_source
from netfab.load import load_intent_source

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide-describe-your-cluster.md"
BLOCKS = re.findall(r"```yaml\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)
INTENTS = [b for b in BLOCKS if b.startswith("version: 1")]


def test_the_guide_has_worked_examples() -> None:
    assert len(INTENTS) >= 4  # the shortest intent and three worked examples


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_every_yaml_block_parses(block: str) -> None:
    assert isinstance(yaml.safe_load(block), dict)


@pytest.mark.parametrize("intent", INTENTS, ids=[yaml.safe_load(b)["fabric"]["name"] for b in INTENTS])
def test_every_complete_example_is_lint_clean(intent: str, tmp_path: Path) -> None:
    path = tmp_path / "example.yaml"
    path.write_text(intent, encoding="utf-8")
    source = load_intent_source([path])
    result = with_plan(lint_source(source), source, strict=True)
    noisy = [f"{f.rule_id} {f.message}" for f in result.findings if f.severity.value != "info"]
    assert noisy == []
