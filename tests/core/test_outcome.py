"""host_outcome: a host's Nornir results as Ok/Err, by the task's name and the real cause, not by position."""

from __future__ import annotations

from nornir.core.exceptions import NornirSubTaskError
from nornir.core.task import MultiResult, Result

from netfab.core.outcome import Err, Ok, host_outcome


def multi(name: str, *results: Result) -> MultiResult:
    out = MultiResult(name)
    out.extend(results)
    return out


def result(name: str, value: object = None, failed: bool = False, exception: BaseException | None = None) -> Result:
    r = Result(host=None, result=value, failed=failed, exception=exception)
    r.name = name
    return r


def test_ok_is_the_tasks_own_result_wherever_it_sits() -> None:
    # A subtask's result listed first: reading multi[0] would return the subtask's value.
    m = multi("collect", result("get_config", "sub"), result("collect", {"running": "x"}))
    assert host_outcome(m) == Ok({"running": "x"})


def test_err_names_the_subtasks_exception_not_the_wrapper() -> None:
    cause = ConnectionError("leaf1:22: unreachable")
    wrapper = NornirSubTaskError(task=None, result=None)  # type: ignore[arg-type]
    m = multi("deploy", result("deploy", failed=True, exception=wrapper), result("open", failed=True, exception=cause))
    outcome = host_outcome(m)
    assert isinstance(outcome, Err) and outcome.exception is cause
    assert outcome.error == "ConnectionError: leaf1:22: unreachable"


def test_a_task_that_fails_with_a_result_keeps_the_value() -> None:
    m = multi("check", result("check", ["bgp down"], failed=True))
    assert host_outcome(m) == Err("['bgp down']", None, ["bgp down"])


def test_a_host_that_did_not_run_is_an_err() -> None:
    outcome = host_outcome(None)
    assert isinstance(outcome, Err) and "did not run" in outcome.error
    assert host_outcome(multi("t", result("t", failed=True))) == Err("task t failed")


def test_no_result_is_read_by_list_position_anywhere() -> None:
    """STYLE.md: results are never addressed by position; host_outcome is the one reader."""
    import re
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "netfab"
    offenders = [
        f"{path.relative_to(package)}:{n}"
        for path in package.rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\b(multi|m|agg\[[^]]+\])\[0\]", line)
    ]
    assert offenders == []
