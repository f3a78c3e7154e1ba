"""Following a search/replace program's blocks as its bytes grow (:class:`BlockScanner`), for
the decode loop's guards, retries and drafts (:mod:`copygram.language.search_replace`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER, LOOSE_CLOSE

_OPEN_BYTES, _DIVIDER_BYTES, _CLOSE_BYTES = (BLOCK_OPEN.encode(), DIVIDER.encode(),
                                           BLOCK_CLOSE.encode())
_LOOSE_CLOSE_BYTES = re.compile(LOOSE_CLOSE.pattern.encode())


@dataclass(frozen=True)
class BlockSpan:
    """Byte offsets in a program of one closed block: its replacement starts at
    ``replacement``, its closing marker at ``close`` (where a block closes on the line it ends,
    at that line's arrows), and its closing line ends at ``end``."""

    replacement: int
    close: int
    end: int


@dataclass
class BlockScanner:
    """Follows a search/replace program's bytes (possibly partial) line by line: its closed
    blocks (``spans``), whether it stands inside a replacement, and where the open block's
    marker line (``opened``) and divider line (``divider``) start (``None`` outside a block,
    and before the divider). :meth:`advance` reads only the lines completed since its last
    call (a program shorter than what was read is read again; one taken back and grown again
    needs :meth:`reset`). ``loose``: a block may close on the line it ends
(:func:`~copygram.language.search_replace.closes_loosely` of the document). The decode loop's
retries and the block drafts read blocks here."""

    loose: bool = False
    spans: list[BlockSpan] = field(default_factory=list)
    in_replacement: bool = False
    opened: int | None = None
    divider: int | None = None
    _state: str = "outside"
    _at: int = 0  # the start of the first line not read yet

    def reset(self) -> None:
        """Forget what was read: the next :meth:`advance` reads from the start."""
        self.spans.clear()
        self.in_replacement, self.opened, self.divider = False, None, None
        self._state, self._at = "outside", 0

    def _close(self, line: bytes | bytearray) -> int | None:
        """Where the closing marker starts in replacement line ``line`` (``None``: it does not
        close the block): at 0, or (``loose``) at its arrows."""
        if line == _CLOSE_BYTES:
            return 0
        found = _LOOSE_CLOSE_BYTES.fullmatch(line) if self.loose else None
        return None if found is None else found.end(2)

    def advance(self, program: bytes | bytearray) -> None:
        if len(program) < self._at:  # taken back: read from the start
            self.reset()
        while (newline := program.find(b"\n", self._at)) >= 0:
            line = program[self._at : newline + 1]
            if self._state == "outside" and line == _OPEN_BYTES:
                self._state, self.opened = "search", self._at
            elif self._state == "search" and line == _DIVIDER_BYTES:
                self._state, self.divider = "replacement", self._at
            elif self._state == "replacement" and (close := self._close(line)) is not None:
                assert self.divider is not None
                self.spans.append(BlockSpan(self.divider + len(_DIVIDER_BYTES),
                                            self._at + close, newline + 1))
                self._state, self.opened, self.divider = "outside", None, None
            self._at = newline + 1
        self.in_replacement = self._state == "replacement"


__all__ = ["BlockScanner", "BlockSpan"]
