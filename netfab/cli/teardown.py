"""Ending the process without the interpreter's teardown, for verbs whose only state is memory.

A 100k-GPU plan is a few hundred thousand small objects. Freeing them one by one, first when the verb's
locals go and then again for every module at interpreter shutdown, costs 0.2-0.5 s of a 3-4 s `netfab lint`
and more for build and analyze, all to return memory that the kernel takes back at once when the process
exits. mypy ends its runs the same way. Only the `netfab` command itself (netfab.cli.app.console) arms it,
so a verb run in-process (CliRunner, a caller of main(), a library caller) never exits early and never keeps
anything alive; and only verbs that declare they hold nothing but memory (no threads, no open outputs: lint,
build, diff, analyze) opt in.
Everything the interpreter would do that has an effect outside the process still happens: the atexit
handlers run (logging's flush, multiprocessing's worker reaping, tempfile's cleanup) and both standard
streams are flushed. Any doubt (a thread still running, a stream that will not flush) takes the normal path.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
from typing import NoReturn

_entry = False
_memory_only = False
_kept: list[object] = []


def arm() -> None:
    """Called by the `netfab` command (netfab.cli.app.console): this process ends when the verb does."""
    global _entry
    _entry = True


def memory_only() -> None:
    """Called by a verb that starts no threads and leaves no output open: its exit may skip the teardown."""
    global _memory_only
    _memory_only = True


def outlive(obj: object) -> None:
    """Keep `obj` until the process exits instead of freeing it now, when the exit will not free it either,
    and move everything alive out of the cyclic GC's reach. Anywhere else (tests, library callers, a verb that
    did not opt in) this does nothing.

    design() builds a plan with the collector off; the first allocation after it scans the whole plan (~700,000
    tracked objects at 100k GPUs) as one generation-0 pass and later passes scan it again: ~0.3 s of a lint,
    for objects that live until the exit and form no cycles. gc.freeze() parks them in the permanent generation;
    in a process that ends with the verb, nothing frozen needed collecting."""
    if _entry and _memory_only:
        _kept.append(obj)
        gc.freeze()


def finish(code: int) -> NoReturn:
    """Exit with `code`: straight to the kernel when armed and safe, else through sys.exit as usual."""
    if _entry and _memory_only and threading.active_count() == 1:
        atexit._run_exitfuncs()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            sys.exit(code)  # let the interpreter report the unwritable stream the way it always does
        os._exit(code)
    sys.exit(code)
