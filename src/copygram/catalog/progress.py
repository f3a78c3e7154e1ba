"""Progress of a fetch: the sink type, the default sink (stderr) and a throttle that passes at
most one line a second."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

__all__ = ["Progress", "Throttle", "mb", "stderr_progress", "transfer"]

Progress = Callable[[str], None]


def stderr_progress(message: str) -> None:
    """The default progress sink: one ``copygram: ...`` line on stderr."""
    print(f"copygram: {message}", file=sys.stderr, flush=True)


class Throttle:
    """Passes at most one message a second to ``sink``; a ``final`` message always passes."""

    def __init__(self, sink: Progress | None, *, interval: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._sink, self._interval, self._clock = sink, interval, clock
        self._last: float | None = None

    def __call__(self, message: str, *, final: bool = False) -> None:
        if self._sink is None:
            return
        now = self._clock()
        if final or self._last is None or now - self._last >= self._interval:
            self._last = now
            self._sink(message)


def mb(n: int) -> str:
    """``n`` bytes in megabytes, as progress and error messages show them: ``491.4 MB``."""
    return f"{n / 1e6:.1f} MB"


def transfer(done: int, total: int, elapsed: float) -> str:
    """How far a fetch is: ``412.0/1117.3 MB, 8.4 MB/s, ~1 min 24 s left`` (the rate and the
    time left once a second has passed and bytes have come)."""
    shown = f"{done / 1e6:.1f}/{mb(total)}"
    if elapsed < 1 or done <= 0:
        return shown
    rate = done / elapsed
    left = max(0.0, (total - done) / rate)
    minutes, seconds = divmod(round(left), 60)
    eta = f"{minutes} min {seconds} s" if minutes else f"{seconds} s"
    return f"{shown}, {rate / 1e6:.1f} MB/s, ~{eta} left"
