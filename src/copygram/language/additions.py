"""Where an edit that adds something new to a file goes: the places a program that adds a unit
may edit.

"Add a function prod_signs(arr): ...", "Add the global constant `const int MAX_ITEMS = 133;`
at the top of the file": the instruction introduces a name the document nowhere holds
(:func:`~copygram.language.asks.introduced`) and no sentence of it commands an edit of a
definition the document has (that would be the place: "Add a parameter max_calls to f" goes
in ``f``). A head block rewrites a unit the document has, so a program adds a new unit by
heading the unit it goes after and writing that unit again and the new one: after the last
statement of the file's head (its imports, using lines, module constants: what goes at the
top) or after its last top-level definition (what goes at the end, where an added function
goes when the instruction does not say). Those two units are the **places**: the constraint
holds such a program to reach one and to edit nothing else (``touch`` and ``only``), a long
file is shown as a view of them (:mod:`copygram.language.focus`), and a block that writes a
place again unchanged is taken on past its close (:mod:`copygram.decode.unchanged`).

Before, a long file whose instruction introduced a name was rewritten whole: 6-20 minutes on
2 cores for a 600-1,300-line file, and the default model's rewrites of those files were
refused or failed their tests (docs/quality.md, "Added functions and constants in files of
300-1,500 lines"). Cost: the document's definitions (one parse, cached) and a scan of its
head's lines: milliseconds.
"""

from __future__ import annotations

import re

from copygram.language.asks import asked_renames, asks_to_add, commanded, introduced, placed_at
from copygram.language.definitions import code_lines, definitions, outermost
from copygram.language.lines import split_lines
from copygram.language.search_replace import may_head, searchable
from copygram.language.types import Scope

_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")

HEAD_STATEMENT_LINES = 60
"""The furthest line of a file's head (before its first definition of several lines) that can
be its top place: an edit "at the top of the file" goes after the imports, not after a long
prelude of module code."""


def added_names(document: str, instruction: str) -> frozenset[str]:
    """The names ``instruction`` introduces that ``document`` nowhere holds (written as code:
    :func:`~copygram.language.asks.introduced`), none where it asks a rename (a rename's new
    name is no new unit). Microseconds a page."""
    if asked_renames(instruction):
        return frozenset()
    return frozenset(introduced(instruction) - set(_WORD.findall(document)))


def addition_places(document: str, instruction: str, language: str | None) -> Scope:
    """The places (module doc) of an edit that adds a new unit to ``document``, as line ranges
    (1-based, inclusive, sorted): the last statement of the file's head and the last top-level
    definition, where the document has them, or the one the instruction says
    (:func:`~copygram.language.asks.placed_at`: "at the top of the file", "at the end"); empty
    where ``instruction`` asks to add nothing (:func:`~copygram.language.asks.asks_to_add`:
    "Fix bugs in closest_integer" on a file that spells it ``closestInteger`` introduces a name
    and asks to add none), adds no new name
    (:func:`added_names`), where a sentence of it commands an edit of a definition the document
    has (the addition goes there), or where the document has no definitions (prose, a file
    that does not parse). Milliseconds."""
    if not asks_to_add(instruction):
        return ()
    regions = definitions(document, language)
    if not regions or not added_names(document, instruction) or commanded(instruction, regions):
        return ()
    top = outermost(regions)
    where = placed_at(instruction)
    places = {top[-1]} if top and where != "top" else set()
    first_body = min((start for start, end in top if end > start), default=None)
    lines = split_lines(document)
    if first_body is not None and where != "end":
        # Code, not documentation: comments and docstrings are blanked (and a preprocessor
        # line with them: ``#include`` reads as a comment, ``using namespace std;`` does not).
        code = code_lines(lines[:HEAD_STATEMENT_LINES])
        for number in range(min(first_body - 1, len(code)), 0, -1):
            line = lines[number - 1]
            if code[number - 1].strip() and searchable(line) and may_head(line):
                places.add((number, number))
                break
    return tuple(sorted(places))


# A body line that holds no work once comments and docstrings are blanked.
_EMPTY_BODY_LINE = re.compile(r"^\s*(?:pass|\.\.\.|[{};]*)\s*$")


def empty_definitions(text: str, names: frozenset[str] | set[str],
                      language: str | None) -> frozenset[str]:
    """The ``names`` that ``text`` defines with nothing in their body: a definition of several
    lines whose lines after the first hold no code once comments and docstrings are blanked
    (:func:`~copygram.language.definitions.code_lines`; ``pass``, ``...`` and lone braces are
    none). A function asked for and written as its header and docstring alone (the default
    model's added ``prod_signs`` on a large row) returns nothing. Milliseconds."""
    if not names:
        return frozenset()
    regions = definitions(text, language)
    lines = split_lines(text)
    code = code_lines(lines)
    empty = set()
    for name in names:
        for start, end in regions.get(name, ()):
            first = body_start(lines, name, start, end)
            if first <= end and all(_EMPTY_BODY_LINE.match(line) for line in code[first - 1:end]):
                empty.add(name)
    return frozenset(empty)


def body_start(lines: list[str], name: str, start: int, end: int) -> int:
    """The first line (1-based) after the line whose code names ``name`` in its definition's
    lines ``start``-``end`` (a span of :func:`~copygram.language.definitions.definitions` holds
    the comment above it, which may mention the name), ``end + 1`` where none follows."""
    word = re.compile(rf"(?<![A-Za-z0-9_$]){re.escape(name)}(?![A-Za-z0-9_$])")
    code = code_lines(lines[start - 1:end])
    header = next((start + k for k, line in enumerate(code) if word.search(line)), end)
    return header + 1


__all__ = ["HEAD_STATEMENT_LINES", "added_names", "addition_places", "body_start",
           "empty_definitions"]
