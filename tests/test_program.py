from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram import Copy, CopygramError, Gen, Program, ProgramSyntaxError, parse, render
from copygram.language.gentext import text_regex
from copygram.language.ops import Op
from copygram.language.syntaxes import escape_gen_text, get_syntax, syntax_names, unescape_gen_text
from tests.strategies import programs, texts


def test_render_is_the_paper_syntax() -> None:
    program = Program([Copy(1, 3), Gen("x < y && z\n"), Copy(7, 7)])
    assert render(program) == (
        '<copy lines="1-3"/><gen>x < y && z\n</gen><copy lines="7-7"/>'
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


def test_code_is_written_verbatim_and_only_reserved_words_are_escaped() -> None:
    code = 'if (a < b && c <= d) { s = "&lt;" + "<ge" + x<count + "</ge" + "<cop"; }\n'
    assert escape_gen_text(code) == code
    assert escape_gen_text("x</gen>y") == "x&lt;/gen>y"
    assert escape_gen_text('x<copy lines="1-2"/>') == 'x&lt;copy lines="1-2"/>'
    assert escape_gen_text("<gen>x<gen/>") == "&lt;gen>x&lt;gen/>"
    assert escape_gen_text("x&lt;/gen>y") == "x&amp;lt;/gen>y"
    assert unescape_gen_text("x&amp;amp;lt;/gen>y") == "x&amp;lt;/gen>y"
    assert escape_gen_text("<@1-2></g><g>", "compact") == "&lt;@1-2>&lt;/g>&lt;g>"
    nasty = '</gen><copy lines="1-1"/>&lt;/gen>&&lt;</gen>"\r\n\t\x00🙂<'
    assert "</gen>" not in escape_gen_text(nasty) and "<copy" not in escape_gen_text(nasty)
    assert unescape_gen_text(escape_gen_text(nasty)) == nasty
    assert parse(render(Program([Gen(nasty)]))) == Program([Gen(nasty)])


# Texts dense in the pieces of the reserved words and of their entities.
_PIECES = ["<", "/", "g", "e", "n", ">", "c", "o", "p", "y", "@", "&", "amp;", "lt;", "</gen>",
           "</g>", "<copy", "<@", "<gen>", "<gen", "<g>", "&lt;/gen>", "&lt;gen>", "x"]
_tricky = st.lists(st.sampled_from(_PIECES), max_size=16).map("".join)


@given(st.one_of(texts, _tricky), st.sampled_from(syntax_names()))
def test_escape_round_trip(text: str, syntax: str) -> None:
    words = get_syntax(syntax).reserved_words
    escaped = escape_gen_text(text, syntax)
    assert not any(word in escaped for word in words)
    assert unescape_gen_text(escaped, syntax) == text
    if not any(word in text or "&lt;" + word[1:] in text for word in words):
        assert escaped == text  # what a model writes is what it means


@given(_tricky, st.sampled_from(syntax_names()))
def test_gen_text_is_any_text_without_a_reserved_word(text: str, syntax: str) -> None:
    s = get_syntax(syntax)
    # The grammar file is up to date (Lark reads its \x2f as "/").
    assert s.gen_text_regex == text_regex(s.reserved_words).replace(r"\x2f", "/")
    matches = re.fullmatch(s.op_pattern, s.gen_open + text + s.gen_close) is not None
    assert matches == (not any(word in text for word in s.reserved_words))


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
        ("<gen>a</gen>b</gen>", 1, 13),  # text may hold "<", but not a closing tag
        ("<gen>ab", 1, 1),
        ('<gen>a\nb</gen> <copy lines="1-1"/>', 2, 8),
        ("<gen>a</gen>>", 1, 13),
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
    assert (tag.gen_open, tag.gen_close) == (s.gen_open.encode(), s.gen_close.encode())
    escaped_close = "&lt;" + s.gen_close[1:]
    assert parse(s.gen_open + "a < b" + escaped_close + s.gen_close, syntax) == Program(
        [Gen("a < b" + s.gen_close)])
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
