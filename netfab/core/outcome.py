"""What one host's Nornir run came to: Ok(value) or Err(error), without reading results by list position.

A MultiResult holds the task's own Result and those of its subtasks, in an order Nornir chooses (the task's own
is inserted first today). The task's own Result is the one named like the MultiResult; the error that matters
is the first real exception (a subtask's, not the NornirSubTaskError wrapping it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nornir.core.task import MultiResult, Result


@dataclass(frozen=True)
class Ok:
    value: Any
    """The task's own Result.result."""


@dataclass(frozen=True)
class Err:
    error: str
    """"ExceptionType: message", or the failed result's text when there is no exception."""
    exception: BaseException | None = None
    value: Any = None
    """The task's own Result.result all the same: a task may fail *with* a result (post-checks that failed)."""


def host_outcome(multi: MultiResult | None) -> Ok | Err:
    """Ok with the task's own result, or Err with the first cause; None (the host did not run) is an Err."""
    if multi is None:
        return Err("the task did not run on this host (not in the inventory?)")
    own = _own(multi)
    if not multi.failed:
        return Ok(own.result if own is not None else None)
    from nornir.core.exceptions import NornirSubTaskError

    failed = [r for r in multi if r.failed]
    cause = next((r for r in failed if r.exception and not isinstance(r.exception, NornirSubTaskError)), None)
    cause = cause or next((r for r in failed if r.exception), None) or failed[0]
    exc = cause.exception
    value = own.result if own is not None else None
    if exc is not None:
        return Err(f"{type(exc).__name__}: {exc}", exc, value)
    text = str(cause.result) if cause.result not in (None, "") else f"task {multi.name} failed"
    return Err(text, None, value)


def _own(multi: MultiResult) -> Result | None:
    return next((r for r in multi if r.name == multi.name), None)
