"""Drafts for search/replace programs (:mod:`copygram.language.search_replace`).

A search part costs little already: once its first bytes decide a line, the constraint forces the
rest (:mod:`copygram.constraints.search_replace`). The replacement is the model's own text, and it
mostly repeats the lines it replaces with a change in the middle (a bug fix rewrites one
expression). So inside a replacement, :class:`BlockDrafter` drafts from the block's search lines
followed by the closing marker, aligned by lines as rewrite mode drafts from the document
(:class:`~copygram.decode.drafting.prediction.PredictionDrafter`, one per block). Drafts are
verified in the forward that appends them, so the program is the one step-by-step decoding writes.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from copygram.decode.drafting.drafter import Draft, DraftConfig
from copygram.decode.drafting.prediction import PredictionDrafter
from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER

if TYPE_CHECKING:
    from copygram.backends.base import BatchProfile

_OPEN, _DIVIDER, _CLOSE = (BLOCK_OPEN.encode(), DIVIDER.encode(), BLOCK_CLOSE.encode())


class BlockDrafter:
    """A :class:`~copygram.decode.loop.DraftSource` for one search/replace edit (module doc)."""

    def __init__(self, tokenize: Callable[[str], list[int]], token_bytes: Sequence[bytes],
                 config: DraftConfig, profile: BatchProfile | None = None) -> None:
        self._tokenize, self._token_bytes = tokenize, token_bytes
        self._config, self._profile = config, profile
        self._data = bytearray()  # the program's bytes, from the context's tokens
        self._ends: list[int] = []  # byte offset just past each context token
        self._block: tuple[int, int, PredictionDrafter] | None = None  # divider, first token

    def _follow(self, context: Sequence[int]) -> None:
        if len(context) < len(self._ends):  # rolled back: read again
            self._data, self._ends, self._block = bytearray(), [], None
        for token in context[len(self._ends):]:
            self._data += self._token_bytes[token]
            self._ends.append(len(self._data))

    def _replacement(self) -> tuple[int, int] | None:
        """Where the open block's divider and search part start, if the program is inside a
        replacement now."""
        data = bytes(self._data)
        opened = data.rfind(_OPEN)
        if opened < 0:
            return None
        search = opened + len(_OPEN)
        # The divider is a line of its own; the byte before the search part is a newline.
        divider = data.find(b"\n" + _DIVIDER, search - 1)
        if divider < 0:
            return None
        divider += 1
        if data.find(b"\n" + _CLOSE, divider + len(_DIVIDER) - 1) >= 0:
            return None  # closed
        return divider, search

    def propose(self, program: str, context: Sequence[int], feed: int = 1) -> Draft | None:
        """A draft continuing the replacement being written, or ``None`` outside one."""
        self._follow(context)
        where = self._replacement()
        if where is None:
            return None
        divider, search = where
        if self._block is None or self._block[0] != divider:
            first = bisect_right(self._ends, divider)  # the token holding the divider's start
            start = self._ends[first - 1] if first else 0
            data = bytes(self._data)
            prediction = (data[start:divider] + _DIVIDER + data[search:divider] + _CLOSE)
            drafter = PredictionDrafter(prediction.decode("utf-8", errors="replace"),
                                        self._tokenize, self._token_bytes, self._config,
                                        self._profile)
            self._block = (divider, first, drafter)
        _, first, drafter = self._block
        return drafter.propose(context[first:], feed)

    def with_content(self, draft: Draft, content_tokens: int) -> bool:
        return False  # no copy tags: nothing to splice after a draft

    def feedback(self, draft: Draft, accepted: int) -> None:
        if self._block is not None:
            self._block[2].feedback(draft, accepted)


__all__ = ["BlockDrafter"]
