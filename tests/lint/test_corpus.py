"""The one-mistake corpus: every case reports exactly its golden errors and warnings, at the golden positions."""

from __future__ import annotations

import pytest
from corpus_score import load_cases, reported

CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_reports_exactly_its_golden(case: object) -> None:
    from corpus_score import Case

    assert isinstance(case, Case)
    got = reported(case.path)
    assert got == case.expected, f"missing {sorted(case.expected - got)}, unexpected {sorted(got - case.expected)}"


def test_corpus_size_and_score(capsys: pytest.CaptureFixture[str]) -> None:
    # At least 40 cases, including the three NEWCOMER_TRIAL misses the trial describes; printed for the log.
    names = {c.name for c in CASES}
    assert len(CASES) >= 40
    assert {"newcomer-two-classes-p3-nvue", "newcomer-dcqcn-prio4-roce3", "newcomer-10km-lossless-hop"} <= names
    caught = sum(c.expected <= reported(c.path) for c in CASES)
    with capsys.disabled():
        print(f"\nlint corpus: caught {caught} / {len(CASES)}")
    assert caught == len(CASES)


def test_a_case_without_its_mistake_is_clean(tmp_path: pytest.TempPathFactory) -> None:
    # The golden is about the mistake: the same intent with the marked lines restored to the base is clean.
    case = next(c for c in CASES if c.name == "newcomer-dcqcn-prio4-roce3")
    text = case.path.read_text(encoding="utf-8")
    fixed = "\n".join(line for line in text.splitlines() if not line.endswith("# <- the mistake")) + "\n"
    path = tmp_path / "fixed.yaml"  # type: ignore[operator]
    path.write_text(fixed, encoding="utf-8")
    assert reported(path) == frozenset()
