"""An edit of a tab-indented file, made in a view of it in four spaces and written back in tabs.

The model writes code in its own unit, four spaces, and edits a file laid out in it better: the
same small C++ edit-kinds rows passed 12/20 in four spaces and 8/20 in tabs, and 11/20 in tabs
shown this way; the small C++, JavaScript and Python tab rows 36/60 against 32/60 (Zen 5,
Qwen2.5-Coder-1.5B; docs/quality.md, "Files indented by tabs or two spaces"). So a session shows a tab-indented file to the model
as :func:`~copygram.language.indent_style.spaced_view` (where it goes back exactly), runs the
edit and its checks on that view, and :func:`in_tabs` writes the result back in tabs: its text,
and the program's generated text, so that ``resolve(result.program, document) == result.text``
still holds for the document itself. The events before the result are the view's (a program's
text, a rewrite's reply: what the model wrote). Cost: a pass over the result's lines and one
parse of each text of a Python file, the one language whose parse reads indentation
(milliseconds).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence

from copygram.decode.events import DoneEvent, EditResult, Event
from copygram.errors import DamagedEditError
from copygram.language.damage import find_damage
from copygram.language.indent_style import tabbed
from copygram.language.lines import split_lines
from copygram.language.ops import Copy, Gen, Program
from copygram.language.resolve import resolve


def in_tabs(events: Iterator[Event], document: str, view: str, language: str,
            on_damage: str, tokenize: Callable[[str], Sequence[int]]) -> Iterator[Event]:
    """``events`` (an edit of ``view``, :func:`~copygram.language.indent_style.spaced_view` of
    ``document``) with the result written back in tabs, its ``redone`` edit too. A result that
    parsed in the view and no longer does in tabs (Python reads a tab and spaces after it as
    another depth than spaces alone) is refused, :class:`~copygram.errors.DamagedEditError`
    (kept, marked, where ``on_damage`` is ``"keep"``): never written as a success.
    ``language``: as :func:`~copygram.language.damage.find_damage` takes it; ``tokenize``: the
    model's, for the result's ``output_tokens`` in tabs. An edit the view refused is refused
    with its result in tabs too (``--force`` writes what it shows)."""
    try:
        yield from _in_tabs(events, document, view, language, on_damage, tokenize)
    except DamagedEditError as exc:
        if isinstance(exc.result, EditResult):
            exc.result = _tabbed(exc.result, document, tokenize)
        raise


def _in_tabs(events: Iterator[Event], document: str, view: str, language: str,
             on_damage: str, tokenize: Callable[[str], Sequence[int]]) -> Iterator[Event]:
    for event in events:
        if not isinstance(event, DoneEvent):
            yield event
            continue
        result = event.result
        back = _tabbed(result, document, tokenize)
        # Only Python's parse reads indentation: in the braced languages tabs for spaces
        # cannot break one, so no other file is parsed again here.
        broke = [d for d in find_damage(document, back.text, language=language)
                 if d.kind == "parse"] if language == "python" else []
        if broke and not any(d.kind == "parse"
                             for d in find_damage(view, result.text, language=language)):
            if on_damage == "keep":
                yield DoneEvent(dataclasses.replace(back, damage=(*back.damage, *broke)),
                                event.text)
                return
            raise DamagedEditError(  # its result goes back to tabs in in_tabs
                "the edit would damage the file, so it was not applied: written back in the "
                f"file's tabs it no longer parses ({'; '.join(map(str, broke))}): the model "
                "wrote it in four spaces a depth with depths that tabs cannot show. Set "
                "tabs_as_spaces = false in the [route] table to edit the file in tabs",
                result=dataclasses.replace(result, damage=tuple(broke)), damage=tuple(broke))
        yield DoneEvent(back, event.text)


def _tabbed(result: EditResult, document: str,
            tokenize: Callable[[str], Sequence[int]]) -> EditResult:
    """``result`` (of the view) in tabs: text, program, and the edit it redid."""
    text = tabbed(result.text)
    result.stats.tabbed_lines = sum(a != b for a, b in zip(split_lines(text),
                                                           split_lines(result.text),
                                                           strict=True))
    result.stats.output_tokens = len(tokenize(text)) if text else 0
    program = _tabbed_program(result.program)
    if resolve(program, document) != text:  # a program that does not name whole lines
        program = Program([Gen(text)] if text else [])
    redone = None if result.redone is None else _tabbed(result.redone, document, tokenize)
    return dataclasses.replace(result, text=text, program=program, redone=redone)


def _tabbed_program(program: Program) -> Program:
    """``program``'s generated lines in tabs: each line a gen starts, not the rest of a line
    that a gen before it began."""
    ops: list[Copy | Gen] = []
    at_start = True
    for op in program:
        if isinstance(op, Gen) and op.text:
            lines = split_lines(op.text)
            ops.append(Gen("".join(line if k == 0 and not at_start else tabbed(line)
                                   for k, line in enumerate(lines))))
            at_start = op.text.endswith(("\n", "\r"))
        else:
            ops.append(op)
            at_start = at_start if isinstance(op, Gen) else True
    return Program(ops)


__all__ = ["in_tabs"]
