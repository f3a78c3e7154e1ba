"""The passages of a prose document that an instruction points to by quoting them.

An edit of a text document names its place by quoting it: "Revise the paragraph that starts
with "Cities that installed their sewage"", "Fix the typo in 'recieve the data'". A document of
a few hundred lines costs a 2-core CPU minutes of prefill before a program's first token, and a
rewrite of the whole of it minutes more (a 990-line document of 28k tokens does not fit the
default model's context twice, so it cannot be rewritten at all), for an edit of one paragraph;
and asked to revise one paragraph of a short text, the default model's rewrite is that paragraph
alone, which written as the whole text loses the rest (docs/quality.md, "Prose").
:func:`quoted_passages` finds the paragraphs (runs of non-blank lines between blank lines)
that hold what the instruction quotes, so that ``mode = "auto"`` rewrites those alone, at any
length (a scoped rewrite, :mod:`copygram.decode.scoped`), and splices them back.

A quote locates only where it is a place: found in at most :data:`MAX_PLACES` paragraphs
(a word found all over the document names no place), at least :data:`MIN_QUOTE` characters
long, and in an instruction that does not speak of the whole document ("every", "all",
"throughout", "the whole text": an edit everywhere, which a passage would not hold). Quotes are
compared with their white space collapsed, line by line (a quote that runs over a line break
is not found). A quote of a heading (Markdown ``#``, an underlined reStructuredText title)
names its section, up to the next heading of its rank or a higher one: "Rewrite the section
"Getting started"" edits the section, not its title line alone.

Cost: one scan of the document's lines per quote: milliseconds for a few thousand lines.
"""

from __future__ import annotations

import re

from copygram.language.lines import merge_spans, split_lines
from copygram.language.types import Scope

MAX_PLACES = 3
"""The most paragraphs one quote may be found in and still name a place."""

MIN_QUOTE = 8
"""The fewest characters (white space collapsed) of a quote that locates a passage."""

MAX_PASSAGE_LINES = 60
"""The most lines of one passage: a longer paragraph (a text with no blank lines) gives the
lines around the quote."""

MAX_SECTION_LINES = 200
"""The most lines of a section a quoted heading names; a quote of a longer one's heading names
no place (the text is edited whole, as it would be with no quote)."""

# "...", “...”, `...`, and '...' where the quote marks stand outside words (not apostrophes).
_QUOTE = re.compile(r'"([^"\n]+)"|\u201c([^\u201d\n]+)\u201d|`([^`\n]+)`'
                    r"|(?<![\w'])'([^'\n]+)'(?![\w'])")

# An instruction that asks for an edit all over the document, not in one place.
_EVERYWHERE = re.compile(r"\b(?:every|everywhere|all|throughout|whole|entire|each|"
                         r"consistently|globally)\b", re.IGNORECASE)


def quoted_passages(document: str, instruction: str) -> Scope:
    """The passages (1-based, inclusive line ranges, sorted, disjoint) of ``document`` that
    hold what ``instruction`` quotes as a place (module doc); empty where it quotes none."""
    quotes = _quotes(instruction)
    if not quotes or _EVERYWHERE.search(_unquoted(instruction)):
        return ()  # read for every prose edit: the document is not scanned without a quote
    lines = split_lines(document)
    flat_lines = [" ".join(line.split()) for line in lines]
    headings = _headings(lines)
    found: set[tuple[int, int]] = set()
    for quote in quotes:
        hits = [number for number, line in enumerate(flat_lines, 1) if quote in line]
        places = {_section(lines, headings, number) if number in headings
                  else _paragraph(lines, number) for number in hits}
        if 0 < len(places) <= MAX_PLACES and None not in places:
            found |= {place for place in places if place is not None}
    return merge_spans(found)


def _quotes(instruction: str) -> list[str]:
    quotes = []
    for match in _QUOTE.finditer(instruction):
        text = " ".join(next(part for part in match.groups() if part is not None).split())
        text = text.strip(" .,;:")  # a quote that ends where a sentence ends: "... before."
        if len(text) >= MIN_QUOTE:
            quotes.append(text)
    return quotes


def _unquoted(instruction: str) -> str:
    return _QUOTE.sub(" ", instruction)


def _paragraph(lines: list[str], number: int) -> tuple[int, int]:
    """The run of non-blank lines around line ``number``, at most :data:`MAX_PASSAGE_LINES`
    (centred on the line where the run is longer)."""
    start = end = number
    while start > 1 and lines[start - 2].strip():
        start -= 1
    while end < len(lines) and lines[end].strip():
        end += 1
    if end - start + 1 > MAX_PASSAGE_LINES:
        half = MAX_PASSAGE_LINES // 2
        start = max(start, number - half)
        end = min(end, start + MAX_PASSAGE_LINES - 1)
    return start, end


# A Markdown heading ("## Install"); an RST title's underline ("=====", "-----").
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]|$)")
_UNDERLINE = re.compile(r"^([=\-~^\"'*+#`:.])\1{2,}[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(?:```|~~~)")


def _headings(lines: list[str]) -> dict[int, int]:
    """The heading lines of a Markdown or reStructuredText text (1-based) and their rank, the
    lower the higher: ``#`` 1 to ``######`` 6; an RST title 10 and up, by the order its
    underline character first appears. Lines inside fenced code blocks are no headings (a
    shell comment)."""
    headings: dict[int, int] = {}
    underlines: list[str] = []
    fenced = False
    for number, line in enumerate(lines, 1):
        if number - 1 in headings and headings[number - 1] >= 10:
            continue  # a title's underline ("~~~~" is a fence in Markdown)
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        atx = _ATX.match(line)
        below = lines[number] if number < len(lines) else ""
        underline = _UNDERLINE.match(below)
        if atx:
            headings[number] = len(atx.group(1))
        elif (underline and line.strip() and not _UNDERLINE.match(line)
              and len(below.strip()) >= len(line.strip())):
            mark = underline.group(1)
            if mark not in underlines:
                underlines.append(mark)
            headings[number] = 10 + underlines.index(mark)
    return headings


def _section(lines: list[str], headings: dict[int, int],
             number: int) -> tuple[int, int] | None:
    """The section heading line ``number`` opens: up to the next heading of its rank or a
    higher one, trailing blank lines left out; ``None`` where it runs past
    :data:`MAX_SECTION_LINES`."""
    rank = headings[number]
    end = next((other - 1 for other in sorted(headings)
                if other > number and headings[other] <= rank), len(lines))
    while end > number and not lines[end - 1].strip():
        end -= 1
    return (number, end) if end - number + 1 <= MAX_SECTION_LINES else None


__all__ = ["MAX_PASSAGE_LINES", "MAX_PLACES", "MAX_SECTION_LINES", "MIN_QUOTE",
           "quoted_passages"]
