"""One typed event channel for runs over the fleet: what happened to which device or wave, as data.

Producers: a Nornir processor (HostEvents) says when each host finished a task; the deploy engine says when a
wave starts and ends and what it decided per device; the journal says when a device's recorded state changes.
Consumers are listeners (Callable[[DeployEvent], None]): the CLI's progress bar and messages, and JsonEvents,
which writes one JSON object per line for CI. A Fanout feeds several; a listener that fails (a closed stdout)
never fails a device or aborts a rollback.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import IO, Any

EVENTS_SCHEMA_VERSION = 1


class EventKind(StrEnum):
    WAVE_STARTED = "wave_started"
    WAVE_FINISHED = "wave_finished"
    TASK_DONE = "task_done"
    """A host finished one Nornir task (prepare, commit, check, confirm, rollback...): from HostEvents."""
    DEVICE_STATE = "device_state"
    """The journal recorded a new state for a device (backed_up, committed, confirmed, failed...)."""
    DIFF = "diff"
    """A device's redacted diff, before anything is committed."""
    CHECK_FAILED = "check_failed"
    ROLLBACK = "rollback"
    NOTE = "note"
    """Something an operator should read about one device (a pending commit was rolled back, say)."""


@dataclass(frozen=True)
class DeployEvent:
    kind: EventKind
    subject: str
    """The device or the wave."""
    message: str = ""
    state: str | None = None
    """DEVICE_STATE: the new state."""
    task: str | None = None
    """TASK_DONE: the Nornir task's name."""
    ok: bool | None = None
    """TASK_DONE, WAVE_FINISHED: whether it succeeded."""
    at: float = field(default_factory=time.time)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind.value, "subject": self.subject, "at": round(self.at, 3)}
        for name in ("message", "state", "task", "ok"):
            value = getattr(self, name)
            if value not in (None, ""):
                out[name] = value
        return out


Listener = Callable[[DeployEvent], None]
Advance = Callable[[int], None]
"""A counter's step callback (n items done), for progress over work that is not a deploy (build, audit)."""


class Fanout:
    """Delivers each event to every listener; a failing listener is skipped, never raised into a device task."""

    def __init__(self, listeners: Iterable[Listener | None] = ()) -> None:
        self._listeners = [listener for listener in listeners if listener is not None]

    def add(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def __call__(self, event: DeployEvent) -> None:
        for listener in self._listeners:
            with contextlib.suppress(Exception):
                listener(event)


class JsonEvents:
    """A listener writing one JSON object per event and line (JSON Lines), flushed per line so CI can follow.
    Device threads emit concurrently: a lock keeps lines whole."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def __call__(self, event: DeployEvent) -> None:
        line = json.dumps({"schema_version": EVENTS_SCHEMA_VERSION, **event.as_dict()}, sort_keys=True)
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()


class HostEvents:
    """A Nornir processor: a TASK_DONE event each time a host finishes a top-level task.

    Nornir calls these hooks from its worker threads; they only build an event and hand it on."""

    def __init__(self, listener: Listener) -> None:
        self._listener = listener

    def task_started(self, task: Any) -> None: ...

    def task_completed(self, task: Any, result: Any) -> None: ...

    def task_instance_started(self, task: Any, host: Any) -> None: ...

    def task_instance_completed(self, task: Any, host: Any, result: Any) -> None:
        from netfab.core.outcome import Err, host_outcome

        outcome = host_outcome(result)
        message = outcome.error if isinstance(outcome, Err) else ""
        with contextlib.suppress(Exception):  # a progress display must never fail a device
            self._listener(
                DeployEvent(EventKind.TASK_DONE, host.name, message, task=task.name, ok=not isinstance(outcome, Err))
            )

    def subtask_instance_started(self, task: Any, host: Any) -> None: ...

    def subtask_instance_completed(self, task: Any, host: Any, result: Any) -> None: ...


def on_task_done(step: Callable[[str], None]) -> Listener:
    """A listener calling step(host) for every TASK_DONE (the progress bars of collect-style runs)."""

    def listener(event: DeployEvent) -> None:
        if event.kind is EventKind.TASK_DONE:
            step(event.subject)

    return listener
