"""Units: the function, class or paragraph line that a line opens, found by layout alone.

Search/replace blocks of ``search_scope = "head"`` name a unit by its first line and replace all
of it (:mod:`copygram.language.search_replace`). So that a model never has to write the lines it
keeps in order to say where a change ends, the end is found here, from indentation and brackets,
the same way for every language (no parser per language, so no parse error on broken code, the
very code a bug fix edits):

* a unit is its first line (the head) and the lines after it that are indented deeper, with the
  blank lines among them (never those after its last line);
* a line at the head's indentation that opens with a closing bracket (``}``, ``)``, ``]``) ends
  the unit and belongs to it (a C-like body's ``}``, a signature's ``) -> int:``), unless it
  opens the next part of the same statement (ends with ``{``, ``(``, ``[`` or ``:``, as ``} else
  {`` does), where the unit goes on;
* so do Python's ``else``/``elif``/``except``/``finally`` lines at the head's indentation, and the
  lines after a decorator (``@name``) head, up to and with the function it decorates;
* a blank head is a unit of its own line, and so is a line that nothing after it continues (a
  top-level statement, a paragraph written as one line).

A unit written again without its closing line (the body's ``}`` left out, as a model may do)
keeps the document's closing line (:func:`closing_line`, :func:`leaves_open`): read otherwise,
the edit would drop the brace. A replacement that stops where the body would begin (its last
line at the head's indentation opens one: ``const f = (a) => {``, ``def f(a):``) rewrote the
unit's header, not the unit: it replaces the head and the lines at its indentation before the
body (:func:`header_end`, :func:`opens_body`), and the body stays. Read otherwise, a model that
changed a signature only would delete the function's body.

What this cannot see: a multi-line string whose lines start at the head's indentation or
less ends the unit there; a paragraph wrapped over several lines at one indentation is one
unit per line.

Property (tested): for two equal lines ``k < j``, ``unit_end(lines, j) >= unit_end(lines, k)``, so
reading a head at its first occurrence after a cursor leaves every later block the most room.
Cost: linear in the unit's lines.
"""

from __future__ import annotations

from collections.abc import Sequence

_CLOSERS = ")]}"
_GOES_ON = ("{", "(", "[", ":")
_CLAUSES = ("else", "elif", "except", "finally")


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def _continues(text: str) -> bool:
    """Whether a line at the head's indentation belongs to the head's unit (module doc)."""
    stripped = text.strip()
    if stripped[0] in _CLOSERS:
        return True
    word = stripped.split(maxsplit=1)[0].rstrip(":")
    return word in _CLAUSES and stripped.endswith(":")


def unit_end(lines: Sequence[str], start: int) -> int:
    """The last line (1-based) of the unit whose head is line ``start`` of ``lines`` (lines with
    or without endings); ``start`` itself where nothing continues it (module doc)."""
    if not 1 <= start <= len(lines):
        raise IndexError(f"line {start} is not a line of a {len(lines)}-line document")
    head = lines[start - 1].rstrip("\r\n")
    if not head.strip():
        return start
    depth = _indent(head)
    decorating = head.lstrip().startswith("@")
    end = start
    for number in range(start + 1, len(lines) + 1):
        text = lines[number - 1].rstrip("\r\n")
        if not text.strip():
            continue  # a blank line belongs to the unit only where a later line does
        indent = _indent(text)
        if indent > depth:
            end = number
            continue
        if indent < depth:
            break
        if decorating:  # the decorated definition (or the next decorator) is part of it
            end = number
            decorating = text.lstrip().startswith("@")
            continue
        if not _continues(text):
            break
        end = number
        if not text.rstrip().endswith(_GOES_ON):
            break
    return end


def closing_line(lines: Sequence[str], start: int, end: int) -> bool:
    """Whether line ``end`` is the closing line of the unit ``start..end`` (a ``}`` or ``};`` at
    the head's indentation that ends it, as a C-like body's does)."""
    if end <= start:
        return False
    head, last = lines[start - 1].rstrip("\r\n"), lines[end - 1].rstrip("\r\n")
    stripped = last.strip()
    return (_indent(last) == _indent(head) and stripped[:1] in _CLOSERS
            and not stripped.endswith(_GOES_ON))


def header_end(lines: Sequence[str], start: int) -> int:
    """The last line of the header of the unit whose head is line ``start``: the head and the
    lines after it at its indentation (a decorated definition's) before the first line indented
    deeper (the body); the unit's last line where it has no body."""
    depth = _indent(lines[start - 1].rstrip("\r\n"))
    end = start
    for number in range(start + 1, unit_end(lines, start) + 1):
        text = lines[number - 1].rstrip("\r\n")
        if text.strip() and _indent(text) > depth:
            break
        end = number
    return end


def _last_written(text: str) -> str | None:
    """The last non-blank line of ``text``, without its ending and trailing blanks."""
    written = [line.rstrip() for line in text.splitlines() if line.strip()]
    return written[-1] if written else None


def opens_body(text: str, head: str) -> bool:
    """Whether ``text`` (a unit written again) stops where the body would begin: its last
    non-blank line is at ``head``'s indentation or less and opens a block (ends with ``{``,
    ``(``, ``[`` or ``:``)."""
    last = _last_written(text)
    return (last is not None and _indent(last) <= _indent(head.rstrip("\r\n"))
            and last.endswith(_GOES_ON))


def leaves_open(text: str, head: str) -> bool:
    """Whether ``text`` (a unit written again) ends inside its body: its last non-blank line is
    indented deeper than ``head``, so the unit's closing line is still to come."""
    last = _last_written(text)
    return last is not None and _indent(last) > _indent(head.rstrip("\r\n"))


_LABELS = ("case", "default", "public", "private", "protected")


def closes_with_brackets(lines: Sequence[str]) -> bool:
    """Whether the document's bodies close with a bracket line (C, JavaScript, Java, Go...)
    rather than by indentation alone (Python, YAML, prose): a line that opens a body with ``{``
    is closed by a ``}`` line at its indentation, and no fewer lines open a body with ``{`` than
    with ``:`` (a ``:`` line followed by a deeper one, not a ``case``/``default`` or access
    label; so a Python file with a dict literal stays Python, and a C file with a ``switch``
    stays braced). Cost: one pass over the lines."""
    written = [(line.strip(), _indent(line)) for line in lines if line.strip()]
    opened: set[int] = set()
    closed = False
    braces = colons = 0
    for k, (text, indent) in enumerate(written):
        closed = closed or (text[0] == "}" and indent in opened)
        if text.endswith("{"):
            opened.add(indent)
            braces += 1
        elif (text.endswith(":") and k + 1 < len(written) and written[k + 1][1] > indent
              and text.split(maxsplit=1)[0].rstrip(":") not in _LABELS):
            colons += 1
    return closed and braces >= colons


__all__ = ["closes_with_brackets", "closing_line", "header_end", "leaves_open", "opens_body",
           "unit_end"]
