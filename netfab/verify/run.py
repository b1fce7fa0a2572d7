"""Run the post-checks over a fabric through Nornir, one connection per device."""

from __future__ import annotations

import dataclasses

from nornir.core import Nornir
from nornir.core.task import Result, Task

from netfab.core.findings import Finding, Status
from netfab.core.outcome import Err, host_outcome
from netfab.core.redact import redact
from netfab.deploy.connection import CONNECTION_NAME
from netfab.design.plan import FabricPlan
from netfab.verify.checks import CONNECT_ID, run_checks
from netfab.verify.results import check_result


def verify_fabric(nr: Nornir, plan: FabricPlan, names: list[str]) -> list[Finding]:
    wanted = set(names)

    def check(task: Task) -> Result:
        conn = task.host.get_connection(CONNECTION_NAME, task.nornir.config)
        return Result(host=task.host, result=run_checks(plan.devices[task.host.name], conn, plan))

    sub = nr.filter(filter_func=lambda h: h.name in wanted)
    try:
        agg = sub.run(task=check, name="verify", raise_on_error=False, on_good=True, on_failed=True)
    finally:
        nr.close_connections(on_good=True, on_failed=True)
    results: list[Finding] = []
    for host, multi in sorted(agg.items()):
        outcome = host_outcome(multi)
        if isinstance(outcome, Err):
            results.append(check_result(host, CONNECT_ID, Status.ERROR, f"cannot check: {outcome.error}"))
        else:
            results.extend(outcome.value)
    # Check messages quote device state (a neighbor's config line, an echoed error): masked before any report;
    # so are the values compared, which every machine-readable report carries.
    return [
        dataclasses.replace(r, message=redact(r.message), expected=_masked(r.expected), actual=_masked(r.actual))
        for r in results
    ]


def _masked(value: object) -> object:
    return redact(value) if isinstance(value, str) else value
