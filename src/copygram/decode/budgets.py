"""Bounds on a run: the token budget an edit program gets, and the guard that stops a model
writing the same line again and again (small models loop; an edit must end in bounded time)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from copygram.decode.document import EditDocument

REPEAT_LIMIT = 8
"""Identical non-blank lines in a row that end a run: no edit writes a line eight times over."""


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


class RepeatGuard:
    """Watches the program text, byte by byte, for :data:`REPEAT_LIMIT` identical non-blank
    lines in a row (blank lines between them do not count). O(1) per byte."""

    def __init__(self, limit: int = REPEAT_LIMIT) -> None:
        self.limit = limit
        self._line = bytearray()
        self._last = b""
        self._count = 0

    def feed(self, data: bytes) -> bytes | None:
        """Take the next bytes of program text; the repeated line once it hits the limit."""
        for byte in data:
            if byte != 0x0A:
                self._line.append(byte)
                continue
            line, self._line = bytes(self._line), bytearray()
            if not line.strip():
                continue
            self._count = self._count + 1 if line == self._last else 1
            self._last = line
            if self._count >= self.limit:
                return line
        return None


__all__ = ["REPEAT_LIMIT", "Budget", "RepeatGuard", "token_budget"]
