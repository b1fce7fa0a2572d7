"""Check results: structured first; text, JSON and JUnit are renderings of the same list."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass
from typing import Any, Literal

Status = Literal["pass", "fail", "skip", "error"]


@dataclass(frozen=True)
class CheckResult:
    device: str
    check: str
    status: Status
    message: str
    expected: Any = None
    actual: Any = None


def summary(results: list[CheckResult]) -> dict[str, int]:
    counts = {"pass": 0, "fail": 0, "skip": 0, "error": 0}
    for r in results:
        counts[r.status] += 1
    return counts


def failed(results: list[CheckResult]) -> list[CheckResult]:
    return [r for r in results if r.status in ("fail", "error")]


def render_text(results: list[CheckResult]) -> str:
    lines = []
    for r in sorted(results, key=lambda r: (r.status == "pass", r.device, r.check)):
        if r.status == "pass":
            continue
        lines.append(f"{r.status.upper():5} {r.device} [{r.check}] {r.message}")
    c = summary(results)
    lines.append(f"{c['pass']} passed, {c['fail']} failed, {c['error']} errors, {c['skip']} skipped")
    return "\n".join(lines) + "\n"


def render_json(results: list[CheckResult]) -> str:
    return (
        json.dumps(
            {"summary": summary(results), "results": [asdict(r) for r in results]},
            indent=2,
            sort_keys=True,
            default=str,
        )
        + "\n"
    )


def render_junit(results: list[CheckResult]) -> str:
    suite = ET.Element("testsuite", name="netfab.verify", tests=str(len(results)))
    c = summary(results)
    suite.set("failures", str(c["fail"]))
    suite.set("errors", str(c["error"]))
    suite.set("skipped", str(c["skip"]))
    for r in sorted(results, key=lambda r: (r.device, r.check, r.message)):
        case = ET.SubElement(suite, "testcase", classname=f"netfab.verify.{r.check}", name=f"{r.device}: {r.message}")
        if r.status == "fail":
            ET.SubElement(case, "failure", message=r.message).text = f"expected {r.expected!r}, got {r.actual!r}"
        elif r.status == "error":
            ET.SubElement(case, "error", message=r.message)
        elif r.status == "skip":
            ET.SubElement(case, "skipped", message=r.message)
    return ET.tostring(suite, encoding="unicode") + "\n"
