"""The passages of a prose document that an instruction points to, by quoting or counting them.

An edit of a text document names its place by quoting it: "Revise the paragraph that starts
with "Cities that installed their sewage"", "Fix the typo in 'recieve the data'". A document of
a few hundred lines costs a 2-core CPU minutes of prefill before a program's first token, and a
rewrite of the whole of it minutes more (a 990-line document of 28k tokens does not fit the
default model's context twice, so it cannot be rewritten at all), for an edit of one paragraph;
and asked to revise one paragraph of a short text, the default model's rewrite is that paragraph
alone, which written as the whole text loses the rest (docs/quality.md, "Prose").
:func:`named_passages` finds the paragraphs (runs of non-blank lines between blank lines)
that hold what the instruction quotes or counts, so that ``mode = "auto"`` rewrites those
alone, at any length (a scoped rewrite, :mod:`copygram.decode.scoped`), and splices them back.

A quote locates only where it is a place: found in at most :data:`MAX_PLACES` paragraphs
(a word found all over the document names no place), at least :data:`MIN_QUOTE` characters
long, and in an instruction that does not speak of the whole document ("every", "all",
"throughout", "the whole text": an edit everywhere, which a passage would not hold). Quotes are
compared with their white space collapsed, line by line (a quote that runs over a line break
is not found). A quote of a heading (Markdown ``#``, an underlined reStructuredText title)
names its section, up to the next heading of its rank or a higher one: "Rewrite the section
"Getting started"" edits the section, not its title line alone.

An instruction that counts paragraphs names them too: "the second paragraph", "the last two
paragraphs", "the first and third paragraphs", "paragraph 4", and "the first (or last)
sentence" for the first (last) paragraph. Paragraphs are counted as a reader counts them: a
heading, a fenced or indented code block, a list, a table or a directive is none; counted
within the section a quoted heading names ("the second paragraph of "Install""), and not at
all where a quote already names a paragraph (the quote is the narrower place). A count past
the text's paragraphs, or one that lands on a paragraph longer than
:data:`MAX_PASSAGE_LINES`, names no place. "The introduction" ("the intro") and "the
conclusion" name the section of that title where the text has one heading of it
(:data:`PART_TITLES`: "Introduction", "1. Conclusions"), else its first (last) paragraph; "the
introduction of X" is the act of introducing X, no place.

Cost: one scan of the document's lines per quote: milliseconds for a few thousand lines.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

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


def named_passages(document: str, instruction: str) -> Scope:
    """The passages (1-based, inclusive line ranges, sorted, disjoint) of ``document`` that
    ``instruction`` names as a place by quoting or counting them (module doc); empty where it
    names none."""
    quotes = _quotes(instruction)
    unquoted = _unquoted(instruction)
    counts = _counts(unquoted)
    parts = ["intro" if match["intro"] else "outro" for match in _PART.finditer(unquoted)]
    if not (quotes or counts or parts) or _EVERYWHERE.search(unquoted):
        return ()  # read for every prose edit: the document is not scanned without a place
    lines = split_lines(document)
    flat_lines = [" ".join(line.split()) for line in lines]
    headings = _headings(lines)
    found: set[tuple[int, int]] = set()
    counted = bool(counts)  # "the second paragraph of the introduction": counted within it
    for part in parts:  # its titled section, else a count of the first (last) paragraph
        titled = [number for number in headings if _title(lines[number - 1]) in PART_TITLES[part]]
        section = _section(lines, headings, titled[0]) if len(titled) == 1 else None
        if section is not None:
            found.add(section)
        elif not counted:
            counts.append(1 if part == "intro" else -1)
    for quote in quotes:
        hits = [number for number, line in enumerate(flat_lines, 1) if quote in line]
        places = {_section(lines, headings, number) if number in headings
                  else _paragraph(lines, number) for number in hits}
        if 0 < len(places) <= MAX_PLACES and None not in places:
            found |= {place for place in places if place is not None}
    sections = {place for place in found if place[0] in headings}
    paragraphs = {(start, end) for start, end in found - sections
                  if not any(first <= start and end <= last for first, last in sections)}
    if counts and not paragraphs:  # a quoted paragraph is narrower than any count
        picked = set()
        for start, end in sorted(sections) or [(1, len(lines))]:
            picked |= _counted(lines, headings, start, end, counts)
        if picked:
            found = picked
    return merge_spans(found)


PART_TITLES = {"intro": frozenset({"introduction", "intro"}),
               "outro": frozenset({"conclusion", "conclusions", "concluding remarks"})}
"""The headings (lower case, numbering and closing punctuation left out) of the section "the
introduction" and "the conclusion" name."""

# "the introduction", "the intro", "the conclusion" ("the introduction of X": no place).
_PART = re.compile(r"\bthe\s+(?:(?P<intro>introduction|intro)|(?P<outro>conclusions?))\b"
                   r"(?!\s+of\b)", re.IGNORECASE)
# A heading's numbering ("1.", "2.3", "IV.") and closing punctuation, around its title.
_TITLE_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[IVX]+\.)\s+")

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
            "ninth", "tenth")
"""The ordinal words of the first ten paragraphs, in order (a count past them: "paragraph 14")."""

# Ordinal words and the paragraph they count to (negative: from the end).
_ORDINAL_WORDS = {
    **{word: number for number, word in enumerate(ORDINALS, 1)}, "opening": 1,
    "introductory": 1, "last": -1,
    "final": -1, "closing": -1, "concluding": -1, "penultimate": -2, "second-to-last": -2,
    "second to last": -2, "next-to-last": -2, "next to last": -2}
_ORDINAL = (r"(?:second[- ]to[- ]last|next[- ]to[- ]last|\d{1,3}(?:st|nd|rd|th)|"
            + "|".join(sorted((w for w in _ORDINAL_WORDS if " " not in w and "-" not in w),
                              key=len, reverse=True)) + ")")
_HOW_MANY = {"two": 2, "three": 3, "four": 4, "five": 5}
# "the second paragraph", "the first and third paragraphs", "the last two paragraphs".
_COUNTED = re.compile(
    rf"\b(?P<ordinals>{_ORDINAL}(?:(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&)\s+)"
    rf"(?:the\s+)?{_ORDINAL})*)(?:\s+(?P<many>two|three|four|five|[2-5]))?\s+paragraphs?\b",
    re.IGNORECASE)
# "paragraph 4", "paragraphs 2 and 3".
_NUMBERED = re.compile(r"\bparagraphs?\s+(?:#|no\.?\s*)?(?P<numbers>\d{1,3}"
                       r"(?:\s*(?:,|and|or|&)\s*\d{1,3})*)\b", re.IGNORECASE)
# "the first sentence", "the closing sentence": in the first (last) paragraph.
_SENTENCE = re.compile(r"\b(?P<ordinal>first|opening|last|final|closing|concluding)\s+"
                       r"sentence\b", re.IGNORECASE)


def _counts(instruction: str) -> list[int]:
    """The paragraphs ``instruction`` counts, 1-based or negative from the end (module doc)."""
    counts: list[int] = []
    for match in _COUNTED.finditer(instruction):
        ordinals = [_ordinal(word) for word in re.findall(_ORDINAL, match["ordinals"],
                                                          re.IGNORECASE)]
        many = match["many"]
        if many and len(ordinals) == 1:  # "the first two", "the last three"
            n = _HOW_MANY.get(many.lower()) or int(many)
            first = ordinals[0]
            ordinals = (list(range(first, first + n)) if first > 0
                        else list(range(first - n + 1, first + 1)))
        counts += ordinals
    for match in _NUMBERED.finditer(instruction):
        counts += [int(n) for n in re.findall(r"\d+", match["numbers"])]
    if not counts:
        counts = [1 if match["ordinal"].lower() in ("first", "opening") else -1
                  for match in _SENTENCE.finditer(instruction)]
    return [count for count in counts if count != 0]


def _ordinal(word: str) -> int:
    word = " ".join(word.lower().split())
    if word in _ORDINAL_WORDS:
        return _ORDINAL_WORDS[word]
    return int(re.sub(r"\D", "", word))


def _counted(lines: list[str], headings: dict[int, int], start: int, end: int,
             counts: list[int]) -> set[tuple[int, int]]:
    """The paragraphs of lines ``start``-``end`` that ``counts`` names; none where a count lies
    past them or lands on a paragraph longer than :data:`MAX_PASSAGE_LINES`."""
    paragraphs = _paragraphs(lines, headings, start, end)
    picked = set()
    for count in counts:
        if not -len(paragraphs) <= count <= len(paragraphs):
            return set()
        first, last = paragraphs[count - 1 if count > 0 else count]
        if last - first + 1 > MAX_PASSAGE_LINES:
            return set()
        picked.add((first, last))
    return picked


# Blocks a reader does not count as paragraphs: a list, a directive, indented code (and a
# table: every line of it starts with "|", and it has two at least).
_NOT_PROSE = re.compile(r"^(?:\s*(?:[-*+]|\d{1,3}[.)])\s|\.\.\s|    |\t)")


def _paragraphs(lines: list[str], headings: dict[int, int], start: int,
                end: int) -> list[tuple[int, int]]:
    """The paragraphs of lines ``start``-``end`` (module doc), in order."""
    paragraphs: list[tuple[int, int]] = []
    block: list[int] = []
    fenced = False

    def close() -> None:
        table = len(block) > 1 and all(lines[n - 1].lstrip().startswith("|") for n in block)
        if block and not table and not _NOT_PROSE.match(lines[block[0] - 1]):
            paragraphs.append((block[0], block[-1]))
        block.clear()

    for number in range(start, end + 1):
        line = lines[number - 1]
        if _FENCE.match(line):
            close()
            fenced = not fenced
        elif fenced or number in headings or (number - 1 in headings
                                              and headings[number - 1] >= 10):
            close()  # a heading, an RST title's underline, a fenced block's line
        elif line.strip():
            block.append(number)
        else:
            close()
    close()
    return paragraphs


def _quotes(instruction: str) -> list[str]:
    quotes = []
    for match in _QUOTE.finditer(instruction):
        text = " ".join(next(part for part in match.groups() if part is not None).split())
        text = text.strip(" .,;:")  # a quote that ends where a sentence ends: "... before."
        if len(text) >= MIN_QUOTE:
            quotes.append(text)
    return quotes


def _title(heading: str) -> str:
    """A heading line's title, lower case, without its ``#`` marks, numbering and closing
    punctuation."""
    title = heading.strip().strip("#").strip().rstrip(":.").strip()
    return _TITLE_NUMBER.sub("", title).lower()


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



# An instruction that may well leave one paragraph of many: the text's loss is the edit.
_SHRINKS = re.compile(r"\b(?:summar|condens|shorten|abridg|merg|combin|join|one paragraph|"
                      r"single paragraph|remov|delet|drop|cut|trim|keep only|only keep|"
                      r"replace|tl;?dr|abstract|concis|brief|compress|tighten|reduc|fewer)",
                      re.IGNORECASE)

MIN_LOST_PARAGRAPHS = 3
"""The fewest paragraphs a text must have for a one-paragraph rewrite of it to count as lost."""


def lost_paragraphs(before: str, after: str, instruction: str) -> str | None:
    """Why ``after``, a rewrite of the whole of ``before``, lost most of the text (a sentence),
    or ``None``: a text of at least :data:`MIN_LOST_PARAGRAPHS` paragraphs (runs of non-blank
    lines) rewritten as fewer than half as many, of less than half its length, by an
    instruction that does not ask to shorten, merge, summarise, remove or replace. The default
    model, asked to revise one paragraph of a text, answers with that paragraph alone
    (docs/quality.md, "Prose"); one asked about two answers with two. Cost: one scan of each
    text."""
    blocks = paragraph_runs(split_lines(before))
    kept = len(paragraph_runs(split_lines(after)))
    if (len(blocks) < MIN_LOST_PARAGRAPHS or not 0 < 2 * kept < len(blocks)
            or 2 * len(after.strip()) >= len(before.strip()) or _SHRINKS.search(instruction)):
        return None
    what = "one paragraph" if kept == 1 else f"{kept} paragraphs"
    return (f"the rewrite of a text of {len(blocks)} paragraphs is {what}: the rest of "
            "the text would be lost (with mode \"auto\", name the paragraph to revise: quote "
            "its first words or count it, \"the second paragraph\")")


def revised_paragraphs(before: str, after: str) -> tuple[tuple[int, int], ...] | None:
    """The paragraphs of ``before`` (their lines, 1-based, inclusive) that the paragraphs of
    ``after`` are revisions of, one each, in order: for each, the paragraph whose words it
    shares most, where that share is at least half and no other paragraph's comes within a
    fifth of it; ``None`` where one has no such paragraph, or two land on one or out of order.
    Cost: a word-level diff of each paragraph of ``after`` against each of ``before``
    (milliseconds for a few pages)."""
    lines = split_lines(before)
    replies = split_lines(after)
    paragraphs = [(" ".join(lines[start - 1:end]).split(), (start, end))
                  for start, end in paragraph_runs(lines)]  # read once, for every reply
    spans: list[tuple[int, int]] = []
    for first, last in paragraph_runs(replies):
        words = " ".join(replies[first - 1:last]).split()
        scores = sorted(((SequenceMatcher(None, theirs, words, autojunk=False).ratio(), span)
                         for theirs, span in paragraphs), reverse=True)
        if (not scores or scores[0][0] < 0.5
                or (len(scores) > 1 and scores[1][0] > scores[0][0] - 0.2)
                or (spans and scores[0][1][0] <= spans[-1][0])):
            return None
        spans.append(scores[0][1])
    return tuple(spans) or None


def paragraph_runs(lines: list[str]) -> list[tuple[int, int]]:
    """Every run of non-blank lines (1-based, inclusive), a heading or a list as any other."""
    blocks: list[tuple[int, int]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if blocks and blocks[-1][1] == number - 1:
            blocks[-1] = (blocks[-1][0], number)
        else:
            blocks.append((number, number))
    return blocks


__all__ = ["MAX_PASSAGE_LINES", "MAX_PLACES", "MAX_SECTION_LINES", "MIN_LOST_PARAGRAPHS",
           "MIN_QUOTE", "ORDINALS", "PART_TITLES", "lost_paragraphs", "named_passages",
           "paragraph_runs", "revised_paragraphs"]
