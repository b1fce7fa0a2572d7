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
from collections.abc import Callable
from typing import NoReturn, ParamSpec, TypeVar

from netfab.core import gcfreeze

_P = ParamSpec("_P")
_T = TypeVar("_T")

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


def outliving(make: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """make(*args, **kwargs), whose result lives until the process exits: kept, never freed, and with the
    cyclic GC off while it is made and frozen after. Anywhere else (tests, library callers, a verb that did not
    opt in) this is just the call.

    design() builds a plan with the collector off, but allocations still count: the first one after the
    collector comes back scans the whole plan (~700,000 tracked objects at 100k GPUs) as one generation-0 pass,
    and later passes scan it again, ~0.3-0.4 s of a lint or build for objects that live until the exit and form
    no cycles. gc.freeze() before the collector is back parks them in the permanent generation."""
    if not (_entry and _memory_only):
        return make(*args, **kwargs)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        made = make(*args, **kwargs)
        _kept.append(made)
        return made
    finally:
        gcfreeze.for_good()
        if was_enabled:
            gc.enable()


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
