"""A tab-indented file edited in a view of it in four spaces and written back in tabs
(copygram.decode.tab_view, EditSession.stream)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from copygram import EditSession
from copygram.decode.events import DoneEvent, EditResult, Event
from copygram.decode.stats import RunStats
from copygram.decode.tab_view import in_tabs
from copygram.errors import DamagedEditError
from copygram.language.indent_style import spaced_view
from copygram.language.ops import Copy, Gen, Program
from copygram.language.resolve import resolve
from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER
from copygram.testing import ScriptedBackend

DOCUMENT = "def f(x):\n\tif x:\n\t\treturn 1\n\treturn 0\n\n\nprint(f(1))\n"
FIXED = DOCUMENT.replace("return 1", "return 2")
VIEW = spaced_view(DOCUMENT) or ""
FIXED_VIEW = VIEW.replace("return 1", "return 2")


def as_bytes(text: str) -> list[int]:  # a tokenizer, as ScriptedBackend's
    return list(text.encode())


def prompt_of(backend: ScriptedBackend) -> str:
    return bytes(backend.calls[0].ids).decode("utf-8", errors="replace")


def test_the_view_is_the_file_in_four_spaces() -> None:
    assert VIEW == DOCUMENT.replace("\t", "    ") and "\t" not in VIEW


def test_a_rewrite_of_the_view_is_written_back_in_tabs() -> None:
    backend = ScriptedBackend(reply=f"```python\n{FIXED_VIEW}```\n")
    result = EditSession(backend).edit(DOCUMENT, "Make it return 2 when x is set.")
    assert result.mode == "rewrite" and result.text == FIXED
    assert resolve(result.program, DOCUMENT) == FIXED
    assert result.stats.tabbed_lines == 3  # the indented lines
    assert result.stats.output_tokens == len(FIXED.encode())  # the file's, in tabs
    # The model read the file in four spaces.
    assert "    if x:" in prompt_of(backend) and "\tif x:" not in prompt_of(backend)


def test_an_edit_the_view_refused_is_attached_in_tabs() -> None:
    # A program that damaged the view, with no redo: refused, and its text in the file's tabs.
    block = f"{BLOCK_OPEN}def f(x):\n{DIVIDER}def f(x):\n    if x:\n{BLOCK_CLOSE}"
    session = EditSession(ScriptedBackend(reply=block), mode="program", on_damage="error")
    with pytest.raises(DamagedEditError) as refused:
        session.edit(DOCUMENT, "Fix f: return 2 when x is set.")
    attached = refused.value.result
    assert isinstance(attached, EditResult) and "\tif x:\n" in attached.text
    assert "    " not in attached.text


def test_a_program_on_the_view_resolves_against_the_file() -> None:
    block = (f"{BLOCK_OPEN}def f(x):\n{DIVIDER}def f(x):\n    if x:\n        return 2\n"
             f"    return 0\n{BLOCK_CLOSE}")
    backend = ScriptedBackend(reply=block)
    result = EditSession(backend, mode="program").edit(DOCUMENT, "Fix f: return 2 when x is set.")
    assert result.mode == "program" and result.text == FIXED
    assert resolve(result.program, DOCUMENT) == FIXED
    assert "    if x:" in result.program_text  # what the model wrote: the view's


@pytest.mark.parametrize("session, instruction", [
    ({"mode": "rewrite"}, "Make it return 2 when x is set."),  # plain greedy's own output
    ({"tabs_as_spaces": False}, "Make it return 2 when x is set."),
    ({}, "Indent f with spaces, then make it return 2."),  # the layout is what is asked
])
def test_the_model_reads_the_tabs_where_the_view_does_not_apply(
        session: dict[str, object], instruction: str) -> None:
    backend = ScriptedBackend(reply=FIXED)
    result = EditSession(backend, **session).edit(DOCUMENT, instruction)
    assert "\tif x:" in prompt_of(backend) and result.text == FIXED


def done(text: str, program: Program | None = None) -> Iterator[Event]:
    yield DoneEvent(EditResult(text=text, program=program or Program([Gen(text)]),
                               program_text="", stats=RunStats(), mode="program"), "")


def test_generated_lines_are_written_back_and_copies_kept() -> None:
    # A gen that begins a line is written back in tabs; one that ends a line another began is
    # not: the program still resolves against the file to the result.
    view = "if x:\n    a = 1\n    b = 2\n"
    program = Program([Copy(1, 1), Gen("    a = 3"), Gen("  # three\n    c = 4\n"), Copy(3, 3)])
    (event,) = list(in_tabs(done(resolve(program, view), program), "if x:\n\ta = 1\n\tb = 2\n",
                            view, "python", "rewrite", as_bytes))
    assert isinstance(event, DoneEvent)
    result = event.result
    assert result.text == "if x:\n\ta = 3  # three\n\tc = 4\n\tb = 2\n"
    assert resolve(result.program, "if x:\n\ta = 1\n\tb = 2\n") == result.text


def test_a_result_that_tabs_would_break_is_refused() -> None:
    # Six spaces, then eight: deeper in spaces, but a tab and two spaces against two tabs is a
    # TabError in Python. The view's result parses; written back, it would not.
    document = "def f():\n\tif x:\n\t\treturn 1\n"
    view = spaced_view(document) or ""
    result = "def f():\n      if x:\n        return 1\n"
    with pytest.raises(DamagedEditError, match="no longer parses") as refused:
        list(in_tabs(done(result), document, view, "python", "rewrite", as_bytes))
    # What --force would write is the edit in the file's tabs.
    attached = refused.value.result
    assert isinstance(attached, EditResult)
    assert attached.text == "def f():\n\t  if x:\n\t\treturn 1\n"
    (kept,) = in_tabs(done(result), document, view, "python", "keep", as_bytes)
    assert isinstance(kept, DoneEvent) and [d.kind for d in kept.result.damage] == ["parse"]
