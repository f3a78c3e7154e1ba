"""Token choice policies: how the decode loop picks each program token from masked logits.

:class:`SamplingPolicy` is the model's own choice (greedy, or sampled with a seed);
:class:`TeacherPolicy` writes a given program, as a perfect model would (teacher forcing, for
:func:`copygram.bench.replay.replay`), :class:`TextTeacher` a given plain-text output (for
:func:`copygram.bench.replay.replay_rewrite`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from copygram.decode.sampling import Sampler, Sampling
from copygram.errors import GenerationError
from copygram.language.ops import Copy, Program
from copygram.language.syntaxes import get_syntax

if TYPE_CHECKING:
    from copygram.backends.base import Backend, Logits


class Policy(Protocol):
    greedy: bool
    """Whether choices are the argmax of the logits (so a near-tie may be re-decided)."""

    def choose(self, logits: Logits, allowed: npt.NDArray[np.bool_]) -> int: ...

    def verify(self, logits: Logits, allowed: npt.NDArray[np.bool_], drafted: int) -> int:
        """The token taken where a draft proposes ``drafted`` (a policy that is not greedy; a
        greedy one's is its choice): distributed as :meth:`choose`'s."""
        ...

    def advance(self, token_id: int) -> None:
        """Told of every token consumed, chosen or forced."""
        ...


class SamplingPolicy:
    """The model's choice: :class:`~copygram.decode.sampling.Sampler` over the allowed tokens."""

    def __init__(self, sampling: Sampling) -> None:
        self._sampler = Sampler(sampling)
        self.greedy = sampling.greedy

    def choose(self, logits: Logits, allowed: npt.NDArray[np.bool_]) -> int:
        return self._sampler.choose(logits, allowed)

    def verify(self, logits: Logits, allowed: npt.NDArray[np.bool_], drafted: int) -> int:
        """The token taken where a draft proposes ``drafted``
        (:meth:`~copygram.decode.sampling.Sampler.verify`: the model's distribution either way)."""
        return self._sampler.verify(logits, allowed, drafted)

    def advance(self, token_id: int) -> None:
        pass


class TeacherPolicy:
    """Chooses the tokens of a given program text, as a perfect model would.

    The program text is tokenized canonically (the backend's tokenizer) a stretch at a time, each
    ending at a copy's close: the copied lines are spliced right after it, so no token spans it,
    while across the other op boundaries a model writes what it read in the worked example
    (``</gen><copy`` holds the token ``><``). When the grammar forces tokens that split the text
    differently, the rest of the stretch is tokenized again from where they ended.
    """

    greedy = False  # it ignores the logits

    def __init__(self, program: Program, syntax: str, backend: Backend, eos_ids: frozenset[int],
                 token_bytes: Sequence[bytes]) -> None:
        self._backend = backend
        self._token_bytes = token_bytes
        self._eos_ids = eos_ids
        render_op = get_syntax(syntax).render_op
        self._ops = [render_op(op).encode("utf-8") for op in program]
        self._is_copy = [isinstance(op, Copy) for op in program]
        self._op = 0
        self._offset = 0  # bytes of self._ops[self._op] already consumed
        self._queue: list[int] = []

    def _refill(self) -> None:
        while self._op < len(self._ops) and self._offset >= len(self._ops[self._op]):
            self._op, self._offset = self._op + 1, 0
        if self._op < len(self._ops):
            end = self._op
            while not self._is_copy[end] and end + 1 < len(self._ops):
                end += 1
            rest = self._ops[self._op][self._offset :] + b"".join(self._ops[self._op + 1 : end + 1])
            self._queue = self._backend.tokenize(rest.decode("utf-8", errors="surrogateescape"))

    def choose(self, logits: Logits, allowed: npt.NDArray[np.bool_]) -> int:
        if not self._queue:
            self._refill()
        if self._op >= len(self._ops):
            for eos in sorted(self._eos_ids):
                if allowed[eos]:
                    return eos
            raise GenerationError("teacher program ended but the grammar does not allow EOS",
                                  partial_program="")
        token = self._queue[0]
        if not allowed[token]:
            raise GenerationError(
                f"the constraint rejects the teacher's token {token} "
                f"({self._token_bytes[token]!r}); the program is not valid for this document",
                partial_program="",
            )
        return token

    def verify(self, logits: Logits, allowed: npt.NDArray[np.bool_], drafted: int) -> int:
        return self.choose(logits, allowed)

    def advance(self, token_id: int) -> None:
        if token_id in self._eos_ids:
            return
        # Follow the token's bytes, into the next ops where it spans their boundary (`><`, or a
        # forced token).
        remaining = len(self._token_bytes[token_id])
        while remaining:
            if self._offset >= len(self._ops[self._op]):
                self._op, self._offset = self._op + 1, 0
            take = min(remaining, len(self._ops[self._op]) - self._offset)
            self._offset += take
            remaining -= take
        if self._queue and self._queue[0] == token_id:
            self._queue.pop(0)
        else:
            self._queue = []


class TextTeacher:
    """Chooses the tokens of a given output, then an end-of-generation id, as a perfect model
    would in plain text generation (:func:`copygram.decode.plain_text.generate`, which asks once
    per output position: :meth:`choose` for a token chosen alone, :meth:`verify` for each drafted
    one it checks). No grammar limits plain text, so ``allowed`` is not read."""

    greedy = False  # it ignores the logits: no near-tie is re-decided

    def __init__(self, target: Sequence[int], eos_ids: frozenset[int]) -> None:
        if not eos_ids:
            raise ValueError("a teacher needs an end-of-generation id to stop with")
        self._target = list(target)
        self._eos = min(eos_ids)
        self._position = 0

    def choose(self, logits: Logits, allowed: npt.NDArray[np.bool_]) -> int:
        at = self._position
        self._position += 1
        return self._target[at] if at < len(self._target) else self._eos

    def verify(self, logits: Logits, allowed: npt.NDArray[np.bool_], drafted: int) -> int:
        return self.choose(logits, allowed)

    def advance(self, token_id: int) -> None:
        pass


__all__ = ["Policy", "SamplingPolicy", "TeacherPolicy", "TextTeacher"]
