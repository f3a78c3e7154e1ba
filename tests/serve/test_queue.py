"""The model queue on its own (asyncio and a worker thread, no HTTP): arrival order, the bound,
cancellation of waiting and running jobs, the timeout, a client that went away."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Iterator

import pytest

from copygram.serve.queue import ClientGone, ModelQueue
from copygram.serve.schemas import ApiError


def counting(n: int, log: list[str], name: str, gate: threading.Event | None = None,
             closed: threading.Event | None = None) -> Iterator[int]:
    try:
        for i in range(n):
            if gate is not None:
                gate.wait(10)
            log.append(f"{name}{i}")
            yield i
    finally:
        if closed is not None:
            closed.set()


def test_jobs_run_one_at_a_time_in_arrival_order() -> None:
    async def main() -> None:
        queue = ModelQueue(max_waiting=8, poll_s=0.01)
        log: list[str] = []
        jobs = [queue.submit(functools.partial(counting, 3, log, name)) for name in "abc"]
        results = []
        for job in jobs:
            items = []
            while (item := await job.next()) is not None:
                items.append(item)
            results.append(items)
        assert results == [[0, 1, 2]] * 3
        assert log == ["a0", "a1", "a2", "b0", "b1", "b2", "c0", "c1", "c2"]
        assert await job.next() is None  # the end answers again
        queue.close()

    asyncio.run(main())


def test_the_queue_is_bounded_and_a_cancelled_waiter_frees_its_place() -> None:
    async def main() -> None:
        queue = ModelQueue(max_waiting=1, poll_s=0.01)
        gate = threading.Event()
        log: list[str] = []
        running = queue.submit(lambda: counting(1, log, "r", gate))
        waiting = queue.submit(lambda: counting(1, log, "w"))
        with pytest.raises(ApiError) as refused:
            queue.submit(lambda: counting(1, log, "x"))
        assert refused.value.status == 429 and int(refused.value.headers["Retry-After"]) >= 1
        waiting.cancel()  # its place is free at once, before the worker reaches it
        late = queue.submit(lambda: counting(1, log, "l"))
        gate.set()
        assert await running.next() == 0 and await late.next() == 0
        assert "w0" not in log
        queue.close()
        with pytest.raises(ApiError) as closed:
            queue.submit(lambda: counting(1, log, "z"))
        assert closed.value.status == 503

    asyncio.run(main())


def test_a_cancelled_running_job_stops_at_its_next_item_and_the_next_job_runs() -> None:
    async def main() -> None:
        queue = ModelQueue(poll_s=0.01)
        closed = threading.Event()
        log: list[str] = []
        endless = queue.submit(lambda: counting(10**9, log, "e", closed=closed))
        assert await endless.next() == 0
        endless.cancel()
        after = queue.submit(lambda: counting(2, log, "n"))
        assert await after.next() == 0
        assert closed.is_set()  # the generator was closed, on the worker thread
        queue.close()

    asyncio.run(main())


def test_a_client_that_went_away_cancels_its_job() -> None:
    gate, closed = threading.Event(), threading.Event()

    def slow() -> Iterator[int]:
        try:
            yield 0
            gate.wait(10)
            yield 1
        finally:
            closed.set()

    async def main() -> None:
        queue = ModelQueue(poll_s=0.01)
        job = queue.submit(slow)
        assert await job.next() == 0

        async def gone() -> bool:
            return True

        with pytest.raises(ClientGone):
            await job.next(gone)
        assert job.cancelled
        gate.set()
        follow = queue.submit(lambda: counting(1, [], "f"))
        assert await follow.next() == 0
        assert closed.is_set()  # the running generation was stopped and closed
        waiting = queue.submit(lambda: counting(1, [], "w"))
        with pytest.raises(ClientGone):  # asked at once, even with an item ready
            await waiting.next(gone)
        queue.close()

    asyncio.run(main())


def test_the_timeout_covers_the_wait_and_the_run() -> None:
    async def main() -> None:
        queue = ModelQueue(timeout_s=0.2, poll_s=0.01)
        gate = threading.Event()
        job = queue.submit(lambda: counting(3, [], "t", gate))
        with pytest.raises(ApiError) as timed_out:
            await job.next()
        assert timed_out.value.status == 504 and job.cancelled
        gate.set()
        queue.close()

    asyncio.run(main())


def test_an_exception_in_the_work_reaches_its_request_only() -> None:
    def broken() -> Iterator[int]:
        yield 1
        raise RuntimeError("boom")

    async def main() -> None:
        queue = ModelQueue(poll_s=0.01)
        job = queue.submit(broken)
        assert await job.next() == 1
        with pytest.raises(RuntimeError, match="boom"):
            await job.next()
        assert await queue.call(lambda: 42) == 42
        queue.close()

    asyncio.run(main())
