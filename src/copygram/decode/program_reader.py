"""The ops of a growing program text, read incrementally with the syntax's one op pattern.

The decode loop and the drafter share one :class:`OpReader` per edit: each step reads only the ops
completed since the last one, and the edit's final :class:`~copygram.language.ops.Program` is the
ops already read (no parse of the whole text at the end).
"""

from __future__ import annotations

from copygram.language.ops import Op, Program
from copygram.language.syntaxes import Syntax


class OpReader:
    """Complete ops of a program text that grows between calls to :meth:`advance`.

    A text shorter than what was read means the program was rolled back: it is read again from
    the start (:attr:`resets` counts those, for readers that keep state per op)."""

    def __init__(self, syntax: Syntax) -> None:
        self.syntax = syntax
        self._pattern = syntax.op_pattern
        self.ops: list[Op] = []
        self.end = 0  # offset in the text just past the last complete op
        self.resets = 0

    def advance(self, text: str) -> str:
        """Read the ops ``text`` completes past the last call; returns the partial op after them."""
        if len(text) < self.end:
            self.retract(0)
        while (match := self._pattern.match(text, self.end)) is not None:
            self.ops.append(self.syntax.op_from_match(match))
            self.end = match.end()
        return text[self.end :]

    def retract(self, start: int) -> None:
        """The text from ``start`` on was rewritten (not only cut): ops that reach past it are
        read again from the start."""
        if start < self.end:  # from the start: an op's text is read whole or not at all
            self.ops, self.end = [], 0
            self.resets += 1

    def program(self, text: str) -> Program:
        """The program ``text`` spells, which must be complete (a program the constraint
        accepted). Read from the ops already known; a text they do not cover (never, for a
        program the grammar accepted) is parsed whole, so that its error names the place."""
        if self.advance(text):
            return self.syntax.parse(text)
        return Program(self.ops)


__all__ = ["OpReader"]
