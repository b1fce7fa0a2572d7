"""A content-addressed cache of `netfab lint` results, so linting an intent that did not change (a CI re-run,
a pre-commit hook over untouched files, an editor saving twice) costs a digest instead of a fabric design.

The key is netfab.core.digest.inputs_digest over the intent files' bytes, every file of netfab itself (so
any rule, platform record, capability or template change, any netfab upgrade, misses), the added platform
records, the library versions, and the options and paths as given (findings name files as the user did).
The value is the findings, the exit code and the skipped rule ids, as JSON. Nothing else is cached.

Where: $NETFAB_CACHE_DIR, else $XDG_CACHE_HOME/netfab, else ~/.cache/netfab; `lint --no-cache` neither reads
nor writes it. A cache that cannot be read or written is no cache: lint runs as if it were absent and never
fails because of it. At most MAX_ENTRIES results are kept (oldest removed first).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from netfab.core.exitcodes import ExitCode
from netfab.core.findings import Finding, Location, Severity, Status

FORMAT = 1
MAX_ENTRIES = 256
ENV_DIR = "NETFAB_CACHE_DIR"


def cache_dir() -> Path:
    explicit = os.environ.get(ENV_DIR)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "netfab"


def lint_key(paths: Sequence[Path], read: Sequence[tuple[Path, bytes]], options: str) -> str:
    """The key of a lint of `paths` whose files held `read` (IntentSource.read_as_parsed: the bytes the lint
    parses, so a file saved meanwhile never files one text's findings under the other's key)."""
    from netfab.core.digest import contents_digest
    from netfab.platforms import ENV_PATH

    given = "\0".join(str(p) for p in paths)
    return contents_digest(read, f"netfab-lint {FORMAT}\0{options}\0{given}", os.environ.get(ENV_PATH, ""))


def _location(loc: Location) -> list[Any]:
    return [loc.file, loc.line, loc.column]


def _encode(f: Finding) -> dict[str, Any]:
    return {
        "rule_id": f.rule_id,
        "severity": f.severity.value,
        "message": f.message,
        "location": _location(f.location),
        "hint": f.hint,
        "path": f.path,
        "related": [_location(r) for r in f.related],
        "status": f.status.value,
        "subject": f.subject,
        "expected": f.expected,
        "actual": f.actual,
    }


def _decode(d: dict[str, Any]) -> Finding:
    return Finding(
        rule_id=d["rule_id"],
        severity=Severity(d["severity"]),
        message=d["message"],
        location=Location(*d["location"]),
        hint=d["hint"],
        path=d["path"],
        related=tuple(Location(*r) for r in d["related"]),
        status=Status(d["status"]),
        subject=d["subject"],
        expected=d["expected"],
        actual=d["actual"],
    )


def load(key: str) -> tuple[list[Finding], ExitCode, list[str]] | None:
    try:
        data = json.loads((cache_dir() / f"lint-{key}.json").read_text(encoding="utf-8"))
        if data["format"] != FORMAT:
            return None
        return [_decode(f) for f in data["findings"]], ExitCode(data["exit_code"]), list(data["skipped"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(key: str, findings: Sequence[Finding], exit_code: ExitCode, skipped: Sequence[str]) -> None:
    """Best effort. Results whose values JSON cannot carry exactly (a tuple, an object) are not cached."""
    from netfab.core.fs import atomic_write_text

    doc = {"format": FORMAT, "findings": [_encode(f) for f in findings], "exit_code": int(exit_code)}
    doc["skipped"] = list(skipped)
    try:
        text = json.dumps(doc, sort_keys=True)
        if [_decode(f) for f in json.loads(text)["findings"]] != list(findings):
            return  # a value that does not survive JSON (tuple -> list): answering from it would not be exact
        directory = cache_dir()
        directory.mkdir(parents=True, exist_ok=True)
        atomic_write_text(directory / f"lint-{key}.json", text)
        _prune(directory)
    except (OSError, TypeError, ValueError):
        return


def _prune(directory: Path) -> None:
    entries = sorted(directory.glob("lint-*.json"), key=lambda p: p.stat().st_mtime_ns)
    for old in entries[:-MAX_ENTRIES]:
        old.unlink(missing_ok=True)
