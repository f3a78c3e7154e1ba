"""Splitting a document into lines that keep their endings.

A line is its content plus its terminator: ``\\n``, ``\\r\\n`` or ``\\r``; the last line may have
none. Joining the lines gives back the document exactly. Unlike ``str.splitlines`` this does not
break on form feeds, vertical tabs or Unicode separators, since a model and a diff see those as text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(document: str) -> list[str]:
    """The lines of ``document``, endings kept; ``"".join(split_lines(d)) == d``."""
    return _LINE.findall(document)


def count_lines(document: str) -> int:
    """How many lines :func:`split_lines` would return, without building them."""
    if not document:
        return 0
    terminators = document.count("\n") + document.count("\r") - document.count("\r\n")
    return terminators + (0 if document[-1] in "\r\n" else 1)


def ended(lines: Sequence[str]) -> list[str]:
    """``lines`` with a line ending on the last one (a document's last line may have none)."""
    if lines and not lines[-1].endswith(("\n", "\r")):
        return [*lines[:-1], lines[-1] + "\n"]
    return list(lines)


def inserted(lines: Sequence[str], at: int, piece: Sequence[str]) -> str:
    """The text of ``lines`` with ``piece`` put after the first ``at`` of them, the line before
    it and its own last line given an ending where they have none."""
    return "".join([*ended(lines[:at]), *ended(piece), *lines[at:]])


def leading_space(line: str) -> str:
    """``line``'s indentation: its whitespace before the first other character."""
    return line[:len(line) - len(line.lstrip())]


def merge_spans(spans: Iterable[tuple[int, int]], gap: int = 0) -> tuple[tuple[int, int], ...]:
    """Line ranges (1-based, inclusive) ``spans`` sorted, those that overlap, touch or lie at
    most ``gap`` lines apart joined."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1] + 1 + gap:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return tuple(merged)
