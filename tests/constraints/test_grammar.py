"""The outlines regex and the Lark grammar define the same language."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from copygram import ProgramSyntaxError, parse, render
from copygram.constraints.document_grammar import (
    copy_tag,
    document_lark,
    grammar_regex,
    literal_bytes,
)
from copygram.language.syntaxes import get_syntax
from tests.strategies import programs

LANGUAGE = re.compile(grammar_regex("lines", "(?:[1-9][0-9]*)"), re.DOTALL)

PIECES = ['<copy lines="', '"/>', "-", "0", "1", "9", "12", "<gen>", "</gen>", "&lt;", "&amp;",
          "&", "<", ">", '"', "x", "é", "\n", "<copy", "gen>", "lines="]


def _parses(text: str) -> bool:
    try:
        parse(text)
    except ProgramSyntaxError:
        return False
    return True


@settings(max_examples=400)
@given(st.lists(st.sampled_from(PIECES), max_size=14).map("".join))
def test_regex_and_lark_agree_on_fragment_soup(text: str) -> None:
    assert bool(LANGUAGE.fullmatch(text)) == _parses(text)


@settings(max_examples=200)
@given(programs())
def test_regex_accepts_rendered_programs(program: object) -> None:
    from copygram.language.ops import Program

    assert isinstance(program, Program)
    assert LANGUAGE.fullmatch(render(program))


def test_document_lark_only_changes_line_number() -> None:
    original = get_syntax("lines").grammar.splitlines()
    derived = document_lark("lines", 345).splitlines()
    changed = [(a, b) for a, b in zip(original, derived, strict=True) if a != b]
    assert len(changed) == 1 and changed[0][1].startswith("LINE_NUMBER: /")


def test_copy_tag_and_literals_come_from_the_grammar() -> None:
    tag = copy_tag("lines")
    assert (tag.open, tag.sep, tag.close) == (b'<copy lines="', b"-", b'"/>')
    assert set(b'<copy lines="-/>gen0123456789') <= set(literal_bytes("lines"))
