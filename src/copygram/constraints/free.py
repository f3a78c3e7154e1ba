"""The constraint of plain text: every token may come next, nothing is forced, no copy closes.

With it the decode loop (:mod:`copygram.decode.loop`) generates plain text, as rewrite mode and
chat completions do: the program loop with an all-allowing constraint and no copies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from copygram.constraints.base import ProgramState
from copygram.constraints.vocab import Mask
from copygram.language.types import LineRange


@dataclass(frozen=True)
class _Plain:
    token_bytes: Sequence[bytes]
    eos_token_id: int
    vocab_size: int


class FreeText(ProgramState):
    """A :class:`~copygram.constraints.Constraint` that allows every token, always: the text may
    end anywhere (:attr:`done` holds until EOS). O(1) per token; :meth:`allowed` returns one
    shared read-only mask."""

    def __init__(self, vocab_size: int, token_bytes: Sequence[bytes], eos_token_id: int) -> None:
        super().__init__(_Plain(token_bytes, eos_token_id, vocab_size))
        self._mask = np.ones(vocab_size, dtype=np.bool_)
        self._mask.flags.writeable = False

    @property
    def n_lines(self) -> int:
        return 0

    @property
    def done(self) -> bool:
        return not self._finished

    def allowed(self) -> Mask:
        return self._mask

    def fill_allowed(self, out: Mask) -> None:
        self._check_mask(out)
        out[:] = True

    def consume(self, token_id: int) -> LineRange | None:
        if token_id == self.eos_token_id:
            self._finished = True
        else:
            self._append(token_id)
        return None

    def rollback(self, n_tokens: int) -> None:
        self._drop(self._check_rollback(n_tokens))

    def forced(self) -> list[int]:
        return []


__all__ = ["FreeText"]
