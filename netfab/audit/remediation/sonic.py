"""SONiC: an RFC 6902 JSON Patch (jsonpatch) from the running CONFIG_DB to the intended one, scoped to the
tables netfab renders (the deploy driver replaces those tables and leaves the rest alone), with the
device-owned and declared-unmanaged leaves taken out of both sides. `config apply-patch` takes it as is.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import jsonpatch

from netfab.audit.facts.jsontree import Segments
from netfab.audit.model import RawDiff


def scoped(doc: dict[str, Any], tables: set[str], excluded: Callable[[Segments], bool]) -> dict[str, Any]:
    out = {t: copy.deepcopy(v) for t, v in doc.items() if t in tables}
    _drop_excluded(out, (), excluded)
    return out


def _drop_excluded(node: Any, prefix: Segments, excluded: Callable[[Segments], bool]) -> None:
    if not isinstance(node, dict):
        return
    for key in list(node):
        here = (*prefix, str(key))
        if excluded(here):
            del node[key]
        else:
            _drop_excluded(node[key], here, excluded)


def remediate(
    running: dict[str, Any], intended: dict[str, Any], excluded: Callable[[Segments], bool]
) -> tuple[RawDiff, dict[str, str]]:
    tables = set(intended)
    ops = list(jsonpatch.make_patch(scoped(running, tables, excluded), scoped(intended, tables, excluded)).patch)
    text = json.dumps(ops, indent=2, sort_keys=True) + "\n"
    return RawDiff("jsonpatch", "\n".join(json.dumps(op, sort_keys=True) for op in ops), ops), (
        {"patch.json": text} if ops else {}
    )
