"""Named types shared across copygram."""

from __future__ import annotations

from typing import NamedTuple, NewType

TokenId = NewType("TokenId", int)
"""A token id in a backend's vocabulary."""


class LineRange(NamedTuple):
    """Lines ``start``..``end`` of a document, 1-based and inclusive."""

    start: int
    end: int

    @property
    def n_lines(self) -> int:
        return self.end - self.start + 1


Reach = tuple[tuple[tuple[int, int], ...], ...]
"""What a program must reach (``touch_named``): one entry per requirement, each the line ranges
(1-based, inclusive) of which some block must overlap one; every requirement must be met."""

Scope = tuple[tuple[int, int], ...]
"""Where a program's blocks may edit (a rename: its definition and uses): line ranges (1-based,
inclusive) one of which every block must overlap; empty: anywhere."""

PROSE = "text"
"""The ``language`` of a document that is no code the checks read (prose, Markdown): the marker
check alone, and its edits located by what the instruction quotes
(:mod:`copygram.language.passages`)."""

MAX_REACH = 3
"""The most requirements a :data:`Reach` holds: a constraint's rules come once per set of
requirements not yet met (``2 ** n - 1`` copies), so three names listed together cost 7."""
