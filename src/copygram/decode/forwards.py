"""Forwards through a backend, counted and timed, and the near-tie rule that keeps batching from
changing greedy output. Shared by the program-mode loop (:mod:`copygram.decode.loop`) and plain
text generation (:mod:`copygram.decode.plain_text`).

Batched rows are not bit-equal to one-token steps on every stack (llama.cpp's differ by up to
~0.6 in the top-2 margin), so a greedy choice read from a row of a multi-token forward whose
top-2 margin is within the tie tolerance is re-decided from a one-token step at that position
(:meth:`Forwards.decide`; counted in ``RunStats.tie_steps``). The tolerance is the session's
``tie_tolerance`` or else the backend's fixed ``BatchProfile.step_tolerance``: nothing here reads
a clock to shape a batch, so the same input gives the same output on every run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from copygram.backends.base import Batched
from copygram.backends.prefix_store import Snapshots, shared_prefix
from copygram.decode.events import PrefillEvent
from copygram.decode.sampling import top2_margin
from copygram.decode.stats import RunStats

if TYPE_CHECKING:
    from copygram.backends.base import Backend, Logits
    from copygram.decode.policies import Policy


class Forwards:
    """One run's forwards through ``backend`` (into :attr:`stats`) and its choices by ``policy``.

    ``tie_tolerance``: the session's override of the backend's ``step_tolerance`` (``None``: the
    backend's). Only a greedy choice is ever re-decided: a teacher ignores logits, a sampler draws
    anyway, so for those the tolerance is 0."""

    def __init__(self, backend: Backend, policy: Policy,
                 tie_tolerance: float | None = None) -> None:
        self.backend, self.policy = backend, policy
        tolerance = (backend.batch_profile.step_tolerance if tie_tolerance is None
                     else tie_tolerance)
        self.tie_tolerance = tolerance if policy.greedy else 0.0
        self.last_batched = False  # whether the last forward appended more than one token
        self.stats = RunStats()

    def decide(self, logits: Logits, allowed: npt.NDArray[np.bool_],
               restep: Callable[[], Logits]) -> tuple[int, Logits]:
        """The policy's choice from a row of a multi-token forward. Where the row's top-2 margin
        over the ``allowed`` tokens is within the tie tolerance, ``restep()`` (a one-token step
        at the same position, which leaves the cache ending there) decides instead. Returns the
        choice and the logits it came from (``logits`` itself unless re-decided). Costs one
        top-2 scan of the vocabulary per call, and a forward per re-decision."""
        token = self.policy.choose(logits, allowed)
        if self.tie_tolerance > 0 and top2_margin(logits, allowed) <= self.tie_tolerance:
            self.stats.tie_steps += 1
            logits = restep()
            token = self.policy.choose(logits, allowed)
        return token, logits

    def restep_last(self) -> Logits:
        """Drop the cache's last token and append it again in a one-token step."""
        last = self.backend.cached_ids[-1]
        self.backend.truncate(self.backend.n_tokens - 1)
        return self.forward([last])

    def restep_at(self, base: int, ids: list[int], row: int) -> Logits:
        """Re-decide row ``row`` of a forward that appended ``ids`` after ``base`` cached
        tokens: cut the cache to ``base + row`` and append ``ids[row]`` in a one-token step."""
        self.backend.truncate(base + row)
        return self.forward([ids[row]])

    def _record(self, n_tokens: int, since: float) -> None:
        elapsed = time.perf_counter() - since
        self.last_batched = n_tokens > 1
        if n_tokens == 1:
            self.stats.decode_s += elapsed
        else:
            self.stats.splice_s += elapsed
        self.stats.forwards += 1
        self.stats.forward_tokens.append(n_tokens)

    def forward(self, ids: list[int]) -> Logits:
        """Append ``ids`` (a decode step for one, a splice for more); logits after the last."""
        tick = time.perf_counter()
        logits = self.backend.decode(ids[0]) if len(ids) == 1 else self.backend.splice(ids)
        self._record(len(ids), tick)
        return logits

    def prefill(self, prompt: list[int]) -> Generator[PrefillEvent, None, Logits]:
        """Splice ``prompt`` (:func:`prefill_steps`: the prefix the cache holds is reused,
        progress yielded between batches), its cached tokens and time kept in the stats, apart
        from the forwards; returns the logits after it."""
        tick = time.perf_counter()
        logits, spliced = yield from prefill_steps(self.backend, prompt)
        self.last_batched = spliced > 1
        self.stats.cached_prompt_tokens = len(prompt) - spliced
        self.stats.prefill_s = time.perf_counter() - tick
        return logits

    def forward_rows(self, ids: list[int], rows: list[int]) -> npt.NDArray[np.float32]:
        """Append ``ids`` in one forward; logits after each ``ids[r]``, ``r`` in ``rows``."""
        tick = time.perf_counter()
        logits = self.backend.splice_all(ids, rows=rows)
        self._record(len(ids), tick)
        return logits


def prefill_steps(backend: Backend,
                  prompt_ids: list[int]) -> Generator[PrefillEvent, None, tuple[Logits, int]]:
    """Splice the prompt, reusing whatever prefix of it the cache already holds (the system
    message and worked example are the same for every edit), or a snapshot of a recent prompt
    holds, where the backend keeps them (:mod:`copygram.backends.prefix_store`). Yields a
    :class:`~copygram.decode.events.PrefillEvent` before the splice, one after each
    ``n_batch`` tokens where the backend runs batches of that many (:class:`Batched`: the same
    batches as one splice, so the same cache; llama.cpp) and one at the end; returns the
    logits after the prompt and how many tokens were appended."""
    cached = backend.cached_ids
    # Splice at least one token, for the logits after the prompt.
    common = shared_prefix(cached, prompt_ids, len(prompt_ids) - 1)
    store = backend.prefix_store if isinstance(backend, Snapshots) else None
    if store is not None:
        assert isinstance(backend, Snapshots)
        common = store.reuse(backend, cached, prompt_ids, common)
    backend.truncate(common)
    total, done = len(prompt_ids), common
    yield PrefillEvent(done, total, common)
    step = backend.n_batch if isinstance(backend, Batched) else total
    while total - done > step:  # no logits row for a batch before the last
        backend.splice_all(prompt_ids[done : done + step], rows=[])
        done += step
        yield PrefillEvent(done, total, common)
    logits = backend.splice(prompt_ids[done:])
    if store is not None:
        store.prompted(prompt_ids)
    yield PrefillEvent(total, total, common)
    return logits, total - common


def prefill(backend: Backend, prompt_ids: list[int]) -> tuple[Logits, int]:
    """:func:`prefill_steps` run to its end, its progress dropped: the logits after the prompt
    and how many tokens the splice appended."""
    steps = prefill_steps(backend, prompt_ids)
    while True:
        try:
            next(steps)
        except StopIteration as end:
            result: tuple[Logits, int] = end.value
            return result


__all__ = ["Forwards", "prefill", "prefill_steps"]
