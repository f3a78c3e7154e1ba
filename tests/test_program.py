from __future__ import annotations

import pytest
from hypothesis import given

from copygram import Copy, CopygramError, Gen, Program, ProgramSyntaxError, parse, render
from copygram.language.ops import Op, escape_gen_text, unescape_gen_text
from copygram.language.syntaxes import get_syntax, syntax_names
from tests.strategies import programs, texts


def test_render_is_the_paper_syntax() -> None:
    program = Program([Copy(1, 3), Gen("x < y && z\n"), Copy(7, 7)])
    assert render(program) == (
        '<copy lines="1-3"/><gen>x &lt; y &amp;&amp; z\n</gen><copy lines="7-7"/>'
    )


def test_program_is_an_immutable_sequence() -> None:
    ops: list[Op] = [Gen("a"), Copy(2, 4)]
    program = Program(iter(ops))
    assert len(program) == 2 and program[1] == Copy(2, 4)
    assert program[:1] == Program([Gen("a")])
    assert program == Program([Gen("a"), Copy(2, 4)]) and hash(program) == hash(Program(program))
    with pytest.raises(AttributeError):
        program[1].start = 3  # type: ignore[misc]
    with pytest.raises(CopygramError):
        Program(["<gen>a</gen>"])  # type: ignore[list-item]


def test_escaping_covers_everything_that_could_close_a_gen() -> None:
    nasty = '</gen><copy lines="1-1"/>&lt;&"\r\n\t\x00🙂'
    assert "<" not in escape_gen_text(nasty)
    assert unescape_gen_text(escape_gen_text(nasty)) == nasty
    assert parse(render(Program([Gen(nasty)]))) == Program([Gen(nasty)])


@given(texts)
def test_escape_round_trip(text: str) -> None:
    escaped = escape_gen_text(text)
    assert "<" not in escaped
    assert unescape_gen_text(escaped) == text


@given(programs())
def test_parse_inverts_render(program: Program) -> None:
    assert parse(render(program)) == program


def test_empty_program_and_empty_gen() -> None:
    assert parse("") == Program()
    assert parse("<gen></gen>") == Program([Gen("")])


@pytest.mark.parametrize(
    "bad, line, column",
    [
        ('<copy lines="1-"/>', 1, 16),
        ('<copy lines="0-2"/>', 1, 1),
        ("<gen>a<b</gen>", 1, 1),
        ("<gen>ab", 1, 8),
        ('<gen>a\nb</gen> <copy lines="1-1"/>', 2, 8),
        ("<gen>&gt;</gen>", 1, 1),
    ],
)
def test_malformed_programs_raise_with_position(bad: str, line: int, column: int) -> None:
    with pytest.raises(ProgramSyntaxError) as info:
        parse(bad)
    assert info.value.line == line
    assert info.value.column >= 1
    assert "program line" in str(info.value)


def test_normalized_merges_without_changing_meaning() -> None:
    program = Program([Gen("a"), Gen(""), Gen("b"), Copy(1, 2), Copy(3, 4), Copy(6, 6)])
    assert program.normalized() == Program([Gen("ab"), Copy(1, 4), Copy(6, 6)])


@pytest.mark.parametrize("syntax", syntax_names())
def test_syntax_literals_agree_with_the_grammar_file(syntax: str) -> None:
    from copygram.constraints.document_grammar import copy_tag

    s = get_syntax(syntax)
    tag = copy_tag(syntax)
    assert (tag.open, tag.sep, tag.close) == (
        s.copy_open.encode(), s.copy_sep.encode(), s.copy_close.encode())
    assert parse(s.gen_open + "a&lt;" + s.gen_close, syntax) == Program([Gen("a<")])
    assert s.copy_open in s.describe() and s.gen_open in s.describe()


@pytest.mark.parametrize("syntax", syntax_names())
@given(program=programs())
def test_parse_inverts_render_in_every_syntax(syntax: str, program: Program) -> None:
    assert parse(render(program, syntax), syntax) == program


def test_compact_syntax_is_shorter() -> None:
    program = Program([Copy(12, 15), Gen("x\n")])
    assert render(program, "compact") == "<@12-15><g>x\n</g>"
    assert len(render(program, "compact")) < len(render(program))
    with pytest.raises(CopygramError, match="unknown edit syntax"):
        render(program, "nope")
