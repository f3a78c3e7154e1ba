"""Verified copies (``verify_copies``): a copy keeps the lines the model, reading them, would have
written itself.

When a copy closes, its lines go into the KV cache in one forward (the splice). That forward can
also return the model's next-token logits at any row, for the price of reading them out; the
rows before the first tokens of each copied line but the first say what the model, having read
the copy so far, would write next. Where its greedy choice is not the copied token, the model
would have written that line differently (a copy that runs one line too far takes in the line
the model is about to rewrite): the copy is cut before that line, its tag rewritten, and the
model goes on from there, writing the line its own way. This module finds the rows and the cut;
:func:`copygram.decode.verify.splice_copy` rewrites the tag.

Which tokens of a line are checked: those up to and including the first that holds more than
whitespace (an indentation token says nothing about the line), at most :data:`CHECKED_TOKENS`.
A line that does not begin at a token boundary (a token spans the line break, as ``"\\n\\n"``
does before a blank line) is not checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from copygram.language.types import LineRange

CHECKED_TOKENS = 4
"""Most tokens checked at the start of a copied line."""


@dataclass(frozen=True)
class Check:
    """Row ``row`` of the splice forward should choose ``token``, the copy's next token, which
    belongs to copied line ``line``."""

    row: int
    token: int
    line: int


def copy_checks(copied: Sequence[int], token_bytes: Sequence[bytes], lines: Sequence[str],
                lines_copied: LineRange, offset: int) -> list[Check]:
    """The checks of a copy of ``lines_copied`` whose tokens ``copied`` follow ``offset`` other
    tokens in the forward, in row order. O(tokens of the copy)."""
    starts: dict[int, int] = {}  # byte offset in the copy where a line starts -> its number
    at = 0
    for number in range(lines_copied.start, lines_copied.end):
        at += len(lines[number - 1].encode("utf-8"))
        starts[at] = number + 1
    checks: list[Check] = []
    at = 0
    line, checked, done = 0, 0, True
    for index, token in enumerate(copied):
        if at in starts and index > 0:
            line, checked, done = starts[at], 0, False
        if not done:
            checks.append(Check(offset + index - 1, token, line))
            checked += 1
            done = checked >= CHECKED_TOKENS or bool(token_bytes[token].strip())
        at += len(token_bytes[token])
    return checks


def first_disagreement(checks: Sequence[Check], rows: npt.NDArray[np.float32]) -> int | None:
    """The first line at which the greedy choice of a checked row (``rows[i]`` holds the logits
    of ``checks[i].row``) is not the copied token; ``None`` where the model agrees throughout."""
    for check, logits in zip(checks, rows, strict=False):
        if int(np.argmax(logits)) != check.token:
            return check.line
    return None


__all__ = ["CHECKED_TOKENS", "Check", "copy_checks", "first_disagreement"]
