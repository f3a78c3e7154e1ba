"""Ctrl-C and SIGTERM stop a run before anything is written, even while native code runs.

Python turns a signal into an exception in whatever Python code runs next. While native code runs
(llama.cpp loading a model) that next Python code is often a ctypes callback (llama.cpp's log
callback), and an exception raised there is reported as "Exception ignored on calling ctypes
callback function" and dropped: the native call goes on and the interrupt is lost. So the handler
installed by :func:`handle_signals` both *records* the signal and raises :class:`Interrupted`; the
command checks the record (:func:`check`) at the points where a dropped exception would otherwise
be forgotten: after the model load, per decode event, and just before the final rename. The final
rename runs :func:`deferred`, so a signal either lands before it (nothing is written) or after it
(the edit is written whole), never half-way between the check and the rename.

A signal that arrives before :func:`handle_signals` is installed (the interpreter still starting)
meets Python's defaults: SIGINT raises KeyboardInterrupt in the imports, SIGTERM kills the process;
nothing has been read or written yet, and a shell reports 128 + N either way.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)

# The first signal received inside handle_signals(), None if none; module state because a signal
# handler is process-wide.
_received: int | None = None
_deferring = False
_previous_hook: Callable[[Any], object] = sys.unraisablehook


class Interrupted(KeyboardInterrupt):
    """A SIGINT or SIGTERM, raised where the run can stop; ``exit_code`` is 128 + the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def _handle(signum: int, frame: FrameType | None) -> None:
    global _received
    if _received is None:
        _received = signum
    if not _deferring:
        raise Interrupted(signum)


def _unraisable(info: Any) -> None:
    # The Interrupted that native code dropped is in _received already and acted on at the next
    # check(); the "Exception ignored" traceback would only alarm the user.
    if not isinstance(info.exc_value, Interrupted):
        _previous_hook(info)


@contextmanager
def handle_signals() -> Iterator[None]:
    """Within: SIGINT and SIGTERM raise :class:`Interrupted` and are recorded for :func:`check`.

    The previous handlers come back on exit. A signal that is ignored (``SIG_IGN``, inherited from
    the parent) is left ignored. Outside the main thread (where Python cannot install handlers)
    this does nothing.
    """
    global _received, _deferring, _previous_hook
    _received, _deferring = None, False
    try:
        # A signal the caller set to be ignored stays ignored (as Python itself does for SIGINT):
        # a shell starts background jobs so, and nohup does so for SIGHUP.
        wanted = [s for s in SIGNALS if signal.getsignal(s) is not signal.SIG_IGN]
        previous = {signum: signal.signal(signum, _handle) for signum in wanted}
    except ValueError:  # not the main thread
        yield
        return
    _previous_hook, sys.unraisablehook = sys.unraisablehook, _unraisable
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        sys.unraisablehook = _previous_hook


def received() -> int | None:
    """The signal received inside :func:`handle_signals`, if any."""
    return _received


def check() -> None:
    """Raise :class:`Interrupted` if a signal arrived, whether or not its exception got through."""
    if _received is not None:
        raise Interrupted(_received)


@contextmanager
def deferred() -> Iterator[None]:
    """Within: a signal is only recorded, not raised, so that code which ends in :func:`check`
    followed by a commit (a rename) runs either up to the check or to the end."""
    global _deferring
    outer, _deferring = _deferring, True
    try:
        yield
    finally:
        _deferring = outer
