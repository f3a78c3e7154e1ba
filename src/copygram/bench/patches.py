"""Two line-based edit formats, each built from ``(before, after)`` and applied strictly.

* SEARCH/REPLACE (Aider style): ``<<<<<<< SEARCH`` / ``=======`` / ``>>>>>>> REPLACE`` blocks.
  Each changed hunk's context grows (fewest lines first, above before below) until its SEARCH lines
  occur exactly once in the file as it stands when the block is applied (blocks apply in order);
  a pure insertion therefore gets an anchor line. The format writes lines, so a final line without
  a newline can only be matched at the end of the file, and a change of the final newline alone
  is not expressible.
* Unified diff: ``difflib.unified_diff`` with 3 context lines. difflib does not mark a last line
  without a newline; we add GNU diff's ``\\ No newline at end of file`` marker, so the diff is what
  ``diff -u`` would print, and apply it strictly by line numbers with every context line checked.

An applier raises :class:`PatchError` rather than guess; :mod:`copygram.bench.formats` compares
them with copygram's programs.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence

from copygram.errors import CopygramError
from copygram.language.lines import split_lines

SEARCH = "<<<<<<< SEARCH\n"
DIVIDER = "=======\n"
REPLACE = ">>>>>>> REPLACE\n"
NO_NEWLINE = "\\ No newline at end of file\n"


class PatchError(CopygramError, ValueError):
    """An edit text that does not apply to the document (bad syntax, missing or ambiguous match)."""


def _terminated(line: str) -> bool:
    return line.endswith(("\n", "\r"))


# --- SEARCH/REPLACE ------------------------------------------------------------------------------


def _match_at(lines: Sequence[str], start: int, block: Sequence[str]) -> bool:
    """Whether ``block`` equals ``lines[start:start+len(block)]``; an unterminated final line of
    ``lines`` matches the same text plus ``\\n`` (SEARCH blocks cannot write it otherwise)."""
    if start + len(block) > len(lines):
        return False
    last = len(lines) - 1
    for offset, wanted in enumerate(block):
        have = lines[start + offset]
        if have != wanted and not (start + offset == last and not _terminated(have)
                                   and have + "\n" == wanted):
            return False
    return True


def _matches(lines: Sequence[str], block: Sequence[str], limit: int = 2) -> list[int]:
    """Start indices where ``block`` matches (at most ``limit``; an empty block matches nowhere
    usefully, so it is reported as ambiguous)."""
    if not block:
        return [0] * limit
    found: list[int] = []
    first = block[0]
    for start in range(len(lines) - len(block) + 1):
        if (lines[start] == first or start == len(lines) - 1) and _match_at(lines, start, block):
            found.append(start)
            if len(found) >= limit:
                break
    return found


def _aligned(before: Sequence[str], after: Sequence[str]) -> tuple[
        list[tuple[int, int, int, int]], dict[int, int]]:
    """Changed hunks ``(i1, i2, j1, j2)`` and, for each ``before`` index on an unchanged stretch
    (or its edge), the matching ``after`` index (the first one, before any insertion there)."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    hunks: list[tuple[int, int, int, int]] = []
    align: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for offset in range(i2 - i1 + 1):
                align.setdefault(i1 + offset, j1 + offset)
        elif hunks and hunks[-1][1] == i1 and hunks[-1][3] == j1:
            hunks[-1] = (hunks[-1][0], i2, hunks[-1][2], j2)
        else:
            hunks.append((i1, i2, j1, j2))
    align.setdefault(len(before), len(after))
    return hunks, align


def _unique_block(current: list[str], top: int, bottom: int, can_end: Callable[[int], bool],
                  ) -> tuple[int, int]:
    """The fewest context lines making ``current[top-up:end]`` match once: ``(up, end)`` with
    ``end >= bottom`` and ``can_end(end)``; context above is tried first on ties."""
    n = len(current)
    for total in range(n + 1):
        for up in range(min(total, top), -1, -1):
            end = bottom + total - up
            if end > n or not can_end(end):
                continue
            if len(_matches(current, _closed(current[top - up:end]))) == 1:
                return up, end
    return top, n  # the whole file: it matches once unless it is empty


def make_search_replace(before: str, after: str, *, strict: bool = True) -> str:
    """Aider-style SEARCH/REPLACE blocks turning ``before`` into ``after`` (see module doc).

    Some edits cannot be written in this format: a final line whose newline appears or vanishes,
    or a changed line that reads like a block marker. ``strict`` raises :class:`PatchError` for
    those; otherwise the (lossy) blocks are returned, for counting their tokens.
    """
    old, new = split_lines(before), split_lines(after)
    hunks, align = _aligned(old, new)
    blocks: list[str] = []
    index = 0
    while index < len(hunks):
        i1, i2, j1, j2 = hunks[index]
        # The file when this block applies: the edited part above, the original below. Its
        # index e >= j1 is old line i1 + e - j1.
        current = new[:j1] + old[i1:]
        bottom = j1 + (i2 - i1)

        def can_end(end: int, _shift: int = i1 - j1, _bottom: int = bottom) -> bool:
            return end == _bottom or end + _shift in align

        up, end = _unique_block(current, j1, bottom, can_end)
        old_end = i1 + end - j1
        new_end = j2 if end == bottom else align[old_end]
        if strict:
            open_end = bool(current) and end == len(current) and not _terminated(current[-1])
            _check_expressible(current[j1 - up:end], new[j1 - up:new_end], at_open_end=open_end)
        blocks.append(SEARCH + "".join(_closed(current[j1 - up:end])) + DIVIDER
                      + "".join(_closed(new[j1 - up:new_end])) + REPLACE)
        # Hunks the block's context swallowed are done.
        index += 1
        while index < len(hunks) and (hunks[index][0] < old_end or hunks[index][2] < new_end):
            index += 1
    return "".join(blocks)


_MARKERS = frozenset({SEARCH, DIVIDER, REPLACE})


def _check_expressible(search: Sequence[str], replace: Sequence[str], *, at_open_end: bool
                       ) -> None:
    """Raise :class:`PatchError` unless applying the rendered block gives ``replace`` back."""
    if not search:
        raise PatchError("SEARCH/REPLACE cannot edit an empty file (no anchor to search for)")
    if any(line in _MARKERS for line in _closed([*search, *replace])):
        raise PatchError("a changed line reads like a SEARCH/REPLACE marker")
    if replace:
        last = replace[-1]
        # The applier drops the final newline exactly when the match ends the file without one.
        if last.endswith("\n") if at_open_end else not _terminated(last):
            raise PatchError("SEARCH/REPLACE cannot write a change of the final newline")


def _closed(lines: Iterable[str]) -> list[str]:
    return [line if _terminated(line) else line + "\n" for line in lines]


def parse_search_replace(text: str) -> list[tuple[list[str], list[str]]]:
    """The ``(search_lines, replace_lines)`` of each block; :class:`PatchError` if malformed."""
    blocks: list[tuple[list[str], list[str]]] = []
    state, search, replace = "out", [], []  # type: str, list[str], list[str]
    for number, line in enumerate(split_lines(text), 1):
        if state == "out":
            if line != SEARCH:
                raise PatchError(f"line {number}: expected {SEARCH!r}, got {line!r}")
            state, search, replace = "search", [], []
        elif state == "search":
            if line == DIVIDER:
                state = "replace"
            else:
                search.append(line)
        elif line == REPLACE:
            blocks.append((search, replace))
            state = "out"
        else:
            replace.append(line)
    if state != "out":
        raise PatchError("unterminated SEARCH/REPLACE block")
    return blocks


def apply_search_replace(text: str, document: str) -> str:
    """Apply the blocks in order; each SEARCH must match exactly one run of whole lines.

    The only leniency: the document's final line, when it has no newline, matches the same text
    followed by ``\\n`` (the format cannot write it otherwise), and then the replacement's final
    newline is dropped too.
    """
    lines = split_lines(document)
    for number, (search, replace) in enumerate(parse_search_replace(text), 1):
        found = _matches(lines, search)
        if len(found) != 1:
            why = "empty" if not search else ("not found" if not found else "ambiguous")
            raise PatchError(f"block {number}: SEARCH is {why}")
        start, width = found[0], len(search)
        new = list(replace)
        if start + width == len(lines) and not _terminated(lines[-1]) and new:
            new[-1] = new[-1].removesuffix("\n")
        lines[start:start + width] = new
    return "".join(lines)


# --- unified diff --------------------------------------------------------------------------------

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def make_unified_diff(before: str, after: str, context: int = 3) -> str:
    """``difflib.unified_diff`` text (headers ``a/file``, ``b/file``) with GNU's no-newline marks."""
    parts: list[str] = []
    for line in difflib.unified_diff(split_lines(before), split_lines(after), "a/file", "b/file",
                                     n=context):
        parts.append(line if _terminated(line) else line + "\n" + NO_NEWLINE)
    return "".join(parts)


def apply_unified_diff(diff: str, document: str) -> str:
    """Apply a unified diff strictly: hunks in order, by line number, every old line checked."""
    if not diff:
        return document
    old = split_lines(document)
    lines = split_lines(diff)
    if len(lines) < 2 or not lines[0].startswith("--- ") or not lines[1].startswith("+++ "):
        raise PatchError("a unified diff starts with '--- ' and '+++ ' header lines")
    out: list[str] = []
    position = 0  # next unconsumed index of ``old``
    index = 2
    while index < len(lines):
        header = _HUNK.match(lines[index])
        if header is None:
            raise PatchError(f"diff line {index + 1}: expected a hunk header, got {lines[index]!r}")
        old_start, old_len = int(header[1]), int(header[2] or 1)
        new_len = int(header[4] or 1)
        start = old_start if old_len == 0 else old_start - 1
        if start < position or start > len(old):
            raise PatchError(f"hunk at line {index + 1} starts at old line {old_start}, out of order")
        out.extend(old[position:start])
        position = start
        index += 1
        seen_old = seen_new = 0
        while index < len(lines) and (seen_old < old_len or seen_new < new_len
                                      or lines[index] == NO_NEWLINE):
            line = lines[index]
            kind, body = line[:1], line[1:]
            if index + 1 < len(lines) and lines[index + 1] == NO_NEWLINE:
                body = body.removesuffix("\n")
                index += 1
            if kind in (" ", "-"):
                if position >= len(old) or old[position] != body:
                    raise PatchError(f"diff line {index + 1}: old line {position + 1} differs")
                position += 1
                seen_old += 1
                if kind == " ":
                    out.append(body)
                    seen_new += 1
            elif kind == "+":
                out.append(body)
                seen_new += 1
            else:
                raise PatchError(f"diff line {index + 1}: unexpected {line!r} in a hunk")
            index += 1
        if seen_old != old_len or seen_new != new_len:
            raise PatchError(f"hunk ending at diff line {index}: line counts do not match header")
    out.extend(old[position:])
    return "".join(out)
