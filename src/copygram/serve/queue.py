"""One model, one request at a time: a bounded queue in arrival order in front of one worker thread.

A model (its KV cache above all) serves one generation at a time, so every request's work runs on
one worker thread, in the order the requests arrived. The event loop never blocks on the model:
the worker hands each item it produces to the loop (``call_soon_threadsafe``), and the request's
handler awaits them with :meth:`Job.next`.

- **Bounded.** At most one running and ``max_waiting`` waiting jobs; a request beyond that is
  refused at once with 429 and a ``Retry-After`` estimated from recent jobs' durations.
- **Timeout.** Each job has a deadline, ``timeout_s`` after it arrived (queueing included). Past
  it the handler gets a 504 and the worker stops the generation at its next item (a prompt of
  minutes is stopped between its batches).
- **Cancellation.** :meth:`Job.cancel` (a client that disconnected) frees a waiting job's place at
  once and stops a running one at its next item (one decode step, or one batch of a long
  prompt: :class:`~copygram.decode.events.PrefillEvent`): the generator is closed and
  the model goes to the next job. Nothing is rolled back: the next prefill reuses whatever prefix
  of the cache still matches (:func:`copygram.decode.loop.prefill`).

No starlette here; :mod:`asyncio` and :mod:`threading` only.
"""

from __future__ import annotations

import asyncio
import math
import queue
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

from copygram.serve.schemas import ApiError

T = TypeVar("T")
State = Literal["waiting", "running", "done", "dropped"]


class _Queued(Protocol):
    """What the queue keeps of a job, whatever its items' type."""

    state: State

    def cancel(self) -> None: ...

    def _run(self) -> None: ...


class ClientGone(Exception):
    """The client disconnected while its job waited or ran; nobody is left to answer."""


@dataclass(frozen=True)
class _Raised:
    error: Exception


class _End:
    pass


_END = _End()


def timeout_error(timeout_s: float) -> ApiError:
    return ApiError(504, f"the request did not finish within the server's timeout of "
                    f"{timeout_s:g} s (queueing included); ask for fewer tokens or try later",
                    kind="timeout_error", code="timeout")


class Job(Generic[T]):
    """One request's work. The worker thread runs it; the handler reads its items."""

    def __init__(self, owner: ModelQueue, work: Callable[[], Iterator[T]],
                 loop: asyncio.AbstractEventLoop) -> None:
        self._owner, self._work, self._loop = owner, work, loop
        self.arrived = time.monotonic()
        self.deadline = self.arrived + owner.timeout_s
        self._items: asyncio.Queue[T | _Raised | _End] = asyncio.Queue()
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self.state: State = "waiting"
        self._next_check = 0.0  # when next() asks whether the client is still there

    # -- the handler's side (the event loop) ---------------------------------------------------

    def cancel(self) -> None:
        """Stop this job: a waiting one leaves the queue now, a running one at its next item."""
        with self._lock:
            self._cancelled.set()
            dropped = self.state == "waiting"
            if dropped:
                self.state = "dropped"
        if dropped:
            self._owner._release(self, None)

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    async def next(self, disconnected: Callable[[], Awaitable[bool]] | None = None) -> T | None:
        """The job's next item, ``None`` after the last. Raises what the work raised, a 504
        :class:`ApiError` past the deadline, :class:`ClientGone` when ``disconnected()`` says so
        (asked at most every ``poll_s``, whether or not items arrive meanwhile); the last two
        cancel the job."""
        poll = self._owner.poll_s
        while True:
            now = time.monotonic()
            if now >= self.deadline:
                self.cancel()
                raise timeout_error(self._owner.timeout_s)
            if disconnected is not None and now >= self._next_check:
                self._next_check = now + poll
                if await disconnected():
                    self.cancel()
                    raise ClientGone
            try:
                item = await asyncio.wait_for(self._items.get(),
                                              max(0.0, min(poll, self.deadline - now)))
            except TimeoutError:
                continue
            if isinstance(item, _End):
                self._items.put_nowait(item)  # every later call answers None too
                return None
            if isinstance(item, _Raised):
                raise item.error
            return item

    # -- the worker's side ---------------------------------------------------------------------

    def _push(self, item: T | _Raised | _End) -> None:
        try:
            self._loop.call_soon_threadsafe(self._items.put_nowait, item)
        except RuntimeError:  # the loop is closed: the server is going down
            self._cancelled.set()

    def _run(self) -> None:
        with self._lock:
            if self.state != "waiting":
                return  # cancelled while it waited; its place was freed then
            self.state = "running"
        started = time.monotonic()
        try:
            if started >= self.deadline:
                raise timeout_error(self._owner.timeout_s)
            items = self._work()
            try:
                for item in items:
                    if self._cancelled.is_set():
                        break
                    self._push(item)
                    if time.monotonic() >= self.deadline:
                        raise timeout_error(self._owner.timeout_s)
            finally:
                close = getattr(items, "close", None)
                if close is not None:
                    close()  # a generator: run its cleanup now, on this thread
        except Exception as exc:  # noqa: BLE001 - handed to the request, the worker goes on
            self._push(_Raised(exc))
        finally:
            self.state = "done"
            self._push(_END)
            duration = time.monotonic() - started
            try:
                self._loop.call_soon_threadsafe(self._owner._release, self, duration)
            except RuntimeError:
                pass


class ModelQueue:
    """The worker thread and its bounded queue (see the module doc). Use it from one event
    loop; :meth:`submit` and :meth:`close` are not thread-safe."""

    def __init__(self, *, max_waiting: int = 16, timeout_s: float = 300.0,
                 poll_s: float = 0.25) -> None:
        if max_waiting < 0 or not timeout_s > 0 or not poll_s > 0:
            raise ValueError("max_waiting >= 0, timeout_s > 0 and poll_s > 0")
        self.max_waiting, self.timeout_s, self.poll_s = max_waiting, timeout_s, poll_s
        self._jobs: queue.SimpleQueue[_Queued | None] = queue.SimpleQueue()
        self._admitted: set[_Queued] = set()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._mean_s = 2.0  # moving mean of job durations, for Retry-After
        self.served = 0

    @property
    def running(self) -> int:
        return sum(job.state == "running" for job in self._admitted)

    @property
    def waiting(self) -> int:
        return sum(job.state == "waiting" for job in self._admitted)

    def retry_after(self) -> int:
        """Seconds until a place is likely free: the jobs ahead times their mean duration."""
        return max(1, min(600, math.ceil(self._mean_s * max(1, len(self._admitted)))))

    def submit(self, work: Callable[[], Iterator[T]]) -> Job[T]:
        """Queue ``work`` (called on the worker thread; its items go to the handler). Raises a
        429 :class:`ApiError` when the queue is full, a 503 one once the server is closing."""
        if self._closed:
            raise ApiError(503, "the server is shutting down; retry on another one",
                           kind="server_error", code="shutting_down",
                           headers={"Retry-After": "5"})
        if len(self._admitted) > self.max_waiting:
            raise ApiError(
                429, f"the server is busy: one request is running and {self.max_waiting} are "
                f"waiting, the most it queues; retry after the Retry-After seconds",
                kind="rate_limit_error", code="queue_full",
                headers={"Retry-After": str(self.retry_after())})
        job: Job[T] = Job(self, work, asyncio.get_running_loop())
        self._admitted.add(job)
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="copygram-model",
                                            daemon=True)
            self._thread.start()
        self._jobs.put(job)
        return job

    async def call(self, function: Callable[[], T]) -> T:
        """Run ``function`` on the worker thread in turn (e.g. loading the model)."""
        job = self.submit(lambda: iter([function()]))
        item = await job.next()
        assert item is not None
        return item

    def _release(self, job: _Queued, duration: float | None) -> None:
        self._admitted.discard(job)
        if duration is not None:
            self.served += 1
            self._mean_s = 0.8 * self._mean_s + 0.2 * duration

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            job._run()

    def close(self) -> None:
        """Refuse new jobs, cancel every admitted one and let the worker end after the current
        item (it is a daemon thread: a native call that never returns does not hold up exit)."""
        self._closed = True
        for job in list(self._admitted):
            job.cancel()
        self._jobs.put(None)
        if self._thread is not None:
            self._thread.join(timeout=5.0)


__all__ = ["ClientGone", "Job", "ModelQueue", "timeout_error"]
