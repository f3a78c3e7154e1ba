"""Which lines of a document an edit changed, read off a line diff: what the miss check
(:mod:`copygram.language.targets`) asks of every definition an instruction names."""

from __future__ import annotations

import difflib
from collections.abc import Sequence


def changed_ranges(before: Sequence[str], after: Sequence[str]) -> list[tuple[int, int]]:
    """The edit's changes as ``(i1, i2)`` ranges of ``before``'s 0-based lines (``i1 == i2``:
    lines inserted before line ``i1``); a change of blank lines or trailing spaces alone is no
    change (it reaches nothing an instruction names)."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    return [(i1, i2) for tag, i1, i2, j1, j2 in matcher.get_opcodes()
            if tag != "equal" and meaningful(before[i1:i2]) != meaningful(after[j1:j2])]


def meaningful(lines: Sequence[str]) -> list[str]:
    """``lines`` without blank lines and trailing spaces: what a change must alter to count."""
    return [line.rstrip() for line in lines if line.strip()]


def touches(changed: Sequence[tuple[int, int]], start: int, end: int, *,
            after: bool = True) -> bool:
    """Whether a change falls in lines ``start..end`` (1-based): a changed line among them, or
    lines inserted between two of them or (``after``) right after the last."""
    first, last = start - 1, end - 1  # 0-based, inclusive
    for i1, i2 in changed:
        if i1 == i2 and first < i1 <= last + after:
            return True
        if i1 < i2 and i1 <= last and i2 > first:
            return True
    return False


__all__ = ["changed_ranges", "meaningful", "touches"]
