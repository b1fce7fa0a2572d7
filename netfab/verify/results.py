"""Verify's results are netfab Findings (one result model for every verb): this module only builds them.

A check result is a Finding whose status is pass, fail, skip or error, whose subject is the device and whose
expected/actual carry the two values compared. Rendering lives in netfab.report, like every verb's.
"""

from __future__ import annotations

from netfab.core.findings import Finding, Severity, Status, problems


def check_result(
    device: str, check: str, status: Status | str, message: str, expected: object = None, actual: object = None
) -> Finding:
    state = Status(status)
    # A failed or unrunnable check blocks a deploy wave: error severity. Passes and skips are information.
    severity = Severity.ERROR if state.is_problem else Severity.INFO
    return Finding(check, severity, message, status=state, subject=device, expected=expected, actual=actual)


def failed(results: list[Finding]) -> list[Finding]:
    """The results that fail a verify run or a deploy wave's post-checks: failures and checks that could not run."""
    return problems(results)
