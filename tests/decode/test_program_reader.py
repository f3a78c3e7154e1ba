"""OpReader: the ops of a growing program text, read incrementally, equal the parse of it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram import Copy, Gen, Program, parse, render
from copygram.decode.program_reader import OpReader
from copygram.errors import ProgramSyntaxError
from copygram.language.syntaxes import get_syntax
from tests.strategies import programs


@given(programs(), st.sampled_from(["lines", "compact"]), st.lists(st.integers(0, 400)))
def test_reading_in_any_steps_gives_the_parse(program: Program, syntax: str,
                                              cuts: list[int]) -> None:
    text = render(program, syntax)
    reader = OpReader(get_syntax(syntax))
    for cut in sorted(c for c in cuts if c <= len(text)):
        partial = reader.advance(text[:cut])
        assert text[:cut] == render(Program(reader.ops), syntax) + partial
    assert reader.program(text) == parse(text, syntax) == program


def test_a_shorter_text_is_read_again_from_the_start() -> None:
    reader = OpReader(get_syntax("lines"))
    reader.advance('<copy lines="1-3"/><gen>x</gen>')
    assert reader.ops == [Copy(1, 3), Gen("x")] and reader.resets == 0
    assert reader.advance('<copy lines="2-2"/><ge') == "<ge"
    assert reader.ops == [Copy(2, 2)] and reader.resets == 1


def test_an_incomplete_program_is_an_error_naming_the_place() -> None:
    with pytest.raises(ProgramSyntaxError):
        OpReader(get_syntax("lines")).program('<copy lines="1-3"/><gen>x')
