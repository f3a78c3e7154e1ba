"""The oracle: the edit program a perfect model would emit for (before, after).

Method: an exact dynamic programme over the lines of ``after`` (not difflib). Position ``k`` of
``after`` is produced either by generating line ``k`` (extending an open gen op, or opening one)
or by copying a run of lines ``after[k:k+L]`` that stands at ``before[i:i+L]`` for *any* ``i``, so
reordered and duplicated blocks are copied too. It minimises a separable cost (by default the
rendered program's length in characters; :class:`TokenCost` counts a tokenizer's tokens
instead). Copies along one diagonal ``i - k`` share a running minimum, so the programme is
linear in the number of matching line pairs: ``O(m + P)`` for ``P`` pairs ``before[i] ==
after[k]``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from copygram.language.lines import split_lines
from copygram.language.ops import Copy, Gen, Op, Program
from copygram.language.syntaxes import DEFAULT_TAGS, get_syntax


class CostModel(Protocol):
    """A separable cost of a program: what the oracle minimises.

    ``copy(i, j)`` costs ``copy_base + number(i) + number(j)``; a gen op costs ``gen_base`` plus
    ``gen_line`` of each line it holds.
    """

    @property
    def copy_base(self) -> float: ...

    def number(self, value: int) -> float: ...

    @property
    def gen_base(self) -> float: ...

    def gen_line(self, line: str) -> float: ...


@dataclass(frozen=True)
class CharCost:
    """The rendered length of the program in ``syntax``, in characters."""

    syntax: str = DEFAULT_TAGS

    @property
    def copy_base(self) -> float:
        s = get_syntax(self.syntax)
        return float(len(s.copy_open) + len(s.copy_sep) + len(s.copy_close))

    def number(self, value: int) -> float:
        return float(len(str(value)))

    @property
    def gen_base(self) -> float:
        s = get_syntax(self.syntax)
        return float(len(s.gen_open) + len(s.gen_close))

    def gen_line(self, line: str) -> float:
        return float(len(get_syntax(self.syntax).escape(line)))


class TokenCost:
    """The program's length in tokens of a tokenizer (what a model decodes, not characters).

    Each literal, number and gen line is tokenized on its own (token boundaries fall at op and
    line boundaries); results are cached, so the cost of an oracle call is dominated by
    tokenizing each distinct line of ``after`` once.
    """

    def __init__(self, tokenize: Callable[[str], Sequence[int]],
                 syntax: str = DEFAULT_TAGS) -> None:
        s = get_syntax(syntax)
        self._tokenize = tokenize
        self._escape = s.escape
        self._cache: dict[str, float] = {}
        self.copy_base = self._count(s.copy_open) + self._count(s.copy_sep) + self._count(
            s.copy_close)
        self.gen_base = self._count(s.gen_open) + self._count(s.gen_close)

    def _count(self, text: str) -> float:
        if text not in self._cache:
            self._cache[text] = float(len(self._tokenize(text)))
        return self._cache[text]

    def number(self, value: int) -> float:
        return self._count(str(value))

    def gen_line(self, line: str) -> float:
        return self._count(self._escape(line))


def oracle(before: str, after: str, *, cost: CostModel | None = None) -> Program:
    """The cheapest program ``p`` (under ``cost``, default :class:`CharCost`) with
    ``resolve(p, before) == after``."""
    cost = cost or CharCost()
    source = split_lines(before)
    target = split_lines(after)
    m = len(target)
    if m == 0:
        return Program()

    positions: dict[str, list[int]] = defaultdict(list)
    for i, line in enumerate(source):
        positions[line].append(i)
    number_cost = [0.0] + [cost.number(v) for v in range(1, len(source) + 1)]
    copy_base = cost.copy_base
    gen_base = cost.gen_base

    inf = float("inf")
    # dp_closed[k]: cheapest cost of target[k:] when no gen op is open at k; dp_open[k]: when a
    # gen op is open and line k may extend it.
    dp_closed = [inf] * (m + 1)
    dp_open = [inf] * (m + 1)
    dp_closed[m] = dp_open[m] = 0.0
    # Decisions, for rebuilding the program: copy_choice[k] = (i, L) of the best copy at k.
    copy_choice: list[tuple[int, int] | None] = [None] * m
    gen_closed: list[bool] = [False] * m
    gen_open: list[bool] = [False] * m
    # diagonal[i] at row k+1: best (number(i+L) + dp_closed[k+1+L], L) over the run at (i, k+1).
    next_row: dict[int, tuple[float, int]] = {}

    for k in range(m - 1, -1, -1):
        line = target[k]
        row: dict[int, tuple[float, int]] = {}
        best_copy = inf
        best_choice: tuple[int, int] | None = None
        for i in positions.get(line, ()):
            # Copy just this line, or extend the best copy that starts one line further down.
            value, length = number_cost[i + 1] + dp_closed[k + 1], 1
            further = next_row.get(i + 1)
            if further is not None and further[0] <= value:
                value, length = further[0], further[1] + 1
            row[i] = (value, length)
            total = copy_base + number_cost[i + 1] + value
            if total < best_copy or (total == best_copy and best_choice and length > best_choice[1]):
                best_copy, best_choice = total, (i, length)
        next_row = row

        line_cost = cost.gen_line(line)
        extend = line_cost + dp_open[k + 1]
        open_new = gen_base + extend
        copy_choice[k] = best_choice
        # Ties go to the copy: fewer generated characters for the same cost.
        gen_open[k] = extend < best_copy
        dp_open[k] = extend if gen_open[k] else best_copy
        gen_closed[k] = open_new < best_copy
        dp_closed[k] = open_new if gen_closed[k] else best_copy

    ops: list[Op] = []
    k, is_open = 0, False
    while k < m:
        if gen_open[k] if is_open else gen_closed[k]:
            if is_open:
                last = ops[-1]
                assert isinstance(last, Gen)
                ops[-1] = Gen(last.text + target[k])
            else:
                ops.append(Gen(target[k]))
            k, is_open = k + 1, True
        else:
            choice = copy_choice[k]
            assert choice is not None
            i, length = choice
            ops.append(Copy(i + 1, i + length))
            k, is_open = k + length, False
    return Program(ops)


def program_cost(program: Program, cost: CostModel | None = None) -> float:
    """The cost ``oracle`` minimises, for any program (gens counted line by line)."""
    cost = cost or CharCost()
    total = 0.0
    for op in program:
        if isinstance(op, Copy):
            total += cost.copy_base + cost.number(op.start) + cost.number(op.end)
        else:
            total += cost.gen_base + sum(cost.gen_line(line) for line in split_lines(op.text))
    return total
