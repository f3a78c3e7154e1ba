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

With heads, a block's drafts start at its opening marker, not at its divider: once the model has
begun a block (its first token is most often ``<<<<<<<``), the draft is the rest of the marker,
the head line, the divider and the unit, for the head line the model has written or, until it
has, the one the instruction names (:class:`NamedHeads`: the first unit-opening line that holds
the longest word of the instruction any such line holds, "Fix bugs in has_close_elements"
naming ``def has_close_elements(...)``). Otherwise each of the marker's rest, the head's first
token and the forced rest of the head (with the divider) costs a forward of its own before the
unit's drafts start: ~3 forwards an edit. It is a guess: a wrong one (an instruction whose
longest word a definition holds but that means another unit) costs its drafted tokens in one
forward, the model's own tokens are kept; where no unit-opening line holds a word of the
instruction, no head is guessed.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from copygram.decode.drafting.drafter import Draft, DraftConfig
from copygram.decode.drafting.length import DraftSizer
from copygram.decode.drafting.prediction import PredictionDrafter
from copygram.errors import ProgramSyntaxError
from copygram.language.block_scan import BlockScanner
from copygram.language.search_replace import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    DIVIDER,
    closes_loosely,
    find_run,
    parse_blocks,
    search_line,
    searchable,
)
from copygram.language.units import unit_end

if TYPE_CHECKING:
    from copygram.backends.base import BatchProfile

_OPEN, _DIVIDER, _CLOSE = (BLOCK_OPEN.encode(), DIVIDER.encode(), BLOCK_CLOSE.encode())
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MIN_NAME = 3
"""Shorter instruction words (``in``, ``a``, ``x``) name no line: too many lines hold them."""


def instruction_names(instruction: str) -> list[str]:
    """The words of ``instruction`` that may name a line (identifiers of :data:`MIN_NAME`
    characters or more), longest first, each once."""
    words = {word for word in _WORD.findall(instruction) if len(word) >= MIN_NAME}
    return sorted(words, key=lambda word: (-len(word), word))


class NamedHeads:
    """Which head line an instruction names, for a document: of the instruction's words
    (:func:`instruction_names`, longest first), the first that some unit-opening line (a line
    that others continue: a definition, not a call or an example in a comment) holds as a word;
    the first such line at or after the cursor is the guess. Only a guess: "Fix the division
    for empty values" names whichever function takes ``values`` first, and a wrong guess costs
    the tokens drafted in one forward. Where no unit-opening line holds a word, no guess.

    Costs: one pass over the document's words when built; :meth:`head` a bisect per word and a
    unit scan per line it tries."""

    def __init__(self, lines: Sequence[str], keys: Sequence[str], instruction: str) -> None:
        self._lines, self._keys = lines, keys
        self._names = instruction_names(instruction)
        wanted = set(self._names)
        self._hits: dict[str, list[int]] = {name: [] for name in self._names}
        if wanted:
            for number, key in enumerate(keys, 1):
                if searchable(lines[number - 1]):
                    for word in wanted.intersection(_WORD.findall(key)):
                        self._hits[word].append(number)

    def head(self, cursor: int, prefix: str = "") -> int | None:
        """The head line (1-based) guessed at ``cursor`` for a head written up to ``prefix``:
        the first occurrence at or after ``cursor`` of the named line's text, as the
        constraint reads a head; ``None`` where nothing is named."""
        for name in self._names:
            hits = self._hits[name]
            for number in hits[bisect_left(hits, cursor):]:
                key = self._keys[number - 1]
                if key.startswith(prefix) and unit_end(self._lines, number) > number:
                    return find_run(self._lines, [key], cursor, self._keys)
        return None


class BlockDrafter:
    """A :class:`~copygram.decode.drafting.DraftSource` for one search/replace edit (module doc)."""

    def __init__(self, lines: Sequence[str], tokenize: Callable[[str], list[int]],
                 token_bytes: Sequence[bytes], config: DraftConfig,
                 profile: BatchProfile | None = None, *, heads: bool = False,
                 instruction: str = "") -> None:
        self._lines = list(lines)
        self._heads = heads
        self._keys = [search_line(line) for line in lines]
        self._named = NamedHeads(self._lines, self._keys, instruction if heads else "")
        # (cursor, the head as written so far) -> its line: the guess, or the line read
        self._head_lines: dict[tuple[int, str], int | None] = {}
        self._tokenize, self._token_bytes = tokenize, token_bytes
        self._config, self._profile = config, profile
        self._run_sizer = DraftSizer(config.max_tokens, profile, config.adaptive)

        self._data = bytearray()  # the program's bytes, from the context's tokens
        self._ends: list[int] = []  # byte offset just past each context token
        # The open block's drafter: its key (the divider's offset; with heads, the block's
        # offset and its head line), the token its prediction starts at, the drafter.
        self._block: tuple[tuple[int, int], int, PredictionDrafter] | None = None
        self._cursor: tuple[int, int] | None = None  # (open block's offset, its cursor line)
        # The program's blocks, read as the program grows.
        self._scanner = BlockScanner(loose=closes_loosely(self._lines))

    def _follow(self, context: Sequence[int]) -> None:
        if len(context) < len(self._ends):  # rolled back: read again
            self._data, self._ends = bytearray(), []
            self._block = self._cursor = None
            self._scanner.reset()
        for token in context[len(self._ends):]:
            self._data += self._token_bytes[token]
            self._ends.append(len(self._data))

    def _open_block(self) -> tuple[int, int | None] | None:
        """The open block's offset and its divider's (``None`` before it is written); ``None``
        outside a block."""
        self._scanner.advance(self._data)
        opened = self._scanner.opened
        return None if opened is None else (opened, self._scanner.divider)

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

    def propose(self, context: Sequence[int], feed: int = 1) -> Draft | None:
        """A draft continuing the search part's run or the replacement being written (with
        heads: the block from its opening marker on); ``None`` elsewhere. ``context``: every
        token after the prompt (the program's, which this drafter reads its bytes from)."""
        self._follow(context)
        where = self._open_block()
        if self._heads:
            return self._head_draft(where, context, feed)
        if where is None:
            return None
        opened, divider = where
        if divider is None:
            return self._run_draft(opened, feed)
        if self._block is None or self._block[0] != (divider, 0):
            first, start = self._token_at(divider)
            search = bytes(self._data[opened + len(_OPEN):divider])
            prediction = bytes(self._data[start:divider]) + _DIVIDER + search + _CLOSE
            self._block = ((divider, 0), first, self._prediction(prediction))
        return self._block[2].propose(context[self._block[1]:], feed)

    def _token_at(self, offset: int) -> tuple[int, int]:
        """The context token holding program byte ``offset``, and the byte it starts at."""
        first = bisect_right(self._ends, offset)
        return first, self._ends[first - 1] if first else 0

    def _prediction(self, text: bytes) -> PredictionDrafter:
        return PredictionDrafter(text.decode("utf-8", errors="replace"), self._tokenize,
                                 self._token_bytes, self._config, self._profile)

    def _opening(self) -> int | None:
        """Where a block's opening marker begins, while the program ends inside it (outside any
        block); ``None`` otherwise."""
        line = self._data.rfind(b"\n") + 1
        written = bytes(self._data[line:])
        return line if written and _OPEN.startswith(written) else None

    def _head_draft(self, where: tuple[int, int | None] | None, context: Sequence[int],
                    feed: int) -> Draft | None:
        """With heads: the rest of the open block from where the program stands: its marker,
        head line, divider, the unit again and the closing marker (module doc)."""
        if where is None:
            opened = self._opening()
            if opened is None:
                return None
            written = ""
        else:
            opened, divider = where
            end = len(self._data) if divider is None else divider
            written = bytes(self._data[opened + len(_OPEN):end]).decode("utf-8",
                                                                         errors="replace")
        cursor = self._cursor_of(opened)
        if cursor is None:
            return None
        if "\n" in written:  # the head line is written: the unit is known
            written = written[:written.index("\n") + 1]
        if (cursor, written) not in self._head_lines:  # a search of the document: once
            self._head_lines[cursor, written] = (
                find_run(self._lines, [written], cursor, self._keys) if written.endswith("\n")
                else self._named.head(cursor, written))  # yet to be said: the named line
        head = self._head_lines[cursor, written]
        if head is None:
            return None
        if self._block is None or self._block[0] != (opened, head):
            first, start = self._token_at(opened)
            unit = "".join(self._keys[head - 1 : unit_end(self._lines, head)])
            prediction = (bytes(self._data[start:opened]) + _OPEN + self._keys[head - 1].encode()
                          + _DIVIDER + unit.encode() + _CLOSE)
            self._block = ((opened, head), first, self._prediction(prediction))
        return self._block[2].propose(context[self._block[1]:], feed)

    def rewind(self, n_tokens: int) -> None:
        """The context was taken back to its first ``n_tokens`` tokens (and may grow again as
        long before the next :meth:`propose`, which the length check of :meth:`_follow` would
        miss): read it from there, the open block's drafter built anew at the next proposal.
        Costs O(1) now, a read of the program from its start at the next proposal."""
        del self._ends[n_tokens:]
        del self._data[self._ends[-1] if self._ends else 0:]
        self._block = self._cursor = None
        self._scanner.reset()  # the program may grow back past what it read before the next call

    def with_content(self, draft: Draft, content_tokens: int) -> bool:
        return False  # no copy tags: nothing to splice after a draft

    def feedback(self, draft: Draft, accepted: int) -> None:
        if draft.source == "run":
            self._run_sizer.feedback("run", len(draft.tokens), accepted)
        elif self._block is not None:
            self._block[2].feedback(draft, accepted)


__all__ = ["BlockDrafter"]
