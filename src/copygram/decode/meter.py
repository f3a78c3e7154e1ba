"""The forward meter of the decode loop: :class:`Meter` chooses under the constraint, consumes,
forwards (:class:`~copygram.decode.forwards.Forwards`) and keeps the output's tokens, text
(:class:`~copygram.decode.text.OutputText`) and timings for one run."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from copygram.decode.budgets import RepeatGuard, RunawayGuard
from copygram.decode.events import CopyEvent, SpanEvent, TokenEvent
from copygram.decode.forwards import Forwards
from copygram.decode.policies import Policy
from copygram.decode.text import LineEnd, OutputText
from copygram.decode.unchanged import UnchangedBlocks
from copygram.errors import GenerationError, LengthError
from copygram.language.types import LineRange

if TYPE_CHECKING:
    from copygram.backends.base import Backend, Logits
    from copygram.constraints import Constraint


class Meter(Forwards):
    """The per-run plumbing of the decode loop: choosing under the constraint, consuming,
    forwarding (:class:`~copygram.decode.forwards.Forwards`), with timings.

    It keeps the output text (:attr:`text`: the program text, or plain text cut at a ``stop``
    string or after the line its ``end`` rule ends it on), whose byte offsets the token events
    carry. ``guard_repeats``: a run that writes the same line
    :data:`~copygram.decode.budgets.REPEAT_LIMIT` times in a row, or a block of lines three
    times, is an error (an edit program's guard, :class:`~copygram.decode.budgets.RepeatGuard`;
    plain text may repeat itself)."""

    def __init__(self, backend: Backend, constraint: Constraint, lines: Sequence[str],
                 policy: Policy, token_bytes: Sequence[bytes],
                 tie_tolerance: float | None = None, *, stop: Sequence[str] = (),
                 end: LineEnd | None = None, guard_repeats: bool = True) -> None:
        super().__init__(backend, policy, tie_tolerance)
        self.constraint, self.lines = constraint, lines
        self.text = OutputText(token_bytes, stop, end)
        self.program_ids: list[int] = []  # the output's tokens, in the order consumed
        self.verify_copies = False  # copy_check: cut copies where the model disagrees
        self._token_bytes = token_bytes
        self._copy_cache: dict[tuple[int, int], list[int]] = {}
        self._repeats = RepeatGuard(document=lines) if guard_repeats else None
        # retry_unchanged: the choices inside replacements, and the blocks that change nothing.
        self.unchanged: UnchangedBlocks | None = None
        self.runaway: RunawayGuard | None = None  # head blocks that retype the units after
        # What the runaway guard saw run on, until the loop closes that block (or gives up).
        self.ran_away: str | None = None

    def _allowed(self) -> npt.NDArray[np.bool_]:
        tick = time.perf_counter()
        allowed = self.constraint.allowed()
        self.stats.constraint_s += time.perf_counter() - tick
        return allowed

    @property
    def written(self) -> int:
        """Bytes of output consumed."""
        return self.text.n_bytes

    def choose(self, logits: Logits) -> int:
        allowed = self._allowed()
        token = self.policy.choose(logits, allowed)
        self._note(token, logits, allowed)
        return token

    def verify(self, logits: Logits, drafted: int) -> int:
        """The policy's token where a draft proposes ``drafted``, from a row of a verifying
        forward (:meth:`~copygram.decode.policies.Policy.verify`: not greedy; a greedy choice
        is :meth:`choose_batched`'s)."""
        allowed = self._allowed()
        token = self.policy.verify(logits, allowed, drafted)
        self._note(token, logits, allowed)
        return token

    def choose_batched(self, logits: Logits,
                       restep: Callable[[], Logits]) -> tuple[int, Logits]:
        """Choose from a row of a multi-token forward, re-deciding a near-tie over the allowed
        tokens with ``restep()`` (:meth:`~copygram.decode.forwards.Forwards.decide`)."""
        allowed = self._allowed()
        token, logits = self.decide(logits, allowed, restep)
        self._note(token, logits, allowed)
        return token, logits

    def _note(self, token: int, logits: Logits, allowed: npt.NDArray[np.bool_]) -> None:
        if self.unchanged is not None:
            tick = time.perf_counter()
            self.unchanged.note(self.constraint.program_bytes, len(self.program_ids), token,
                                logits, allowed)
            self.stats.constraint_s += time.perf_counter() - tick

    def consume(self, token: int) -> LineRange | None:
        tick = time.perf_counter()
        closed = self.constraint.consume(token)
        self.stats.constraint_s += time.perf_counter() - tick
        self.text.push(token)
        self.program_ids.append(token)
        self.policy.advance(token)
        if self._repeats is not None and (
                repeated := self._repeats.feed(self._token_bytes[token])) is not None:
            raise self.error(f"{repeated}: it is looping")
        if self.runaway is not None and self.ran_away is None:
            # Noted, not raised: the loop closes the block before its next choice.
            self.ran_away = self.runaway.feed(self.constraint.program_bytes)
        return closed

    def retract(self, n_tokens: int) -> int:
        """Take the last ``n_tokens`` program tokens back out of the constraint, the text, the
        repeat guard (read again from the program kept: O(program)) and the choices
        ``retry_unchanged`` keeps; not out of the KV cache: the caller truncates it. Returns
        the byte the text resumes from (a :class:`~copygram.decode.events.RetractEvent`'s)."""
        del self.program_ids[len(self.program_ids) - n_tokens:]
        self.constraint.rollback(n_tokens)
        # The constraint holds the output's bytes too: what it kept is what the text keeps.
        resumes = self.text.rewind(len(self.constraint.program_bytes))
        if self._repeats is not None:
            self._repeats = RepeatGuard(self._repeats.limit, self._repeats.document)
            self._repeats.feed(self.constraint.program_bytes)
        if self.unchanged is not None:
            self.unchanged.forget(len(self.program_ids))
        if self.runaway is not None:
            self.runaway.reset()
        return resumes

    @property
    def token_bytes_of(self) -> Sequence[bytes]:
        """Every token's bytes, by id."""
        return self._token_bytes

    def error(self, what: str, kind: type[GenerationError] = GenerationError) -> GenerationError:
        """A GenerationError for a run that cannot finish, with the partial program and stats."""
        return kind(
            f"{what}. The partial program is attached (copygram edit --show-program prints it); "
            "try a more specific instruction, a larger model (copygram models) or mode = "
            '"rewrite"',
            partial_program=self.constraint.program_text, stats=self.stats)

    def forced(self) -> list[int]:
        tick = time.perf_counter()
        forced = self.constraint.forced()
        self.stats.constraint_s += time.perf_counter() - tick
        return forced

    def token_event(self, token: int) -> TokenEvent:
        """The event of ``token``, the last token consumed."""
        end = self.written
        return TokenEvent(token, self.text.take(), end - len(self._token_bytes[token]), end)

    def span_event(self, tokens: Sequence[int], source: str, start: int) -> SpanEvent:
        """The event of ``tokens``, the last drafted tokens consumed, from byte ``start`` on."""
        return SpanEvent(tuple(tokens), self.text.take(), source, start, self.written)

    def copy_tokens(self, lines: LineRange) -> list[int]:
        """The copied lines' tokens, tokenized as one text (what the splice appends)."""
        key = (lines.start, lines.end)
        if key not in self._copy_cache:
            text = "".join(self.lines[lines.start - 1 : lines.end])
            self._copy_cache[key] = self.backend.tokenize(text)
        return self._copy_cache[key]

    def add_copy(self, lines: LineRange) -> CopyEvent:
        """Count a closed copy (the caller splices :meth:`copy_tokens`)."""
        n_tokens = len(self.copy_tokens(lines))
        self.stats.copy_ops += 1
        self.stats.spliced_tokens += n_tokens
        self.stats.copy_span_tokens.append(n_tokens)
        return CopyEvent(lines, n_tokens)

    def check_room(self, ids: Sequence[int]) -> None:
        if self.backend.n_tokens + len(ids) > self.backend.context_length:
            raise self.error(f"the edit filled the model's context (n_ctx="
                             f"{self.backend.context_length}) before its program ended",
                             LengthError)


__all__ = ["Meter"]
