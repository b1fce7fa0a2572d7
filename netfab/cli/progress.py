"""The one progress bar of every verb, and the deploy's event listener that drives it.

A bar on stderr only when stderr is a terminal (CI logs stay clean); text that must stay (diffs, device
notes) is printed above it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from netfab.core.events import DeployEvent

FINISHED_STATES = frozenset({"in_sync", "confirmed", "rolled_back", "failed", "rollback_failed"})
"""A device in one of these has nothing more to do in this run: the bar advances."""


def progress_bar(console: Console, *, transient: bool = False, enabled: bool = True) -> Progress:
    """description | bar | done/total | elapsed, on `console`; disabled off a terminal or when not enabled."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=transient,
        disable=not (enabled and console.is_terminal),
    )


class DeployProgress:
    """A listener for a deploy's events: device states move the bar, diffs go to stdout (with --diff), every
    other event becomes one line above the bar."""

    def __init__(self, progress: Progress, bar: TaskID, show_diff: bool = True) -> None:
        self._progress = progress
        self._bar = bar
        self._show_diff = show_diff
        self._done: set[str] = set()

    def __call__(self, event: DeployEvent) -> None:
        from netfab.core.events import EventKind

        if event.kind is EventKind.DEVICE_STATE:
            self._progress.update(self._bar, description=f"{event.subject}: {event.state}")
            if event.state in FINISHED_STATES and event.subject not in self._done:
                self._done.add(event.subject)
                self._progress.advance(self._bar)
        elif event.kind is EventKind.DIFF:
            if self._show_diff:
                self._progress.console.file.flush()
                sys.stdout.write(f"--- {event.subject}\n{event.message.rstrip()}\n")
                sys.stdout.flush()
        elif event.kind is not EventKind.TASK_DONE:  # per-task completions are the bar's, not lines
            print_event(self._progress.console, event)


def print_event(console: Console, event: DeployEvent) -> None:
    """One line per event an operator reads: `[kind] subject: message`."""
    text = event.message or (event.state or "")
    console.print(f"[{event.kind.value}] {event.subject}: {text}", markup=False, highlight=False)
