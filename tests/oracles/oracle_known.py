"""Defects the vendor schemas find in today's rendered files, one entry per defect: which schema reports it, how
its message reads, why it is a defect, and the cells (intent x release) where it is known to show.

The matrix marks a (cell, defect) pair it expects as xfail(strict=True): when a template fix removes the defect,
the pair passes, strict xfail fails it, and the entry's `where` must shrink (or the entry go), so a fixed defect
cannot hide a regression. A problem that matches no entry fails its cell outright.

Fixed and removed, both by b0d4993: nvue-515-shape (CL >= 5.15 `state enabled|disabled`, `interface ipv4`);
nvue-objects-before-53 (objects CL 5.0-5.2 lack; those releases are now refused: no qos traffic-pool before 5.3).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from oracle_matrix import Cell


@dataclass(frozen=True)
class Defect:
    id: str
    schema: str
    pattern: re.Pattern[str]
    """Matches each problem message this defect causes."""
    reason: str
    where: Callable[[Cell], bool]
    """Cells that show it at main 5f2aa23 (measured by tests/oracles/measure.py)."""

    def matches(self, problem: str) -> bool:
        return self.pattern.search(problem) is not None


def _examples(*names: str) -> Callable[[Cell], bool]:
    return lambda cell: cell.example in names


DEFECTS: tuple[Defect, ...] = (
    # rdma-bth-hash and ars-tables were fixed by rel (SONiC refuses RDMA-BTH hashing and ARS: in no release).
)


def defects(schema: str) -> list[Defect]:
    return [d for d in DEFECTS if d.schema == schema]


def unexplained(schema: str, problems: list[str]) -> list[str]:
    return [p for p in problems if not any(d.matches(p) for d in defects(schema))]
