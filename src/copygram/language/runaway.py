"""A head block that ran on: its replacement wrote its unit, then went on to type the units
after it again, line for line, as the document has them.

A small model asked to fix one function of a long file sometimes writes the function, then,
instead of closing the block, goes on copying the file (measured: Qwen2.5-Coder-1.5B on a
363-line Python file fixed ``is_sorted`` and went on into ``sorted_list_sum``; docs/quality.md).
Read as written, such a block defines those units twice, and it never ends by itself.
:class:`~copygram.decode.budgets.RunawayGuard` stops the run once the replacement has typed
the first lines of the next unit as the document has them; :func:`close_runaway` then reads the
block as what its text says: its unit becomes the lines written before the next unit's first
line, and the lines it copied after that stay as they are. The file this gives is the one the
model's text spells, its copied lines read over the document's own (they are the same lines),
so nothing is guessed; what the model would have written after the stop is not known, and a
result that misses what the instruction asks is still redone (:mod:`copygram.decode.checked`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from copygram.errors import ProgramSyntaxError
from copygram.language.focus import ELISION
from copygram.language.search_replace import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    DIVIDER,
    find_run,
    parse_blocks,
    search_line,
)
from copygram.language.units import unit_end

RUNAWAY_LINES = 3
"""Lines of the next unit, from its first, that a head block's replacement types as the
document has them before the block is read as having run on."""


def next_unit(lines: Sequence[str], end: int) -> int | None:
    """The first non-blank line after line ``end`` (1-based): where the unit after the one
    ending at ``end`` starts; ``None`` at the document's end."""
    return next((k for k in range(end + 1, len(lines) + 1) if lines[k - 1].strip()), None)


def close_runaway(text: str, lines: Sequence[str], min_lines: int = RUNAWAY_LINES,
                  fences: bool = False) -> str | None:
    """The head-block program ``text`` (complete blocks, then one open block, as a run stopped
    by the runaway guard leaves it) with its open block closed where its replacement began to
    type the next unit again (or wrote an elision line of the prompt's view or, with
    ``fences``, a code fence: :func:`elides`; or,
    past units it left out, a later unit's first ``min_lines`` lines as the document has them):
    the replacement's complete lines before that unit's first line (that elision line), blank
    lines at their end left out (the document keeps its own), then the closing marker.
    ``None`` where the open block did not run on so: its text after that point is not the
    document's, line for line, for at least ``min_lines`` lines from the next unit's first; it
    wrote nothing before it; or the program does not read as blocks of ``lines``. Linear in
    the program and the document, but for the replacement's lines where the next unit's first
    line occurs in it more than once (each such place is compared)."""
    opened = text.rfind(BLOCK_OPEN)
    if opened < 0 or (opened and text[opened - 1] != "\n"):
        return None
    before, rest = text[:opened], text[opened + len(BLOCK_OPEN):]
    head, newline, after = rest.partition("\n")
    if not newline or not after.startswith(DIVIDER):
        return None
    try:
        blocks = parse_blocks(before, lines, heads=True)
    except ProgramSyntaxError:
        return None
    start = find_run(lines, [search_line(head)], blocks[-1].search.end + 1 if blocks else 1)
    following = None if start is None else next_unit(lines, unit_end(lines, start))
    written = after[len(DIVIDER):]
    replacement = written[: written.rfind("\n") + 1].splitlines(keepends=True)
    # An elision line of the prompt's view (language.focus): the model went on to the next part
    # it was shown, so its unit ended there.
    cut = next((i for i, line in enumerate(replacement) if elides(line, lines, fences)), None)
    if cut is None and following is not None:
        cut = _retyped_from(replacement, lines, following, min_lines)
    if cut is None and start is not None:
        # A later unit's first lines as the document has them, past units it left out (a
        # view's elided runs, the comment above the unit).
        cut = _later_unit(replacement, lines, unit_end(lines, start), min_lines)
    if cut is None:
        return None
    kept = replacement[:cut]
    while kept and not kept[-1].strip():
        kept.pop()
    if not kept:
        return None
    return before + BLOCK_OPEN + head + "\n" + DIVIDER + "".join(kept) + BLOCK_CLOSE


def elides(line: str, lines: Sequence[str], fences: bool = False) -> bool:
    """Whether replacement ``line`` ends what the model meant to write in the file
    (:func:`ends_answer`) and no line of the document ``lines`` is that line."""
    text = line.rstrip("\r\n")
    return ends_answer(text, fences) and all(own.rstrip("\r\n") != text for own in lines)


_FENCE = re.compile(r"^[ \t]*```[\w+#.-]*[ \t]*$")


def ends_answer(text: str, fences: bool) -> bool:
    """Whether a replacement line's ``text`` (no line end) is no line of the file but the end of
    what the model was shown or of its answer: an elision line of a view
    (:data:`~copygram.language.focus.ELISION`), or, with ``fences`` (a code file), a Markdown
    code fence (```` ``` ```` or ```` ```python ````): on a 1,319-line Python rename the default
    model's last block ended in ```` ```python ````, the start of a chat answer's next code
    block, and the file no longer parsed."""
    return bool(ELISION.match(text)) or (fences and bool(_FENCE.match(text)))


def _later_unit(replacement: Sequence[str], lines: Sequence[str], after: int,
                min_lines: int) -> int | None:
    """The first index of ``replacement`` from which ``min_lines`` lines are the first lines
    of a unit of ``lines`` that starts after line ``after``, as the document has them;
    ``None`` where there is none. Linear in both, with a dictionary of the lines."""
    where: dict[str, list[int]] = {}
    for number in range(after + 1, len(lines) + 1):
        where.setdefault(search_line(lines[number - 1]), []).append(number)
    for cut in range(len(replacement) - min_lines + 1):
        for start in where.get(search_line(replacement[cut]), ()):
            if (unit_end(lines, start) > start and start - 1 + min_lines <= len(lines)
                    and all(search_line(replacement[cut + k]) == search_line(lines[start - 1 + k])
                            for k in range(min_lines))):
                return cut
    return None


def _retyped_from(replacement: Sequence[str], lines: Sequence[str], following: int,
                  min_lines: int) -> int | None:
    """The first index of ``replacement`` from which every line is the document's, line
    ``following`` on, for at least ``min_lines`` lines; ``None`` where there is none."""
    for cut, line in enumerate(replacement):
        count = len(replacement) - cut
        if (count >= min_lines and following - 1 + count <= len(lines)
                and search_line(line) == search_line(lines[following - 1])
                and all(search_line(replacement[cut + k]) == search_line(lines[following - 1 + k])
                        for k in range(count))):
            return cut
    return None


__all__ = ["RUNAWAY_LINES", "close_runaway", "elides", "ends_answer", "next_unit"]
