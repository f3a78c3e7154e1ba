"""Bounds on a run: the token budget an edit program gets, and the guard that stops a model
writing the same line again and again (small models loop; an edit must end in bounded time)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from copygram.decode.document import EditDocument
from copygram.language.block_scan import BlockScanner
from copygram.language.runaway import RUNAWAY_LINES, ends_answer, next_unit
from copygram.language.search_replace import BLOCK_OPEN, DIVIDER, closes_loosely, search_line
from copygram.language.units import indentation, unit_end

REPEAT_LIMIT = 8
"""Identical non-blank lines in a row that end a run: no edit writes a line eight times over."""
BLOCK_REPEATS = 3
"""Times in a row a block of several non-blank lines may be written before a run ends (where
the document does not hold it so): a model that writes a function a third time is looping."""
MAX_BLOCK_LINES = 64
"""The longest block (non-blank lines) the guard looks for."""
MIN_BLOCK_CHARS = 64
"""The shortest block (characters) the guard counts: a few short lines may alternate in an
edit ("b", "a", "b", "a"); a function written again and again is longer."""
_KEPT = MAX_BLOCK_LINES * BLOCK_REPEATS


@dataclass(frozen=True)
class Budget:
    """The program tokens a run may write, and what set that number: the caller's
    ``max_new_tokens``, the room left in the ``context``, or the ``default`` for the document
    (which only a looping model exhausts)."""

    tokens: int
    bound: Literal["max_new_tokens", "context", "default"]


def token_budget(document: EditDocument, prompt_tokens: int, context_length: int,
                 max_new_tokens: int | None) -> Budget:
    """Program tokens an edit of ``document`` may write: ``max_new_tokens``, or by default twice
    the document's tokens plus 256 (room to rewrite every line and as much again); either way
    capped so that the prompt, the program and the copied lines (at most the document, with
    copies in order) fit the context, so a run ends on its budget, never on a full context."""
    room = max(1, context_length - prompt_tokens - len(document.tokens) - 8)
    wanted = Budget(max_new_tokens, "max_new_tokens") if max_new_tokens is not None else \
        Budget(2 * len(document.tokens) + 256, "default")
    return wanted if wanted.tokens <= room else Budget(room, "context")


@dataclass(frozen=True)
class Repeat:
    """What a looping model wrote again and again: ``lines`` (non-blank, without endings),
    ``times`` in a row."""

    lines: tuple[bytes, ...]
    times: int

    def __str__(self) -> str:
        first = self.lines[0].decode("utf-8", "replace")
        if len(self.lines) == 1:
            return f"the model wrote the line {first!r} {self.times} times in a row"
        return (f"the model wrote the {len(self.lines)} lines from {first!r} {self.times} times "
                "in a row")


class RepeatGuard:
    """Watches the program text, byte by byte, for a model that loops: :data:`REPEAT_LIMIT`
    identical non-blank lines in a row, or a block of 2 to :data:`MAX_BLOCK_LINES` non-blank
    lines written :data:`BLOCK_REPEATS` times in a row (a function written again and again),
    where the ``document`` (its lines) does not hold them so. Blank lines between them do not
    count. O(1) per byte, and at each line end at most :data:`MAX_BLOCK_LINES` line comparisons
    (the document is searched only when a block repeats)."""

    def __init__(self, limit: int = REPEAT_LIMIT, document: Sequence[str] = ()) -> None:
        self.limit = limit
        self.document = document
        self._line = bytearray()
        self._recent: list[bytes] = []  # the last non-blank lines, newest last
        self._count = 0
        self._held: list[bytes] | None = None  # the document's non-blank lines, when needed

    def feed(self, data: bytes) -> Repeat | None:
        """Take the next bytes of program text; what repeats once it hits a limit."""
        for byte in data:
            if byte != 0x0A:
                self._line.append(byte)
                continue
            line, self._line = bytes(self._line).rstrip(b"\r"), bytearray()
            if not line.strip():
                continue
            recent = self._recent
            self._count = self._count + 1 if recent and line == recent[-1] else 1
            recent.append(line)
            if len(recent) > 2 * _KEPT:
                del recent[:-_KEPT]
            # A run the document has (a table of equal rows) is copied, not looped.
            if self._count >= self.limit and not self._holds([line] * self._count):
                return Repeat((line,), self._count)
            if (block := self._block()) is not None:
                return block
        return None

    def _block(self) -> Repeat | None:
        recent = self._recent
        for size in range(2, min(MAX_BLOCK_LINES, len(recent) // BLOCK_REPEATS) + 1):
            if recent[-1] != recent[-1 - size]:
                continue
            tail = recent[len(recent) - size * BLOCK_REPEATS:]
            block = tail[-size:]
            if (len(set(block)) > 1 and sum(map(len, block)) >= MIN_BLOCK_CHARS
                    and tail == block * BLOCK_REPEATS and not self._holds(tail)):
                return Repeat(tuple(block), BLOCK_REPEATS)
        return None

    def _holds(self, run: list[bytes]) -> bool:
        """Whether the document has the non-blank lines ``run`` in a row (so a replacement
        that copies them is not looping)."""
        if self._held is None:
            self._held = [text for line in self.document
                          if (text := line.rstrip("\r\n").encode()).strip()]
        held, size = self._held, len(run)
        return any(held[start : start + size] == run
                   for start in range(len(held) - size + 1) if held[start] == run[0])


RUNAWAY_UNITS = 2
"""Units after its own whose first lines a head block's replacement may type again, otherwise
than as the document has them, before the run is stopped (:class:`RunawayGuard`)."""


class RunawayGuard:
    """Watches a head-block program (``search_scope = "head"``) for a replacement that writes on
    past the unit its head opens and types the units after it again: :meth:`feed` says so once
    a replacement holds the next unit's first :data:`~copygram.language.runaway.RUNAWAY_LINES`
    lines as the document has them, or, in their order, the first lines of
    :data:`RUNAWAY_UNITS` units that follow its own in the document and are as deep as its head
    or shallower (a statement nested in a later unit, a common ``for`` line, may well be the
    block's own change). The decode loop then closes the block where the next unit began
    (:func:`~copygram.decode.verify.close_ran_away`), or, where the retyped lines are not the
    document's, ends the run with a :class:`~copygram.errors.RunawayError`: read as written
    such a block defines those units twice, and a small model that starts to retype a file of
    real size from its first head otherwise spends minutes on it. A program that means to move
    units above its head is stopped too, and rewritten. A replacement line that is an elision
    line of the prompt's view (:mod:`copygram.language.focus`) is a run on too (the model went
    on to the next part it was shown), and so, with ``fences`` (a code file), is a Markdown
    code fence the document does not hold (the model began its answer's next code block): the
    block is closed before it (:func:`~copygram.language.runaway.ends_answer`). Costs O(1) per
    byte; the document's unit heads are read once (a unit scan)."""

    def __init__(self, lines: Sequence[str], limit: int = RUNAWAY_UNITS,
                 fences: bool = False) -> None:
        self.limit = limit
        self.fences = fences
        self._lines = lines
        self._heads: dict[bytes, list[int]] = {}  # a unit's first line -> where it occurs
        self._where: dict[bytes, list[int]] = {}  # every line -> where it occurs
        self._keys = [search_line(line).encode() for line in lines]  # as a replacement types it
        for number, (line, key) in enumerate(zip(lines, self._keys, strict=True), start=1):
            self._where.setdefault(key, []).append(number)
            if unit_end(lines, number) > number:
                self._heads.setdefault(key, []).append(number)
        self._scanner = BlockScanner(loose=closes_loosely(lines))
        self.reset()

    def reset(self) -> None:
        """Read the program from its start at the next :meth:`feed` (it was taken back)."""
        self._scanner.reset()
        self._cursor = 1  # where the open block's head may be: after the blocks before it
        self._run_end = 0  # the open block's unit's last line (0: no replacement open)
        self._seen: list[int] = []  # units after the run whose first line it typed again
        self._line = 0  # the program byte where the next replacement line to read starts
        self._next = 0  # the first line of the unit after the open block's (0: none)
        self._depth = 0  # the open block's head's indentation: units after it at most as deep
        self._copied = 0  # lines of the next unit, from its first, typed as the document has

    def feed(self, program: bytes | bytearray) -> str | None:
        """Read the ``program`` (the whole of it so far; taken back, read anew); what ran away,
        in words, once the replacement retypes its limit of units."""
        if len(program) < self._line:
            self.reset()
        closed = len(self._scanner.spans)
        self._scanner.advance(program)
        if len(self._scanner.spans) > closed:  # a block closed: the next head comes after it
            self._cursor, self._run_end, self._seen = max(self._cursor, self._run_end + 1), 0, []
        divider = self._scanner.divider
        if divider is None:
            return None
        if not self._run_end:
            opened = self._scanner.opened
            assert opened is not None
            head = bytes(program[opened + len(BLOCK_OPEN):divider])
            start = next((k for k in self._where.get(head, []) if k >= self._cursor), None)
            self._run_end = unit_end(self._lines, start) if start else len(self._lines)
            self._next, self._copied = next_unit(self._lines, self._run_end) or 0, 0
            self._depth = indentation(self._lines[start - 1]) if start else 0
            self._line = divider + len(DIVIDER)
        while (newline := program.find(b"\n", self._line)) >= 0:
            line = bytes(program[self._line : newline + 1])
            self._line = newline + 1
            if ends_answer(line.rstrip(b"\r\n").decode("utf-8", "replace"), self.fences) \
                    and line not in self._where:
                return (f"a head block wrote on past its unit (lines up to {self._run_end}) "
                        "and typed an elision line of the prompt's view or a code fence")
            if self._retypes_next(line):
                return (f"a head block wrote on past its unit (lines up to {self._run_end}) "
                        f"and typed the next unit (line {self._next}) again")
            after = max(self._seen, default=self._run_end)
            # Units as deep as the block's or shallower: a statement nested in a later unit
            # (a common ``for`` line) may well be written by the block's own change.
            found = next((k for k in self._heads.get(line, [])
                          if k > after and indentation(self._lines[k - 1]) <= self._depth), None)
            if found is not None:
                self._seen.append(found)
                if len(self._seen) >= self.limit:
                    return (f"a head block wrote on past its unit (lines up to "
                            f"{self._run_end}) and typed the units at lines "
                            f"{', '.join(map(str, self._seen))} again")
        return None

    def _retypes_next(self, line: bytes) -> bool:
        """Whether replacement ``line`` makes :data:`RUNAWAY_LINES` of the next unit's lines,
        from its first, typed in a row as the document has them."""
        if not self._next:
            return False
        at = self._next - 1 + self._copied
        if at < len(self._keys) and line == self._keys[at]:
            self._copied += 1
        else:
            self._copied = int(line == self._keys[self._next - 1])
        return self._copied >= RUNAWAY_LINES


__all__ = ["BLOCK_REPEATS", "MAX_BLOCK_LINES", "MIN_BLOCK_CHARS", "REPEAT_LIMIT", "RUNAWAY_UNITS",
           "Budget", "Repeat", "RepeatGuard", "RunawayGuard", "token_budget"]
