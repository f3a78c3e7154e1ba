"""Search/replace blocks: edit programs whose copies are implicit and anchored by content.

A program is a sequence of blocks, in document order::

    <<<<<<< SEARCH
    lines of the document, exactly as they are (a contiguous run)
    =======
    the lines that replace them
    >>>>>>> REPLACE

Everything between blocks is copied unchanged, so the program names no line numbers: each search
part says by its content where the edit is, and a constraint
(:mod:`copygram.constraints.search_replace`) admits only runs of real lines at or after the
cursor (the line after the previous block's run). This is the edit format small models know
from Aider and from diffs; it fixes what numbered copies get wrong (spans one line off, the rest
of the file dropped). As a :class:`~copygram.language.ops.Program` a block program is the copies
between blocks and one gen per block, so the resolver and the stats are the tag syntaxes'.

Lines. Every program line ends with ``\\n``. A search line is a document line's content with
``\\n`` as its ending (whatever the document uses), so the document's last line without an
ending is searched as ``content\\n`` too. A replacement is written with ``\\n`` endings; resolved,
each bare ``\\n`` becomes the line ending of the block's first search line, and where the run
reaches a last line that has no ending, the replacement's final ``\\n`` is dropped. A document
line that reads exactly like a marker line (``=======``) never belongs to a search run: the
marker ends the run, so the text of a program has one reading. A replacement holds no line that
reads as the opening marker or the divider unless the document has such a line
(:func:`unheld_markers`) or opens with the run of either (``======= REPLACE``) unless a line of
the document opens so (:func:`unheld_marker_starts`), and no line that holds the closing
marker's ``>>>>>>>`` after other text unless a line of the document holds that run
(:func:`bars_arrows`): a program that would write the format's markup into the file is
refused.

A block may close on the line it ends (:func:`read_close`): ``  } >>> REPLACE`` (three or more
arrows, the text before them holding no ``>``) reads as the line ``  }`` and the closing marker.
Small models write that on long files and, held to the marker on its own line, type on past it
(a 385-line JavaScript file). Not where a line of the document reads so (:func:`closes_loosely`):
then only the marker line closes.

Where a run of lines occurs more than once after the cursor, a block means its first occurrence
(Aider's rule; it leaves every later block the most room, so a program that the constraint
accepted always reads this way).

Heads (``search_scope = "head"``): a search part holds one line, the first line of a function or
paragraph (its head), and the block replaces the whole unit that the head opens
(:func:`copygram.language.units.unit_end`: found by indentation and brackets). A model then
names the place of a change in one line and writes the unit once, changed, instead of writing
it twice (searched and replaced); the cost is that a block can only replace whole units. A
line that only closes brackets (``}``, ``});``) is no head (:func:`may_head`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from copygram.errors import ProgramSyntaxError
from copygram.language.lines import split_lines
from copygram.language.markers import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    CLOSE_ARROWS,
    DIVIDER,
    LOOSE_CLOSE,
    MARKER_LIKE,
    MARKER_LINES,
    bars_arrows,
    closes_loosely,
    read_close,
    search_line,
    searchable,
    unheld_marker_starts,
    unheld_markers,
)
from copygram.language.ops import Copy, Gen, Program
from copygram.language.types import LineRange
from copygram.language.units import (
    closing_line,
    header_end,
    leaves_open,
    opens_body,
    unit_end,
)

SEARCH_REPLACE = "search_replace"
"""The syntax name (``syntax = "search_replace"`` in a session config)."""

PLAN_PREFIX = "Plan:"
"""A program may open with one line starting with this (``search_plan``): the model's own words
on what changes, written before the blocks; it is not part of the edit."""
MAX_PLAN_CHARS = 300


_PROGRAM_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
_BARE_NEWLINE = re.compile(r"(?<!\r)\n")


@dataclass(frozen=True)
class Block:
    """One block: the document lines ``search`` (1-based, inclusive) give way to
    ``replacement`` (as written in the program: ``\\n`` endings)."""

    search: LineRange
    replacement: str


_CLOSER_CHARS = frozenset(")]};,")


def may_head(line: str) -> bool:
    """Whether document line ``line`` may be a head block's head: not a line that only closes
    brackets (``}``, ``});``). Such a line opens nothing, so its block replaces that line
    alone: a Java program headed a block on a lone ``}`` and appended two more, a C++ one deleted
    one closing line after another until the repeat guard stopped it."""
    stripped = line.strip()
    return not stripped or not set(stripped) <= _CLOSER_CHARS


def _error(message: str, text: str, offset: int) -> ProgramSyntaxError:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return ProgramSyntaxError(f"not a valid search/replace program: {message}; see "
                              "docs/language.md", line=line, column=column, text=text)


def find_run(lines: Sequence[str], written: Sequence[str], cursor: int,
             keys: Sequence[str] | None = None) -> int | None:
    """The first line number ``s >= cursor`` where document lines ``s..`` read as the search
    lines ``written``, with no marker line among them; ``None`` if there is none. ``keys``:
    :func:`search_line` of every line, where the caller keeps them (else computed here)."""
    keys = [search_line(line) for line in lines] if keys is None else keys
    size = len(written)
    for start in range(cursor - 1, len(lines) - size + 1):
        if list(keys[start : start + size]) == list(written) and all(
                searchable(line) for line in lines[start : start + size]):
            return start + 1
    return None


def parse_blocks(text: str, lines: Sequence[str], *, heads: bool = False) -> list[Block]:
    """The blocks of program ``text`` against the document ``lines`` (split with endings); with
    ``heads``, each search part is one head line and its block's run the unit it opens (module
    doc).

    Raises :class:`~copygram.errors.ProgramSyntaxError` where the text is not a sequence of
    blocks, or where a search part is not a run of document lines (with ``heads``: one line)
    after the previous block's.
    """
    program_lines: list[str] = _PROGRAM_LINE.findall(text)
    unheld, arrows_barred = unheld_markers(lines), bars_arrows(lines)
    loose, starts = closes_loosely(lines), unheld_marker_starts(lines)

    def marker_like(line: str) -> bool:
        found = MARKER_LIKE.fullmatch(line)
        return found is not None and found.group(1) in starts
    blocks: list[Block] = []
    cursor, at, offset = 1, 0, 0
    if program_lines and program_lines[0].startswith(PLAN_PREFIX):  # words, not an edit
        at, offset = 1, len(program_lines[0])

    def take() -> str:
        nonlocal at, offset
        line = program_lines[at]
        at += 1
        offset += len(line)
        return line

    while at < len(program_lines):
        block_offset = offset
        if take() != BLOCK_OPEN:
            raise _error(f"expected {BLOCK_OPEN.strip()!r} to open a block", text, block_offset)
        written: list[str] = []
        while at < len(program_lines) and program_lines[at] != DIVIDER:
            written.append(take())
        if at == len(program_lines):
            raise _error(f"the block has no {DIVIDER.strip()!r} line", text, offset)
        if not written:
            raise _error("the search part is empty: it must hold at least one line of the "
                         "document", text, offset)
        if heads and len(written) > 1:
            raise _error("with search_scope \"head\" a search part is one line: the first line "
                         "of the function or paragraph that the block replaces", text,
                         block_offset)
        start = find_run(lines, written, cursor)
        if start is None:
            raise _error(f"the search part is not a run of document lines at or after line "
                         f"{cursor}", text, block_offset)
        if heads and not may_head(lines[start - 1]):
            raise _error(f"the head {written[0].strip()!r} only closes brackets: a head is the "
                         "first line of the function or paragraph that the block replaces", text,
                         block_offset)
        take()  # the divider
        replaced: list[str] = []
        while at < len(program_lines):
            ends = read_close(program_lines[at], loose)
            if ends is not None:
                if ">" in ends or ends in unheld or marker_like(ends):
                    raise _error(f"the block closes after the text {ends.strip()!r}: a closing "
                                 "line's text may hold no '>' and read as no marker line", text,
                                 offset)
                replaced.append(ends)
                break
            if program_lines[at] in unheld or marker_like(program_lines[at]):
                raise _error(f"the replacement holds the marker line "
                             f"{program_lines[at].strip()!r}, which no line of the document "
                             "reads as: the format's markup would be written into the file",
                             text, offset)
            if arrows_barred and CLOSE_ARROWS in program_lines[at]:
                raise _error(f"the replacement line {program_lines[at].strip()!r} holds the "
                             f"closing marker's {CLOSE_ARROWS!r}, which no line of the document "
                             f"holds: a block closes with {BLOCK_CLOSE.strip()!r} on a line of "
                             "its own", text, offset)
            replaced.append(take())
        if at == len(program_lines):
            raise _error(f"the block has no {BLOCK_CLOSE.strip()!r} line", text, offset)
        take()  # the closing line
        end = unit_end(lines, start) if heads else start + len(written) - 1
        replacement = "".join(replaced)
        blocks.append(Block(head_run(lines, start, replacement) if heads
                            else LineRange(start, end), replacement))
        cursor = end + 1
    return blocks


def head_run(lines: Sequence[str], start: int, replacement: str) -> LineRange:
    """The lines a head block at line ``start`` replaces with ``replacement``: the unit that
    the line opens, but for its closing line where the replacement leaves the unit open, and
    only its header where the replacement stops where the body would begin (module doc of
    :mod:`copygram.language.units`); the next block's head comes after the whole unit either
    way."""
    if opens_body(replacement, lines[start - 1]):
        return LineRange(start, header_end(lines, start))
    end = unit_end(lines, start)
    if closing_line(lines, start, end) and leaves_open(replacement, lines[start - 1]):
        end -= 1
    return LineRange(start, end)


def merge_retyped(blocks: Sequence[Block], lines: Sequence[str]) -> list[Block]:
    """``blocks`` with each replacement's retyped neighbours taken into its run.

    A model that picks a short search part often writes, in the replacement, the unchanged lines
    right after its run (or right before it) again; read as written, the edit duplicates them.
    Here, where a replacement ends with the ``k`` document lines that follow its run (as a
    search part writes them), the run grows by those ``k`` lines, and where it starts with the
    ``k`` lines before the run, the run grows back by them, never into another block's run.
    Other lines of the replacement are left as they are; a replacement made only of lines that
    could be either neighbours is read as retyping those after the run first. The cost: an edit
    that means to
    duplicate the lines next to a block (insert a copy of the following line before it) is
    read as not duplicating them. Linear in the replacement's lines per block."""
    keys = [search_line(line) if searchable(line) else None for line in lines]
    merged: list[Block] = []
    for index, block in enumerate(blocks):
        written = _PROGRAM_LINE.findall(block.replacement)
        floor = merged[-1].search.end + 1 if merged else 1
        ceiling = (blocks[index + 1].search.start - 1 if index + 1 < len(blocks)
                   else len(lines))
        start, end = block.search.start, block.search.end
        # The most lines k that the replacement ends with and that follow the run (k = 0: none).
        after = next((k for k in range(min(len(written), ceiling - end), 0, -1)
                      if written[len(written) - k:] == keys[end : end + k]), 0)
        # ... and that it starts with and that come before the run, not counting those.
        before = next((k for k in range(min(len(written) - after, start - floor), 0, -1)
                       if written[:k] == keys[start - 1 - k : start - 1]), 0)
        merged.append(Block(LineRange(start - before, end + after), block.replacement)
                      if after or before else block)
    return merged


def _resolved_replacement(block: Block, lines: Sequence[str]) -> str:
    first = lines[block.search.start - 1]
    ending = first[len(first.rstrip("\r\n")):] or "\n"
    text = _BARE_NEWLINE.sub(ending.replace("\\", "\\\\"), block.replacement)
    last = lines[block.search.end - 1]
    if block.search.end == len(lines) and last == last.rstrip("\r\n"):
        text = text.removesuffix(ending)
    return text


def leaves_unchanged(block: Block, lines: Sequence[str]) -> bool:
    """Whether ``block``, resolved against the document ``lines``, gives back the lines it
    replaces (a no-op). Linear in the block."""
    run = lines[block.search.start - 1 : block.search.end]
    return _resolved_replacement(block, lines) == "".join(run)


def blocks_program(blocks: Sequence[Block], lines: Sequence[str]) -> Program:
    """The :class:`Program` of ``blocks``: a copy of the lines between blocks (and after the
    last), a gen of each replacement (line endings as the module doc says)."""
    ops: list[Copy | Gen] = []
    cursor = 1
    for block in blocks:
        if block.search.start > cursor:
            ops.append(Copy(cursor, block.search.start - 1))
        text = _resolved_replacement(block, lines)
        if text:
            ops.append(Gen(text))
        cursor = block.search.end + 1
    if cursor <= len(lines):
        ops.append(Copy(cursor, len(lines)))
    return Program(ops)


def parse(text: str, lines: Sequence[str] | str, *, merge: bool = False,
          heads: bool = False) -> Program:
    """The program that search/replace ``text`` spells for the document ``lines`` (text, or
    lines with endings); raises :class:`~copygram.errors.ProgramSyntaxError`. ``merge``: read
    the blocks through :func:`merge_retyped` first; ``heads``: search parts are head lines
    (module doc)."""
    split = split_lines(lines) if isinstance(lines, str) else lines
    blocks = parse_blocks(text, split, heads=heads)
    return blocks_program(merge_retyped(blocks, split) if merge else blocks, split)


__all__ = [
    "BLOCK_CLOSE",
    "BLOCK_OPEN",
    "CLOSE_ARROWS",
    "DIVIDER",
    "LOOSE_CLOSE",
    "MARKER_LIKE",
    "MARKER_LINES",
    "MAX_PLAN_CHARS",
    "PLAN_PREFIX",
    "SEARCH_REPLACE",
    "Block",
    "bars_arrows",
    "blocks_program",
    "closes_loosely",
    "find_run",
    "head_run",
    "leaves_unchanged",
    "may_head",
    "merge_retyped",
    "parse",
    "parse_blocks",
    "read_close",
    "search_line",
    "searchable",
    "unheld_marker_starts",
    "unheld_markers",
]
