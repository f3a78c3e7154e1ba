"""A document's indentation unit, and the lines an edit wrote in another unit put back in it.

A model writes the code it generates in its own habit, whatever the file's. Measured (Zen 3,
Qwen2.5-Coder-1.5B, the default config, "Fix the bug in median"): in a Python file indented with
tabs, and in one indented with two spaces, program mode wrote the fixed function back in four
spaces. The file still parsed, but every line of the function changed, and a tab-indented
Makefile, a linter or a formatter check would reject it. (A tab-indented JavaScript file and a
four-space one kept their units.) A user's editor keeps the file's style; so does copygram:

* :func:`indent_unit` reads the unit a document indents by: ``"\\t"`` where every indented line
  starts with tabs, ``n`` spaces where every one starts with spaces (``n`` the commonest step by
  which a line goes deeper than the line before it, a step from the margin counted twice),
  ``None`` where the document mixes them or has too few indented lines to tell (nothing is
  changed then). Block comment continuation lines (`` * text``) are not read: C and Java files
  indented with tabs hold them.
* :func:`restyled` pairs the edit's lines with the document's by their text without its
  indentation, and reads each run of lines the edit wrote (lines that pair with none, or with
  one at another indentation; a line kept indented as the document has it ends a run). A run's
  lines go back to the document's unit where they were written in one other: at least two of
  them keep a document line's text with its indentation moved from the document's unit to that
  one (``\\t`` at depth 2 written as eight spaces), the run's own steps from the line before it
  are that unit's (lines moved one depth deeper, into a loop, show no step of another unit),
  and its first indented line and nine in ten of the others are whole depths of it. In a
  document indented with tabs, any line of a run that starts with a space is read so (no line
  of that document does), in the unit its pairs or its steps show, else four spaces. Each line
  keeps its depth; the spaces past its last whole depth (an alignment) stay as they are.

* :func:`spaced_view` and :func:`tabbed`: a tab-indented file shown to the model in four
  spaces a depth, and what the edit wrote in that view written back in tabs. The same small
  C++ edit-kinds rows passed 12/20 laid out in four spaces and 8/20 in tabs (Zen 5, Qwen2.5-
  Coder-1.5B, docs/quality.md "Files indented by tabs"): the model edits in its own unit
  better. Only where the round trip gives the file back exactly.

An instruction that speaks of indentation or formatting (:func:`asks_layout`: "indent",
"tabs", "PEP 8", "reformat", "style", ...) is taken at its word: its edit is not read. It
never moves a line to another depth: each line keeps its depth in the unit it was written
in. A caller checks that the restyled text is no more damaged than the edit's own
(:mod:`copygram.decode.checked`). Cost: one ``difflib`` comparison of the two texts' lines and a pass
over them (Zen 3: 4 ms for a 368-line file, 34 ms for 1,334 lines written again whole).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence

from copygram.language.lines import split_lines

TAB = "\t"
_UNITS = (TAB, "  ", "    ", "        ", "   ")
_MIN_LINES = 2  # indented lines a document needs before its unit is read
_MIN_VOTES = 2  # lines of a run that show the edit wrote the document's lines in another unit
_WHOLE = 0.9  # the share of a run's indented lines that must be whole depths of that unit
# An instruction about layout: the edit's indentation is what was asked for (a reference edit
# of the dev split's EditEval rows turned a tab-indented function into four spaces for PEP 8).
_LAYOUT = re.compile(r"\b(?:indent\w*|dedent\w*|tabs?|spaces|whitespace|pep ?8|format\w*|"
                     r"reformat\w*|style|styled|black|prettier|gofmt|clang-format|lint\w*)\b",
                     re.IGNORECASE)


def asks_layout(instruction: str) -> bool:
    """Whether ``instruction`` speaks of indentation or formatting (its edit's layout is then
    what was asked for, not a habit to undo)."""
    return _LAYOUT.search(instruction) is not None


def _lead(line: str) -> tuple[str, str]:
    """``(indentation, the rest)`` of ``line`` without its ending: spaces and tabs only."""
    text = line.rstrip("\r\n")
    body = text.lstrip(" \t")
    return text[:len(text) - len(body)], body


def indent_unit(lines: Sequence[str], after: str = "") -> str | None:
    """The unit ``lines`` (a document's) indent by (module doc): ``"\\t"``, a run of 2-8
    spaces, or ``None`` where they mix tabs and spaces at the start of lines or fewer than two
    lines are indented. ``after``: the indentation of the line before them (a part of a file
    read alone: a first line no deeper than it is no step). Linear in the lines."""
    tabbed = spaced = 0
    steps: Counter[int] = Counter()
    # The last line's indentation width in spaces (0 after a tab-led line).
    before = len(after) if TAB not in after else 0
    for line in lines:
        lead, body = _lead(line)
        if not body or body.startswith("*"):
            continue
        if lead.startswith(TAB):
            tabbed += 1
            before = 0
        elif lead:
            spaced += 1
            width = len(lead) if TAB not in lead else 0
            if width > before:  # a step from the margin is a whole depth: it counts twice
                steps[width - before] += 1 if before else 2
            before = width
        else:
            before = 0
    if tabbed >= _MIN_LINES and not spaced:
        return TAB
    if spaced >= _MIN_LINES and not tabbed and steps:
        step = max(sorted(steps), key=lambda width: steps[width])  # ties: the smallest
        return " " * step if 2 <= step <= 8 else None
    return None


def relaid(lead: str, unit: str, into: str) -> str | None:
    """``lead`` (an indentation written in ``unit``) written in ``into``: each whole depth of
    ``unit`` one of ``into``, the rest (an alignment) as it was; ``None`` where ``lead`` is not
    written in ``unit`` (a tab in a space unit, a tab after the spaces of a tab unit)."""
    if unit == TAB:
        rest = lead.lstrip(TAB)
        depth = len(lead) - len(rest)
        if TAB in rest:
            return None
    else:
        if TAB in lead:
            return None
        depth, extra = divmod(len(lead), len(unit))
        rest = " " * extra
    return into * depth + rest


def _whole(lead: str, unit: str) -> bool:
    """Whether ``lead`` is whole depths of ``unit``."""
    return lead == unit * (len(lead) // len(unit)) if unit != TAB else not lead.strip(TAB)


def _written_in(pairs: Sequence[tuple[str, str]], new: Sequence[str], unit: str,
                context: str) -> str | None:
    """The unit a run's ``new`` lines were written in where it is not the document's ``unit``
    and the run shows it (module doc), else ``None``; ``pairs``: the indentations of its lines
    that keep a document line's text, the document's first; ``context``: the indentation of
    the line before the run."""
    votes: Counter[str] = Counter()
    for was, now in pairs:
        votes.update(other for other in _UNITS
                     if other != unit and relaid(was, unit, other) == now)
    leads = [lead for lead, body in map(_lead, new) if lead and body]
    if not leads:
        return None
    if unit == TAB and any(lead.startswith(" ") for lead in leads):
        if votes:
            return votes.most_common(1)[0][0]
        return indent_unit(new, context) or "    "  # the model's habit where nothing else tells
    # The run's own steps, from the line before it, must say so too: a function written again
    # in the document's unit with a call's arguments re-wrapped shows steps of that unit
    # whatever its pairs vote, and lines moved one depth deeper (into a loop, out of an
    # illegal indentation) show no step at all, though each pair reads as a doubled unit.
    other = indent_unit(new, context)
    whole = sum(_whole(lead, other) for lead in leads) if other is not None else 0
    if (other is None or other == unit or votes[other] < _MIN_VOTES
            or not _whole(leads[0], other) or whole < _WHOLE * len(leads)):
        return None
    return other


def relaid_text(text: str, unit: str, into: str) -> str:
    """``text`` (indented by ``unit``) with every line's indentation written in ``into``
    (:func:`relaid`); a line not written in ``unit`` stays as it is."""
    lines = split_lines(text)
    for k, line in enumerate(lines):
        lead, body = _lead(line)
        moved = relaid(lead, unit, into) if lead and body else None
        if moved is not None:
            lines[k] = moved + line[len(lead):]
    return "".join(lines)


SPACES = "    "  # the model's own unit: what a tab-indented file is shown to it in


def spaced_view(document: str) -> str | None:
    """``document``, indented by tabs (:func:`indent_unit`), with each tab depth written as
    four spaces (an alignment after the tabs kept), where :func:`tabbed` gives ``document``
    back exactly; ``None`` otherwise (another unit, or a line the round trip would change: a
    tab after spaces, four spaces of alignment after a tab). Linear in the document."""
    if indent_unit(split_lines(document)) != TAB:
        return None
    view = relaid_text(document, TAB, SPACES)
    return view if tabbed(view) == document else None


def tabbed(text: str) -> str:
    """``text`` written in four spaces a depth (a :func:`spaced_view` and what an edit wrote in
    it) with each whole four spaces at the start of a line a tab again, the rest (an alignment)
    kept; a line whose indentation holds a tab stays as it is."""
    return relaid_text(text, SPACES, TAB)


def restyled(document: str, text: str) -> tuple[str, int]:
    """``text`` (an edit of ``document``) with the lines it wrote in another indentation unit
    than the document's put in the document's (module doc), and how many lines that changed;
    ``(text, 0)`` where the document's unit cannot be read or nothing was written in another.
    Line endings and every other character stay as they are."""
    before = split_lines(document)
    unit = indent_unit(before)
    if unit is None:
        return text, 0
    after = split_lines(text)
    # Lines are paired by their text without indentation, so that a line written again at
    # another indentation still pairs with its own (and never with an equal line of another
    # depth, as a whole-line comparison would pair a "pass" at depth 2 with one at depth 1).
    old, new = [_lead(line) for line in before], [_lead(line) for line in after]
    paired: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, [body for _, body in old],
                                      [body for _, body in new], autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        paired.update((b + k, a + k) for k in range(size))
    lines = list(after)
    changed = 0
    for run in _runs(old, new, paired):
        pairs = [(old[paired[j]][0], new[j][0]) for j in run if j in paired]
        context = next((new[k][0] for k in range(run[0] - 1, -1, -1) if new[k][1]), "")
        written = _written_in([pair for pair in pairs if pair[0] != pair[1]],
                              [after[j] for j in run], unit, context)
        if written is None:
            continue
        for j in run:
            lead, body = new[j]
            if not lead or not body or (unit == TAB and lead.startswith(TAB)):
                continue
            moved = relaid(lead, written, unit)
            if moved is not None and moved != lead:
                lines[j] = moved + after[j][len(lead):]
                changed += 1
    return "".join(lines), changed


def _runs(old: Sequence[tuple[str, str]], new: Sequence[tuple[str, str]],
          paired: dict[int, int]) -> list[list[int]]:
    """The runs of the edit's lines (``new``: each ``(indentation, the rest)``, as ``old`` the
    document's) that it wrote (lines that pair with no line of the document or with one at
    another indentation) with the blank and margin lines among them, split where a line is
    kept indented as the document has it."""
    runs: list[list[int]] = [[]]
    for j, (lead, body) in enumerate(new):
        if j in paired and lead and body and old[paired[j]][0] == lead:
            runs.append([])  # kept as it was: the edit's own unit is the document's here
        else:
            runs[-1].append(j)
    return [run for run in runs if any(new[j][0] and new[j][1] for j in run)]


__all__ = ["TAB", "asks_layout", "indent_unit", "relaid", "relaid_text", "restyled"]
