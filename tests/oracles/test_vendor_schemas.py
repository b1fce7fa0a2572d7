"""The vendor-schema matrix: every example intent x every platform x every release, each rendered file judged by
the NOS vendor's own model of its configuration (../shared/oracles/README.md). Two kinds of items per cell:

- test_documents_valid[<schema>-<intent>-<release>]: every problem found is a known defect (oracle_known.py);
  anything else fails here, with the file and the vendor model's own message;
- test_defect_absent[<schema>-<intent>-<release>-<defect>]: no file of the cell shows that defect; where it is
  known to show, the item is xfail(strict=True), so the fix that removes it forces the entry's removal.
"""

from __future__ import annotations

import pytest
from oracle_known import Defect, defects, unexplained
from oracle_matrix import Cell
from oracle_schemas import SCHEMAS, Schema, Verdict, cells, verdicts

pytestmark = pytest.mark.slow


def _verdict(s: Schema, cell: Cell) -> Verdict:
    missing = s.missing()
    if missing:
        pytest.skip(missing)
    verdict = verdicts(cell)[s.name]
    if verdict.refusal:
        pytest.skip(f"netfab refuses {cell.example} on {cell.platform} {cell.release or ''}: {verdict.refusal}")
    assert verdict.documents > 0, f"{cell.label}: no {s.suffix} file rendered for {s.name} to judge"
    return verdict


def _summary(verdict: Verdict, problems: list[str], limit: int = 8) -> str:
    lines = [f"{verdict.valid}/{verdict.documents} files valid against {verdict.schema}"]
    shown = 0
    for path, found in verdict.problems.items():
        for p in found:
            if p in problems and shown < limit:
                lines.append(f"  {path}: {p}")
                shown += 1
    return "\n".join(lines)


DOCUMENT_CASES = [pytest.param(s, c, id=f"{s.name}-{c.label}") for s in SCHEMAS for c in cells(s)]


@pytest.mark.parametrize(("schema", "cell"), DOCUMENT_CASES)
def test_documents_valid(schema: Schema, cell: Cell) -> None:
    verdict = _verdict(schema, cell)
    unknown = unexplained(schema.name, verdict.all_problems())
    assert not unknown, _summary(verdict, unknown)


def _defect_cases() -> list[object]:
    cases: list[object] = []
    for s in SCHEMAS:
        for c in cells(s):
            for d in defects(s.name):
                marks = [pytest.mark.xfail(strict=True, reason=d.reason)] if d.where(c) else []
                cases.append(pytest.param(s, c, d, id=f"{s.name}-{c.label}-{d.id}", marks=marks))
    return cases


@pytest.mark.parametrize(("schema", "cell", "defect"), _defect_cases())
def test_defect_absent(schema: Schema, cell: Cell, defect: Defect) -> None:
    verdict = _verdict(schema, cell)
    shown = [p for p in verdict.all_problems() if defect.matches(p)]
    assert not shown, _summary(verdict, shown, limit=3)
