"""Writing edits as search/replace blocks: :func:`render` (blocks of the changed lines, the
inverse of :func:`copygram.language.search_replace.parse`), :func:`render_heads` (given blocks as
head blocks) and :func:`render_head_program` (any ordered edit as head blocks, each replacing the
smallest unit that holds its change). For tests, worked examples and the public
:func:`copygram.render`; a model's blocks are read, never rendered, on the way to the file."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from copygram.errors import CopygramError
from copygram.language.lines import split_lines
from copygram.language.ops import Program
from copygram.language.resolve import resolve
from copygram.language.search_replace import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    DIVIDER,
    Block,
    find_run,
    head_run,
    may_head,
    parse,
    search_line,
)
from copygram.language.types import LineRange
from copygram.language.units import unit_end

__all__ = ["render", "render_head_program", "render_heads"]


def _target(program: Program, split: list[str]) -> list[str]:
    """The lines of ``program``'s result; :class:`CopygramError` where it changes whether the
    document ends with a line ending, which blocks keep."""
    target = split_lines(resolve(program, split))
    ends_open = bool(split) and split[-1] == split[-1].rstrip("\r\n")
    if target and ends_open != (target[-1] == target[-1].rstrip("\r\n")):
        raise CopygramError("search/replace blocks keep whether the document ends with a line "
                            "ending; this edit changes it")
    return target


def _replacement(text: str, end: int, split: Sequence[str]) -> str:
    """``text`` (result lines) as a replacement that ends at document line ``end``: ``\\n``
    endings, and one where the run reaches a last line that has none (module doc of
    :mod:`copygram.language.search_replace`)."""
    replacement = text.replace("\r\n", "\n")
    if end == len(split) and split[-1] == split[-1].rstrip("\r\n") and replacement:
        replacement += "\n"
    return replacement


def render(program: Program, lines: Sequence[str] | str) -> str:
    """Search/replace text that :func:`~copygram.language.search_replace.parse` reads back as an
    edit with the same result as ``program`` (the blocks come from a line diff of the document
    and the result, not from the program's ops).

    A stretch whose run would be empty (a pure insertion), or whose run occurs earlier after the
    cursor, takes in neighbouring unchanged lines on both sides of the divider. Raises
    :class:`CopygramError` for an edit the blocks cannot spell: a changed line that reads like a
    marker line, or a change of whether the document ends with a line ending."""
    split = split_lines(lines) if isinstance(lines, str) else list(lines)
    target = _target(program, split)
    n = len(split)
    matcher = difflib.SequenceMatcher(a=split, b=target, autojunk=False)
    stretches = [(i1 + 1, i2, "".join(target[j1:j2]))
                 for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
    keys = [search_line(line) for line in split]
    out: list[str] = []
    cursor = 1
    while stretches:
        start, end, text = stretches.pop(0)
        while end < start or find_run(split, keys[start - 1 : end], cursor, keys) != start:
            if end < n and (end < start or start == cursor):
                end += 1
                text += split[end - 1]
            elif start > cursor:
                start -= 1
                text = split[start - 1] + text
            else:
                raise CopygramError("this edit cannot be written as search/replace blocks: "
                                    "its changed lines read like a marker line")
            # A stretch grown up to the next one takes it in.
            if stretches and end + 1 >= stretches[0][0]:
                _, next_end, next_text = stretches.pop(0)
                end, text = max(end, next_end), text + next_text
        out.append(BLOCK_OPEN + "".join(keys[start - 1 : end]) + DIVIDER
                   + _replacement(text, end, split) + BLOCK_CLOSE)
        cursor = end + 1
    return "".join(out)


def render_heads(blocks: Sequence[Block], lines: Sequence[str] | str) -> str:
    """The text of ``blocks`` as head blocks (``search_scope = "head"``), which
    ``parse_blocks(text, lines, heads=True)`` reads back as ``blocks``: each block's run must be
    a whole unit (:func:`~copygram.language.units.unit_end`) whose head is not met earlier after
    the previous block; else :class:`CopygramError`. Replacements are written as given."""
    split = split_lines(lines) if isinstance(lines, str) else list(lines)
    keys = [search_line(line) for line in split]
    out: list[str] = []
    cursor = 1
    for block in blocks:
        start = block.search.start
        if (find_run(split, keys[start - 1 : start], cursor, keys) != start
                or not may_head(split[start - 1])):
            raise CopygramError(f"line {start} cannot head a block after line {cursor - 1}: "
                                "it reads like a marker line, only closes brackets, or an "
                                "earlier line reads like it")
        if head_run(split, start, block.replacement) != block.search:
            raise CopygramError(f"lines {block.search.start}-{block.search.end} are not the unit "
                                f"that line {start} opens (it ends at line "
                                f"{unit_end(split, start)})")
        out.append(BLOCK_OPEN + keys[start - 1] + DIVIDER + block.replacement + BLOCK_CLOSE)
        cursor = unit_end(split, start) + 1
    return "".join(out)


def render_head_program(program: Program, lines: Sequence[str] | str) -> str:
    """Head blocks (``search_scope = "head"``, program mode's default route) that
    ``parse(text, lines, heads=True)`` reads back as an edit with the same result as
    ``program``: each change of a line diff goes into the smallest unit that holds it (the
    unit's first line heads the block, the block writes the whole unit, changed; a line inserted
    between units joins the unit after it or before it), and changes in one unit share its
    block. Raises :class:`CopygramError` for an edit head blocks cannot spell: a change to the
    lines between units (blank lines, say), which no head names, or a unit whose head reads
    like an earlier line."""
    split = split_lines(lines) if isinstance(lines, str) else list(lines)
    target = _target(program, split)
    # Each change as [doc start, doc end, result start, result end] (0-based, ends exclusive);
    # the lines between changes are equal.
    changes = [[i1, i2, j1, j2] for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
        a=split, b=target, autojunk=False).get_opcodes() if tag != "equal"]
    keys = [search_line(line) for line in split]

    def to_target(boundary: int, last: bool) -> int:
        # The result's line boundary that the document's ``boundary`` (lines before it) maps
        # to: inside equal lines one, at the edge of a change the first (a block's start) or
        # the last (its end), so that an insertion there joins the block.
        found = [j1 for i1, _, j1, _ in changes if i1 == boundary]
        found += [j2 for _, i2, _, j2 in changes if i2 == boundary]
        before = [c for c in changes if c[1] <= boundary]
        found.append(before[-1][3] + boundary - before[-1][1] if before else boundary)
        return max(found) if last else min(found)

    def head_of(low: int, high: int, cursor: int) -> int | None:
        # The smallest unit at or after ``cursor`` that holds lines low..high (1-based).
        return next((u for u in range(low, cursor - 1, -1)
                     if unit_end(split, u) >= high and may_head(split[u - 1])
                     and find_run(split, keys[u - 1 : u], cursor, keys) == u), None)

    def slide(k: int) -> bool:
        # Move a pure insertion or deletion one line down, where the result is the same (the
        # diff's alignment among equal lines is arbitrary): toward the next unit's head.
        i1, i2, j1, j2 = changes[k]
        limit = changes[k + 1][0] if k + 1 < len(changes) else len(split)
        insertion = i1 == i2 and i1 < limit and j2 < len(target) and target[j1] == target[j2]
        deletion = j1 == j2 and i2 < limit and split[i1] == split[i2]
        if insertion or deletion:
            changes[k] = [i1 + (not insertion), i2 + 1, j1 + (not deletion), j2 + 1]
        return insertion or deletion

    def cover(k: int, cursor: int) -> int:
        # The head of the smallest unit that holds change ``k`` (slid down where it must be),
        # else of the unit that holds its first line (the rest goes to the units after it).
        while True:
            i1, i2 = changes[k][:2]
            wanted = [(i1 + 1, i2), (i1 + 1, i1 + 1)] if i2 > i1 else [(i1 + 1, i1 + 1),
                                                                      (i1, i1)]
            for low, high in wanted:
                if 1 <= low <= len(split) and (head := head_of(low, high, cursor)) is not None:
                    return head
            if not slide(k):
                raise CopygramError(f"this edit cannot be written as head blocks: lines "
                                    f"{i1 + 1}-{max(i2, i1 + 1)} lie in no unit that a head "
                                    f"after line {cursor - 1} names")

    blocks: list[Block] = []
    cursor, k = 1, 0
    while k < len(changes):
        head = cover(k, cursor)
        end = unit_end(split, head)
        stop = None  # where in the result this block ends, if a change runs past its unit
        # The change, and every later one inside the unit or inserted right after it, go into
        # this block; one that runs past it asks for a larger unit, or leaves its rest (deleted
        # lines) to the units after it.
        while k < len(changes) and (changes[k][0] < end or changes[k][:2] == [end, end]):
            _, i2, _, j2 = changes[k]
            if i2 > end:
                larger = head_of(head, i2, cursor)
                if larger is None:
                    changes[k], stop = [end, i2, j2, j2], j2
                    break
                head, end = larger, unit_end(split, larger)
            k += 1
        last = to_target(end, True) if stop is None else stop
        text = "".join(target[to_target(head - 1, False):last])
        blocks.append(Block(LineRange(head, end), _replacement(text, end, split)))
        cursor = end + 1
    rendered = render_heads(blocks, split)
    if resolve(parse(rendered, split, heads=True), split) != "".join(target):
        raise CopygramError("this edit cannot be written as head blocks: a unit's replacement "
                            "reads as a different run (it leaves the unit open, or only its "
                            "header)")
    return rendered
