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
