"""Files valid per platform x release x vendor schema, over every example intent (the matrix the test suite runs).

    python3 tests/oracles/measure.py [--schema NAME ...] [--by-intent] [--all-releases] [--include-pending]

Prints one row per schema x release (and per intent with --by-intent): files valid / files judged, cells netfab
refused, and the most common problems; then the wall time. Exit 2 when a named schema does not exist or its
oracle is missing.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from pathlib import Path

if "--all-releases" in sys.argv:  # read when the schemas are defined, below
    os.environ["NETFAB_ORACLE_ALL_RELEASES"] = "1"
if "--include-pending" in sys.argv:
    os.environ["NETFAB_ORACLE_INCLUDE_PENDING"] = "1"
HERE = Path(__file__).resolve().parent
# the oracle helpers, tests/frr_parser.py, and this checkout's netfab (not an installed copy)
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parents[1])]

from oracle_schemas import SCHEMAS, cells, verdicts  # noqa: E402 - after the path above


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schema", action="append", choices=[s.name for s in SCHEMAS], help="only this schema")
    parser.add_argument("--by-intent", action="store_true", help="one row per intent too")
    parser.add_argument("--all-releases", action="store_true", help="every NVUE model, not only the boundaries")
    parser.add_argument("--include-pending", action="store_true", help="also clos3-24k and clos3-100k (slow)")
    args = parser.parse_args(argv)
    chosen = [s for s in SCHEMAS if not args.schema or s.name in args.schema]
    start = time.perf_counter()
    for s in chosen:
        missing = s.missing()
        if missing:
            print(f"{s.name}: not run: {missing}", file=sys.stderr)
            return 2
        rows: dict[str, list[tuple[str, int, int, str | None]]] = collections.defaultdict(list)
        problems: collections.Counter[str] = collections.Counter()
        for cell in cells(s):
            v = verdicts(cell)[s.name]
            rows[cell.release or "newest"].append((cell.example, v.valid, v.documents, v.refusal))
            problems.update(p[:110] for p in v.all_problems())
        print(f"== {s.name} ({s.platform}, {s.suffix} files)")
        for release, found in rows.items():
            valid = sum(r[1] for r in found)
            total = sum(r[2] for r in found)
            refused = [r[0] for r in found if r[3]]
            note = f"  refused: {', '.join(refused)}" if refused else ""
            print(f"  {s.platform:<15} {release:<12} {valid:>7,} / {total:<7,} valid{note}")
            if args.by_intent:
                for example, ok, n, refusal in found:
                    print(f"      {example:<20} {ok:>6,} / {n:<6,} {('refused: ' + refusal) if refusal else ''}")
        for message, count in problems.most_common(5):
            print(f"    {count:>7,} x {message}")
    print(f"wall time {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
