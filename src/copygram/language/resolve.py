"""The resolver: a pure function (program, document) -> edited document."""

from __future__ import annotations

from copygram.errors import RangeError
from copygram.language.lines import split_lines
from copygram.language.ops import Copy, Program


def check_ranges(program: Program, n_lines: int) -> None:
    """Raise :class:`RangeError` for the first copy outside 1..n_lines or with start > end."""
    for index, op in enumerate(program):
        if isinstance(op, Copy) and not 1 <= op.start <= op.end <= n_lines:
            if op.start > op.end:
                why = f"its start {op.start} is after its end {op.end}"
            else:
                why = f"the document has lines 1..{n_lines}"
            raise RangeError(
                f"op #{index + 1} {op!r} is not a valid range: {why}. "
                "Copy ranges must satisfy 1 <= start <= end <= n.",
                op=op,
                n_lines=n_lines,
            )


def resolve(program: Program, document: str | list[str]) -> str:
    """The edited document: copies are replaced by the lines they name, gens by their text.

    Pure and deterministic; linear in the output size. ``document`` may be given already split
    (as :func:`copygram.language.lines.split_lines` returns it) to avoid splitting it again.
    """
    lines = split_lines(document) if isinstance(document, str) else document
    check_ranges(program, len(lines))
    parts: list[str] = []
    for op in program:
        if isinstance(op, Copy):
            parts.extend(lines[op.start - 1 : op.end])
        else:
            parts.append(op.text)
    return "".join(parts)
