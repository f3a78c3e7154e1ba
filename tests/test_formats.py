"""copygram.language.formats: one format object per syntax family, and the public parse, render
and compile_constraint on every syntax, program mode's default (head blocks) first."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

import copygram
from copygram.config import SessionConfig
from copygram.errors import ConfigError, ConstraintError, CopygramError
from copygram.language.formats import (
    DEFAULT_SYNTAX,
    BlockFormat,
    TagFormat,
    default_syntax,
    format_names,
    get_format,
)
from copygram.language.ops import Copy, Gen, Program
from copygram.language.resolve import resolve
from tests.strategies import ordered_edits

DOCUMENT = ("import math\n\n\ndef area(r):\n    return math.pi * r\n\n\n"
            "def perimeter(r):\n    return math.pi * r\n\n\nprint(area(2))\n")
FIXED = DOCUMENT.replace("    return math.pi * r\n\n\nprint", "    return 2 * math.pi * r\n\n\nprint")


def accepted(constraint: copygram.Constraint, text: str) -> bool:
    """Whether a byte-vocabulary constraint takes every byte of ``text`` and may end there."""
    try:
        for byte in text.encode("utf-8"):
            constraint.consume(byte)
    except ConstraintError:
        return False
    return constraint.done


def test_the_default_route_parses_renders_and_constrains() -> None:
    assert DEFAULT_SYNTAX == "search_replace" == SessionConfig().syntax
    edit = Program([Gen(FIXED)])
    text = copygram.render(edit, DEFAULT_SYNTAX, DOCUMENT)
    # One head block: the smallest unit that holds the change and that its first line names
    # (the changed line reads like one in area, met first), written once.
    assert text == ("<<<<<<< SEARCH\ndef perimeter(r):\n=======\ndef perimeter(r):\n"
                    "    return 2 * math.pi * r\n>>>>>>> REPLACE\n")
    program = copygram.parse(text, DEFAULT_SYNTAX, DOCUMENT)
    assert resolve(program, DOCUMENT) == FIXED
    assert accepted(copygram.compile_constraint(DOCUMENT, "byte", syntax=DEFAULT_SYNTAX), text)
    # Line blocks (search_scope "lines") search the changed line alone, with a neighbour where
    # the line alone would be met earlier.
    lines = copygram.render(edit, DEFAULT_SYNTAX, DOCUMENT, search_scope="lines")
    assert resolve(copygram.parse(lines, DEFAULT_SYNTAX, DOCUMENT, search_scope="lines"),
                   DOCUMENT) == FIXED


@pytest.mark.parametrize("scope", ["head", "lines"])
@settings(max_examples=60, deadline=None)
@given(edit=ordered_edits())
def test_blocks_render_what_they_parse_back(scope: str, edit: tuple[str, Program]) -> None:
    document, program = edit
    try:
        text = copygram.render(program, "search_replace", document, search_scope=scope)
    except CopygramError:
        return  # an edit the blocks cannot spell (a marker-like line, a unit it splits)
    back = copygram.parse(text, "search_replace", document, search_scope=scope)
    assert resolve(back, document) == resolve(program, document)
    constraint = copygram.compile_constraint(document, "byte", syntax="search_replace",
                                             search_scope=scope)
    assert accepted(constraint, text)


LAYOUT = ("class A:\n    x = 1\n\n\ndef f(x):\n    return x\n\n\ndef g(y):\n    return y\n\n\n"
          "print(f(1))\n")


@pytest.mark.parametrize(("edited", "blocks"), [
    # A function inserted between two: into the block of the one after it.
    (LAYOUT.replace("def g(y):", "def h():\n    return 0\n\n\ndef g(y):"), 1),
    # A function deleted with the blank lines after it: its unit and theirs, each emptied.
    (LAYOUT.replace("def g(y):\n    return y\n\n\n", ""), 3),
    # Two functions changed, and a line appended after the last statement.
    (LAYOUT.replace("return x\n", "return x + 1\n").replace("return y\n", "return -y\n"), 2),
    (LAYOUT + "print(2)\n", 1),
])
def test_head_blocks_spell_edits_between_and_across_units(edited: str, blocks: int) -> None:
    text = copygram.render(Program([Gen(edited)]), "search_replace", LAYOUT)
    assert text.count("<<<<<<< SEARCH\n") == blocks
    assert resolve(copygram.parse(text, "search_replace", LAYOUT), LAYOUT) == edited


@pytest.mark.parametrize("syntax", ["lines", "compact"])
def test_copy_tags_need_no_document(syntax: str) -> None:
    program = Program([Copy(1, 5), Gen("    return 2 * math.pi * r\n"), Copy(10, 12)])
    text = copygram.render(program, syntax)
    assert copygram.parse(text, syntax) == program == copygram.parse(text, syntax, DOCUMENT)
    assert accepted(copygram.compile_constraint(DOCUMENT, "byte", syntax=syntax), text)


def test_formats_are_chosen_once_by_name() -> None:
    assert format_names() == ["compact", "lines", "search_replace"]
    assert get_format("search_replace") == BlockFormat(heads=True)
    assert get_format("search_replace", search_scope="unit") == BlockFormat(heads=False)
    assert get_format("lines") == TagFormat("lines")
    assert (default_syntax("llguidance"), default_syntax("outlines")) == ("search_replace",
                                                                         "lines")
    with pytest.raises(CopygramError, match="unknown edit syntax 'xml'"):
        get_format("xml")
    with pytest.raises(CopygramError, match="pass document="):
        copygram.parse("", "search_replace")


def test_each_format_refuses_the_others_options() -> None:
    with pytest.raises(ConfigError, match="merge_retyped acts on search/replace blocks"):
        SessionConfig(syntax="lines", merge_retyped=True)
    with pytest.raises(ConfigError, match="verify_copies acts on copy tags"):
        SessionConfig(verify_copies=True)
    with pytest.raises(ConfigError, match='needs engine = "llguidance"'):
        SessionConfig(syntax="search_replace", engine="outlines")
    with pytest.raises(ConfigError, match="copy_to_end acts on copy tags"):
        copygram.compile_constraint(DOCUMENT, "byte", syntax="search_replace", to_end=True)
    with pytest.raises(ConfigError, match="search_plan acts on search/replace blocks"):
        copygram.compile_constraint(DOCUMENT, "byte", syntax="lines", plan=True)
