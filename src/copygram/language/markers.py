"""The search/replace format's marker lines, and which lines a replacement may hold: never the
format's markup (:func:`unheld_markers`, :func:`unheld_marker_starts`, :func:`bars_arrows`)
unless the document holds such a line, and a block may close on the line it ends
(:func:`read_close`) unless a line of the document reads so (:func:`closes_loosely`). The
constraint (:mod:`copygram.constraints.replacement`) and the parser
(:mod:`copygram.language.search_replace`) read the same rules from here, so that they admit the
same programs. Each check is linear in the document."""

from __future__ import annotations

import re
from collections.abc import Sequence

BLOCK_OPEN = "<<<<<<< SEARCH\n"
DIVIDER = "=======\n"
BLOCK_CLOSE = ">>>>>>> REPLACE\n"
MARKER_LINES = (BLOCK_OPEN, DIVIDER, BLOCK_CLOSE)


def search_line(line: str) -> str:
    """How a search part writes document line ``line``: its content, then ``\\n``."""
    return line.rstrip("\r\n") + "\n"


def searchable(line: str) -> bool:
    """Whether document line ``line`` may be part of a search run (a marker line may not)."""
    return search_line(line) not in MARKER_LINES


CLOSE_ARROWS = BLOCK_CLOSE[:7]
"""The closing marker's run of arrows, ``>>>>>>>``."""


def bars_arrows(lines: Sequence[str]) -> bool:
    """Whether a replacement line may not hold :data:`CLOSE_ARROWS` anywhere in a program for the
    document ``lines``: true unless a line of the document holds such a run (a merge conflict, a
    diagram). Such a line is the model closing its block on the line it ends (``} >>>>>>>
    REPLACE`` on a 385-line JavaScript file): the block would run on, and its markup reach the
    file. Linear in the document."""
    return not any(CLOSE_ARROWS in line for line in lines)


MARKER_LIKE = re.compile(r"(<{7}|={7}|>{7})[^\n]*\n?")
"""A line that opens with a marker's run of seven (``fullmatch``): ``======= REPLACE``,
``=======_REPLACE``, ``<<<<<<< SEARCH:``."""


def unheld_marker_starts(lines: Sequence[str]) -> tuple[str, ...]:
    """The runs ``<<<<<<<`` and ``=======`` that a replacement line may not open with
    (:data:`MARKER_LIKE`) in a program for the document ``lines``: those no line of the document
    opens with. Such a line is the model's markup: after writing a unit again, the default
    model went on with ``======= REPLACE`` and the unit once more, or closed its block on
    ``======= REPLACE >>>>>>> REPLACE`` (each of four large edit-kinds rows traced: three that
    add a function, one a constant). The closing run (``>>>>>>>``) has its own rule
    (:func:`bars_arrows`). Linear in the document."""
    held = {found.group(1) for line in lines if (found := MARKER_LIKE.fullmatch(line))}
    return tuple(run for run in (BLOCK_OPEN[:7], DIVIDER[:7]) if run not in held)


LOOSE_CLOSE = re.compile(r"([^\n]*?)([ \t]*)>{3,} ?REPLACE\n")
"""A line that closes a block after its text (``fullmatch``): the text, the spaces before the
arrows. The exact closing marker is one (no text)."""


def closes_loosely(lines: Sequence[str]) -> bool:
    """Whether a block of a program for the document ``lines`` may close on the line it ends
    (:func:`read_close`): true unless a line of the document reads as such a line. Linear in
    the document (the regex runs only on lines that hold ``REPLACE``: parses call this)."""
    return not any(LOOSE_CLOSE.fullmatch(search_line(line)) for line in lines
                   if "REPLACE" in line)


def read_close(line: str, loose: bool) -> str | None:
    """What program line ``line`` (ending ``\\n``) of a replacement closes its block with: ``""``
    for the closing marker, or (``loose``) the text before the arrows of a :data:`LOOSE_CLOSE`
    line, as a replacement line (``""`` where it is blank); ``None`` where the line does not
    close the block. Whether that text may be written is the caller's check."""
    if line == BLOCK_CLOSE:
        return ""
    found = LOOSE_CLOSE.fullmatch(line) if loose else None
    if found is None:
        return None
    return found.group(1) + "\n" if found.group(1) else ""


def unheld_markers(lines: Sequence[str]) -> tuple[str, ...]:
    """The marker lines a replacement may not hold in a program for the document ``lines``:
    the opening marker and the divider, but for one that a line of the document reads as (a
    reStructuredText underline ``=======``, a file with a merge conflict): a replacement line
    that the document has not is the model's markup leaking into the file. Linear in the
    document."""
    held = {search_line(line) for line in lines}
    return tuple(marker for marker in (BLOCK_OPEN, DIVIDER) if marker not in held)


__all__ = ["BLOCK_CLOSE", "BLOCK_OPEN", "CLOSE_ARROWS", "DIVIDER", "LOOSE_CLOSE", "MARKER_LIKE",
           "MARKER_LINES", "bars_arrows", "closes_loosely", "read_close", "search_line",
           "searchable", "unheld_marker_starts", "unheld_markers"]
