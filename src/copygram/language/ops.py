"""Edit programs: the ops and the immutable program.

How a gen's text is written inside a program (verbatim, a few reserved words escaped) is the
syntax's business: :mod:`copygram.language.gentext` and :meth:`Syntax.escape
<copygram.language.syntaxes.Syntax.escape>`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from copygram.errors import CopygramError, RangeError
from copygram.language.types import LineRange


@dataclass(frozen=True, slots=True)
class Copy:
    """Copy lines ``start``..``end`` of the input document (1-based, inclusive, endings kept)."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if type(self.start) is not int or type(self.end) is not int:
            raise TypeError(f"Copy takes two ints, got {self.start!r}, {self.end!r}")
        if self.start < 1 or self.end < 1:
            # Line numbers are 1-based; a 0 or a negative renders to text that does not parse.
            raise RangeError(f"Copy({self.start}, {self.end}): line numbers start at 1",
                             op=(self.start, self.end), n_lines=None)

    @property
    def lines(self) -> LineRange:
        return LineRange(self.start, self.end)


@dataclass(frozen=True, slots=True)
class Gen:
    """Generate ``text`` verbatim (unescaped; a syntax escapes it when rendering)."""

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"Gen takes a str, got {type(self.text).__name__}")


Op = Copy | Gen

class Program(Sequence[Op]):
    """An immutable sequence of :class:`Copy` and :class:`Gen` ops.

    Built from any iterable of ops; compares equal to another program with the same ops.
    """

    __slots__ = ("_ops",)

    def __init__(self, ops: Iterable[Op] = ()) -> None:
        ops_tuple = tuple(ops)
        for op in ops_tuple:
            if not isinstance(op, (Copy, Gen)):
                raise CopygramError(f"a Program holds Copy and Gen ops, not {op!r}")
        self._ops: tuple[Op, ...] = ops_tuple

    @overload
    def __getitem__(self, index: int) -> Op: ...
    @overload
    def __getitem__(self, index: slice) -> Program: ...
    def __getitem__(self, index: int | slice) -> Op | Program:
        if isinstance(index, slice):
            return Program(self._ops[index])
        return self._ops[index]

    def __len__(self) -> int:
        return len(self._ops)

    def __iter__(self) -> Iterator[Op]:
        return iter(self._ops)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Program):
            return self._ops == other._ops
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._ops)

    def __repr__(self) -> str:
        return f"Program({list(self._ops)!r})"

    @property
    def ops(self) -> tuple[Op, ...]:
        return self._ops

    def normalized(self) -> Program:
        """The same edit with adjacent gens merged, empty gens dropped and adjacent copies joined."""
        out: list[Op] = []
        for op in self._ops:
            if isinstance(op, Gen):
                if not op.text:
                    continue
                if out and isinstance(out[-1], Gen):
                    out[-1] = Gen(out[-1].text + op.text)
                    continue
            elif out and isinstance(out[-1], Copy) and out[-1].end + 1 == op.start:
                out[-1] = Copy(out[-1].start, op.end)
                continue
            out.append(op)
        return Program(out)

    def copies(self) -> list[Copy]:
        return [op for op in self._ops if isinstance(op, Copy)]
