"""The part of a long document an edit program needs to see: a view for the prompt.

A file of 300-1,500 lines costs a 2-core CPU 1-6 minutes of prompt prefill before a program's
first token (docs/quality.md, "Where a long file's time goes"), though a program that fixes one
function heads one unit and copies the rest. Where the instruction targets definitions of the
document (:func:`~copygram.language.targets.named_reach`: "Fix bugs in median", "Remove the
function f", "Add a parameter to f and pass it from g"), the model is shown a **view**: the
file's head (its imports, up to :data:`HEAD_LINES` lines), those definitions whole, the
definitions that use one of their names (callers, innermost first) and those they use
(callees), in document order and within a budget of lines, every run left out replaced by one
comment line in the file's language that says which lines it stands for
(``# ... lines 41-310 not shown ...``).

Nothing else changes: search/replace blocks name their lines by content, so the constraint,
the resolver and every check still read the whole document, and a block can head only a line
the document has (an elision line is none). A replacement that writes an elision line into the
file is damage (:func:`~copygram.language.damage.find_damage`, kind ``marker``), redone. Line
numbers would not survive a view, so the tag syntaxes (numbered copies) never get one.

Cost: one parse of the document (cached with its definitions) and a scan of its lines for the
target names: milliseconds for a few thousand lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from copygram.language.asks import names_every_definition
from copygram.language.definitions import callers, code_lines, definitions, outermost
from copygram.language.lines import merge_spans, split_lines
from copygram.language.reading import Reading, read_edit
from copygram.language.types import PROSE

HEAD_LINES = 40
"""The most lines of the file's head (before its first definition: imports, constants) a view
shows; a longer head shows its first ones."""

CONTEXT_LINES = 160
"""The most lines of related definitions (callers, then callees) a view shows beyond the
definitions the instruction targets, which it shows whole whatever their length."""

_COMMENT = {"python": "#", "javascript": "//", "typescript": "//", "java": "//", "go": "//",
            "c": "//", "cpp": "//", "rust": "//"}

ELISION = re.compile(r"^[ \t]*(?:(?:#|//) \.\.\. lines \d+-\d+ not shown \.\.\."
                     r"|\[\.\.\. lines \d+-\d+ not shown \.\.\.\])[ \t]*$")
"""An elision line of a view, in any language or prose (the damage check reads it as a
marker)."""

# A run of this many lines or fewer between two shown ones is shown: its elision line would save
# nothing.
_SMALL_GAP = 2
# The longest comment above a definition a view adds to it.
_COMMENT_LINES = 80
_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")

Span = tuple[int, int]  # 1-based, inclusive


@dataclass(frozen=True)
class View:
    """What the model reads of a document: ``text``, and the document's line ranges it shows
    (``shown``: 1-based, inclusive, sorted, disjoint), every other run one elision line."""

    text: str
    shown: tuple[Span, ...]
    outline: tuple[str, ...] = ()
    """An excerpt's: the first code line of each top-level definition, for an instruction
    that speaks of every one (``__all__``), given beside the excerpt, not in it."""


def elision_line(language: str, first: int, last: int) -> str:
    """The line that stands for lines ``first``-``last`` (1-based) in a view: a comment in a
    language of code, a bracketed note in prose."""
    if language not in _COMMENT:
        return f"[... lines {first}-{last} not shown ...]\n"
    return f"{_COMMENT[language]} ... lines {first}-{last} not shown ...\n"


def focus_view(document: str, instruction: str, language: str | None, *,
               head_lines: int = HEAD_LINES, context_lines: int = CONTEXT_LINES,
               reading: Reading | None = None) -> View | None:
    """The view of ``document`` (module doc) for an edit by ``instruction``, or ``None`` where
    the whole document is the view: the instruction targets none of its definitions, the
    language has no comment to write an elision with (prose), or the view would leave nothing
    out. ``reading``: the edit's :func:`~copygram.language.reading.read_edit` (``None``: read
    here)."""
    if language not in _COMMENT:
        return None
    if reading is None:
        reading = read_edit(document, instruction, language)
    reach = reading.reach
    if not reach:
        return None
    lines = split_lines(document)
    core = merge_spans(span for requirement in reach for span in requirement)
    defined = definitions(document, language)
    named = set(_WORD.findall(instruction)) & set(defined)
    head = _head(lines, defined, head_lines)
    related = _related(lines, core, defined, named, context_lines)
    if names_every_definition(instruction) and reading.places:
        related += _outline(lines, defined, context_lines)
    spans = [_with_comment(lines, span) for span in (*core, *related)]
    return _view(lines, [*head, *spans], language, ends=True)


def excerpt_view(document: str, instruction: str, language: str | None, *,
                 reading: Reading | None = None) -> View | None:
    """The part of ``document`` a rewrite of what ``instruction`` names needs (a **scoped
    rewrite**, :mod:`copygram.decode.scoped`): the file's head (as :func:`focus_view`'s) and the
    definitions the instruction targets (:func:`~copygram.language.targets.named_reach`; for an
    addition, its places: the new unit is written after one), each with the comment above it,
    every run between them one elision line, no elision before the first or after the last; in
    prose, the passages the instruction quotes (:mod:`copygram.language.passages`).
    ``None`` where the instruction targets none of its definitions, asks a rename (its reach is
    the first few uses, not every unit to write again), the language has no comment, or the
    excerpt would be the whole file. ``reading``: as :func:`focus_view` takes it. An addition
    that names every definition gets the first line of each as the view's ``outline``.
    Milliseconds."""
    if reading is None:
        reading = read_edit(document, instruction, language)
    if reading.passages:
        return _passage_view(document, reading.passages)
    if language not in _COMMENT:
        return None
    reach = reading.reach
    if reading.renamed or not reach:
        return None
    lines = split_lines(document)
    defined = definitions(document, language)
    head = _head(lines, defined, HEAD_LINES)
    spans = [_with_comment(lines, span) for requirement in reach for span in requirement]
    outline: tuple[str, ...] = ()
    if names_every_definition(instruction) and reading.places:
        # The names it must list, as a list beside the excerpt: shown in it, each first line
        # between two elision lines, the default model kept none of 61 such lines in order
        # (and a whole-file rewrite followed: 1,103 s for a Python __all__).
        outline = tuple(lines[first - 1].strip()
                        for first, _ in _outline(lines, defined, CONTEXT_LINES))
    return _view(lines, [*head, *spans], language, ends=False, outline=outline)


def _passage_view(document: str, passages: Sequence[Span]) -> View | None:
    """The excerpt of a prose document that shows ``passages``: no head (prose has no imports to
    keep in view), every run between two passages one elision line."""
    return _view(split_lines(document), passages, PROSE, ends=False)


def _view(lines: Sequence[str], spans: Iterable[Span], language: str, *, ends: bool,
          outline: tuple[str, ...] = ()) -> View | None:
    """The view that shows ``spans`` (merged where at most :data:`_SMALL_GAP` lines apart),
    ``None`` where that is every line (``ends``: as :func:`_render` takes it)."""
    shown = merge_spans(spans, gap=_SMALL_GAP)
    if shown == ((1, len(lines)),):
        return None
    return View(_render(lines, shown, language, ends=ends), shown, outline)


def splice(document: str, view: View, rewritten: str) -> str | None:
    """``document`` with each run ``view`` shows replaced by its rewrite: ``rewritten`` (the
    model's rewrite of ``view.text``) cut at its elision lines, which must be the view's own, in
    order, each once. ``None`` where they are not (a rewrite that dropped or changed one: where
    its lines go is unknown)."""
    lines = split_lines(document)
    kept = [line.strip() for line in split_lines(view.text) if ELISION.match(line)]
    pieces: list[list[str]] = [[]]
    cuts: list[str] = []
    for line in split_lines(rewritten):
        if ELISION.match(line):
            cuts.append(line.strip())
            pieces.append([])
        else:
            pieces[-1].append(line)
    if cuts != kept or len(pieces) != len(view.shown):
        return None
    for (start, end), piece in reversed(list(zip(view.shown, pieces, strict=True))):
        if piece and not piece[-1].endswith(("\n", "\r")) and end < len(lines):
            piece[-1] += "\n"
        lines[start - 1:end] = piece
    return "".join(lines)


def _head(lines: Sequence[str], defined: Mapping[str, tuple[Span, ...]],
          head_lines: int) -> list[Span]:
    """The file's head: its lines before the first definition of more than a line (a module
    variable of a line or two is part of it), at most ``head_lines``, not ending inside a
    comment that runs on."""
    first_body = min((start for spans in defined.values() for start, end in spans
                      if end - start >= 2), default=len(lines) + 1)
    head_end = min(first_body - 1, head_lines)
    opened = _open_comment(lines, head_end)
    head_end = head_end if opened is None else opened - 1
    return [(1, head_end)] if head_end >= 1 else []


def _related(lines: Sequence[str], core: Sequence[Span],
             defined: Mapping[str, tuple[Span, ...]], named: set[str], budget: int) -> list[Span]:
    """The definitions that use a ``named`` one (callers: the innermost definition around each
    use outside ``core``, or the line itself outside every definition), then the definitions
    ``core`` uses (callees, the shortest first), while their lines fit ``budget``."""
    using = callers(lines, named, defined, core)
    used_names = {word for start, end in core for line in lines[start - 1:end]
                  for word in _WORD.findall(line)}
    # A name the core defines itself (a nested helper) is no callee, whatever else shares it.
    own = {name for name, spans in defined.items() if any(_inside(a, core) for a, _ in spans)}
    callees = sorted({span for name in used_names & set(defined) - named - own
                      for span in defined[name] if not _overlaps(span, core)},
                     key=lambda s: (s[1] - s[0], s))
    picked: list[Span] = []
    used = 0
    for span in [*using, *callees]:
        size = span[1] - span[0] + 1
        if span in picked or _overlaps(span, core) or used + size > budget:
            continue
        picked.append(span)
        used += size
    return picked


def _outline(lines: Sequence[str], defined: Mapping[str, tuple[Span, ...]],
             budget: int) -> list[Span]:
    """The first code line of each top-level definition (its comment block above left out), at
    most ``budget`` of them: an addition that names every definition ("an __all__ list of every
    function") sees their names."""
    heads = []
    for start, end in outermost(defined)[:budget]:
        code = code_lines(lines[start - 1:end])
        first = start + next((k for k, line in enumerate(code) if line.strip()), 0)
        heads.append((first, first))
    return heads


_BLOCK_COMMENT = re.compile(r"/\*|\*/|\"\"\"|'''")
_CLOSER = {"/*": "*/", '"""': '"""', "'''": "'''"}


def _open_comment(lines: Sequence[str], end: int) -> int | None:
    """The line (1-based) where a block comment or string (``/* */``, triple quotes) opens
    that is still open after line ``end``, if one is."""
    opened: tuple[int, str] | None = None
    for number in range(1, end + 1):
        for match in _BLOCK_COMMENT.finditer(lines[number - 1]):
            token = match.group()
            if opened is None and token in _CLOSER:
                opened = (number, _CLOSER[token])
            elif opened is not None and token == opened[1]:
                opened = None
    return None if opened is None else opened[0]


def _with_comment(lines: Sequence[str], span: Span) -> Span:
    """``span`` with the ``/* ... */`` comment that ends right above it or that it starts in,
    where one does (its inner lines open with no marker, so
    :func:`~copygram.language.definitions.definitions` takes its last lines at most; blank
    lines may be inside it)."""
    opened = _open_comment(lines, span[0] - 1)
    if opened is not None and span[0] - opened <= _COMMENT_LINES:
        return opened, span[1]
    above = span[0] - 1
    if above < 1 or not lines[above - 1].rstrip().endswith("*/"):
        return span
    for number in range(above, max(0, above - _COMMENT_LINES), -1):
        if "/*" in lines[number - 1]:
            return number, span[1]
    return span


def _inside(number: int, spans: Sequence[Span]) -> bool:
    return any(start <= number <= end for start, end in spans)


def _overlaps(span: Span, spans: Sequence[Span]) -> bool:
    return any(span[0] <= end and start <= span[1] for start, end in spans)


def _render(lines: Sequence[str], shown: Sequence[Span], language: str, *,
            ends: bool = True) -> str:
    """The view's text: each shown run, each run between two one elision line (``ends``: and
    the runs before the first and after the last too)."""
    parts: list[str] = []
    at = 1 if ends else shown[0][0]
    for start, end in shown:
        if start > at:
            parts.append(elision_line(language, at, start - 1))
        chunk = "".join(lines[start - 1:end])
        parts.append(chunk if chunk.endswith("\n") else chunk + "\n")
        at = end + 1
    if ends and at <= len(lines):
        parts.append(elision_line(language, at, len(lines)))
    return "".join(parts)


__all__ = ["CONTEXT_LINES", "ELISION", "HEAD_LINES", "View", "elision_line", "excerpt_view",
           "focus_view", "splice"]
