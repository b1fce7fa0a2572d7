"""The one-mistake corpus (tests/lint/corpus/*.yaml): load the golden findings and score a lint run against them.

Each case is a valid intent with one mistake a RoCE reviewer would catch; its second line is the golden:
`# expect: RULE@LINE:COLUMN, ...` - every error and warning `netfab lint` (with the plan) must report, and
nothing else. Run as a script to print the score of whichever netfab is on sys.path, e.g. an older checkout:

    PYTHONPATH=/path/to/old/checkout python3 tests/lint/corpus_score.py

"caught" means every golden finding is reported at its file:line:column; "flagged" means lint reported at least
one error or warning at all (what an older netfab without the golden's rule ids can score).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus"
EXPECT = re.compile(r"^# expect: (.*)$")
ITEM = re.compile(r"^([A-Z]+\d{3}|[A-Z]+-[a-z]+)@(\d+):(\d+)$")

Pointer = tuple[str, int, int]


@dataclass(frozen=True)
class Case:
    path: Path
    expected: frozenset[Pointer]

    @property
    def name(self) -> str:
        return self.path.stem


def load_cases(corpus: Path = CORPUS) -> list[Case]:
    cases = []
    for path in sorted(corpus.glob("*.yaml")):
        lines = path.read_text(encoding="utf-8").splitlines()
        match = EXPECT.match(lines[1]) if len(lines) > 1 else None
        if match is None:
            raise ValueError(f"{path.name}: line 2 must be '# expect: RULE@LINE:COLUMN, ...'")
        items = [i.strip() for i in match.group(1).split(",") if i.strip()]
        parsed = [ITEM.match(i) for i in items]
        if not items or not all(parsed):
            raise ValueError(f"{path.name}: cannot read the golden {match.group(1)!r}")
        cases.append(Case(path, frozenset((m.group(1), int(m.group(2)), int(m.group(3))) for m in parsed if m)))
    return cases


def reported(path: Path) -> frozenset[Pointer]:
    """Errors and warnings of `netfab lint PATH` (intent rules, then the plan rules), as pointers."""
    from netfab.cli.plan_lint import with_plan
    from netfab.lint import lint_source
    from netfab.load import load_intent_source

    source = load_intent_source([path])
    result = with_plan(lint_source(source), source, strict=False)
    return frozenset(
        (f.rule_id, f.location.line or 0, f.location.column or 0)
        for f in result.findings
        if f.severity.value in ("error", "warning")
    )


def main() -> int:
    cases = load_cases()
    caught = flagged = 0
    for case in cases:
        got = reported(case.path)
        hit = case.expected <= got
        caught += hit
        flagged += bool(got)
        print(f"{'caught ' if hit else 'flagged' if got else 'MISSED '}  {case.name}")
    total = len(cases)
    print(f"corpus: {total} one-mistake intents; caught {caught} / {total} (golden rule at file:line:column)")
    print(f"flagged {flagged} / {total} (any error or warning)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
