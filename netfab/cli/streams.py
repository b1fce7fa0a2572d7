"""Output that outlives its reader: a closed stdout or stderr never stops a run.

Python ignores SIGPIPE, so once the reader of `netfab deploy ... 2>&1 | head -1` exits, the next write raises
BrokenPipeError wherever it happens: in a progress bar, a Nornir processor thread, the journal listener. A
rollout stopped there is worse than one nobody watches: devices may be mid-commit. So the first broken write
points that file descriptor at /dev/null and the run goes on to its normal end, journal and exit code
included; the journal, not the terminal, is the record of what happened.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any, TextIO


def _is_broken_pipe(exc: OSError) -> bool:
    return isinstance(exc, BrokenPipeError) or exc.errno in (errno.EPIPE, errno.ECONNRESET)


class PipeSafeStream:
    """A text stream proxy whose write/flush survive a closed reader (everything else is delegated)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.reader_gone = False

    def _drop_reader(self) -> None:
        # Same fd, new target: every other holder of this descriptor (the binary buffer, C code, children that
        # inherit it) now writes to /dev/null too, and interpreter shutdown's final flush cannot fail.
        self.reader_gone = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            if not _is_broken_pipe(exc):
                raise
            self._drop_reader()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            if not _is_broken_pipe(exc):
                raise
            self._drop_reader()
            self._stream.flush()  # what was buffered now goes to /dev/null

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def protect_standard_streams() -> None:
    """Wrap sys.stdout and sys.stderr once (idempotent); streams without a file descriptor stay as they are."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None or isinstance(stream, PipeSafeStream):
            continue
        try:
            stream.fileno()
        except (OSError, ValueError, AttributeError):
            continue  # captured by a test harness or replaced by the caller: nothing to redirect
        setattr(sys, name, PipeSafeStream(stream))
