"""Drafts for search/replace programs (:mod:`copygram.language.search_replace`).

Two sources, both verified in the forward that appends them, so the program is the one
step-by-step decoding writes:

* ``"run"``: inside a search part, once its first line is written, the run can only go on with
  the document's next lines (or end, with the divider). The constraint forces each line's rest
  once its first bytes are chosen (:mod:`copygram.constraints.search_replace`), but where a line
  starts the model chooses; this drafts the rest of the document from where the run stands, so
  a long run costs a few forwards instead of one per line.
* ``"line"``/``"rejoin"``/``"resync"``/``"lookup"``: inside a replacement, which mostly repeats the lines it
  replaces with a change in the middle, the block's search lines followed by the closing marker,
  aligned by lines as rewrite mode drafts from the document
  (:class:`~copygram.decode.drafting.prediction.PredictionDrafter`, one per block). With heads
  (``search_scope = "head"``) the lines drafted are the whole unit that the head line opens, the
  lines the block replaces.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from copygram.decode.drafting.drafter import Draft, DraftConfig
from copygram.decode.drafting.length import DraftSizer
from copygram.decode.drafting.prediction import PredictionDrafter
from copygram.errors import ProgramSyntaxError
from copygram.language.search_replace import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    DIVIDER,
    find_run,
    parse_blocks,
    search_line,
)
from copygram.language.units import unit_end

if TYPE_CHECKING:
    from copygram.backends.base import BatchProfile

_OPEN, _DIVIDER, _CLOSE = (BLOCK_OPEN.encode(), DIVIDER.encode(), BLOCK_CLOSE.encode())


class BlockDrafter:
    """A :class:`~copygram.decode.loop.DraftSource` for one search/replace edit (module doc)."""

    def __init__(self, lines: Sequence[str], tokenize: Callable[[str], list[int]],
                 token_bytes: Sequence[bytes], config: DraftConfig,
                 profile: BatchProfile | None = None, *, heads: bool = False) -> None:
        self._lines = list(lines)
        self._heads = heads
        self._keys = [search_line(line) for line in lines]
        self._tokenize, self._token_bytes = tokenize, token_bytes
        self._config, self._profile = config, profile
        self._run_sizer = DraftSizer(config.max_tokens, profile, config.adaptive)

        self._data = bytearray()  # the program's bytes, from the context's tokens
        self._ends: list[int] = []  # byte offset just past each context token
        self._block: tuple[int, int, PredictionDrafter] | None = None  # divider, first token
        self._cursor: tuple[int, int] | None = None  # (open block's offset, its cursor line)

    def _follow(self, context: Sequence[int]) -> None:
        if len(context) < len(self._ends):  # rolled back: read again
            self._data, self._ends = bytearray(), []
            self._block = self._cursor = None
        for token in context[len(self._ends):]:
            self._data += self._token_bytes[token]
            self._ends.append(len(self._data))

    def _open_block(self) -> tuple[int, int | None] | None:
        """The last block's offset and its divider's (``None`` before it is written), while the
        block is open; ``None`` outside a block."""
        data = self._data
        opened = data.rfind(_OPEN)
        if opened < 0:
            return None
        # The divider is a line of its own; the byte before the search part is a newline.
        divider = data.find(b"\n" + _DIVIDER, opened + len(_OPEN) - 1)
        if divider < 0:
            return opened, None
        divider += 1
        if data.find(b"\n" + _CLOSE, divider + len(_DIVIDER) - 1) >= 0:
            return None  # closed
        return opened, divider

    def _cursor_of(self, opened: int) -> int | None:
        """The line the block opened at ``opened`` may start at: after the blocks before it
        (read once per block)."""
        if self._cursor is None or self._cursor[0] != opened:
            done = bytes(self._data[:opened]).decode("utf-8", errors="replace")
            try:
                blocks = parse_blocks(done, self._lines, heads=self._heads)
            except ProgramSyntaxError:
                return None
            end = 0
            if blocks:
                # A head block's next head comes after its whole unit, even where the block
                # leaves the unit's closing line (or its body) in place.
                last = blocks[-1].search
                end = unit_end(self._lines, last.start) if self._heads else last.end
            self._cursor = (opened, end + 1)
        return self._cursor[1]

    def _run_draft(self, opened: int, feed: int) -> Draft | None:
        """The document's lines after the open search part's run, from where it stands."""
        written = bytes(self._data[opened + len(_OPEN):]).decode("utf-8", errors="replace")
        lines = written.split("\n")
        complete, partial = [line + "\n" for line in lines[:-1]], lines[-1]
        if not complete:
            return None  # the run's first line is the model's choice
        cursor = self._cursor_of(opened)
        if cursor is None:
            return None
        start = find_run(self._lines, complete, cursor, self._keys)
        if start is None:
            return None
        following = start - 1 + len(complete)  # 0-based: the line the run may go on with
        if following >= len(self._keys) or not self._keys[following].startswith(partial):
            return None
        self._run_sizer.feed = feed
        limit = self._run_sizer.limit("run")
        if limit == 0:
            return None
        # A stretch long enough for the draft; its last token dropped, as the cut may split it.
        rest = self._keys[following][len(partial):] + "".join(
            self._keys[following + 1 : following + 1 + max(1, limit // 4)])
        tokens = self._tokenize(rest)[:-1][:limit]
        return Draft(tokens, source="run") if tokens else None

    def propose(self, program: str, context: Sequence[int], feed: int = 1) -> Draft | None:
        """A draft continuing the search part's run or the replacement being written; ``None``
        elsewhere."""
        self._follow(context)
        where = self._open_block()
        if where is None:
            return None
        opened, divider = where
        if divider is None:  # a head is one line: its rest is forced, no run to draft
            return None if self._heads else self._run_draft(opened, feed)
        if self._block is None or self._block[0] != divider:
            first = bisect_right(self._ends, divider)  # the token holding the divider's start
            start = self._ends[first - 1] if first else 0
            data = self._data
            search = bytes(data[opened + len(_OPEN):divider])
            replaced = self._unit(opened, search) if self._heads else search
            prediction = bytes(data[start:divider]) + _DIVIDER + replaced + _CLOSE
            drafter = PredictionDrafter(prediction.decode("utf-8", errors="replace"),
                                        self._tokenize, self._token_bytes, self._config,
                                        self._profile)
            self._block = (divider, first, drafter)
        _, first, drafter = self._block
        return drafter.propose(context[first:], feed)

    def _unit(self, opened: int, search: bytes) -> bytes:
        """The lines of the unit that the head line ``search`` opens (as a search part writes
        them); just the head where the block cannot be read."""
        cursor = self._cursor_of(opened)
        head = search.decode("utf-8", errors="replace")
        start = None if cursor is None else find_run(self._lines, [head], cursor, self._keys)
        if start is None:
            return search
        return "".join(self._keys[start - 1 : unit_end(self._lines, start)]).encode()

    def rewind(self, n_tokens: int) -> None:
        """The context was taken back to its first ``n_tokens`` tokens (and may grow again as
        long before the next :meth:`propose`, which the length check of :meth:`_follow` would
        miss): read it from there, the open block's drafter built anew at the next proposal.
        Costs O(1) now."""
        del self._ends[n_tokens:]
        del self._data[self._ends[-1] if self._ends else 0:]
        self._block = self._cursor = None

    def with_content(self, draft: Draft, content_tokens: int) -> bool:
        return False  # no copy tags: nothing to splice after a draft

    def feedback(self, draft: Draft, accepted: int) -> None:
        if draft.source == "run":
            self._run_sizer.feedback("run", len(draft.tokens), accepted)
        elif self._block is not None:
            self._block[2].feedback(draft, accepted)


__all__ = ["BlockDrafter"]
