"""Search/replace programs (copygram.language.search_replace): parse, resolve, render."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from copygram.errors import CopygramError, ProgramSyntaxError
from copygram.language.block_render import render, render_heads
from copygram.language.lines import split_lines
from copygram.language.ops import Copy, Gen, Program
from copygram.language.resolve import resolve
from copygram.language.search_replace import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    DIVIDER,
    Block,
    blocks_program,
    find_run,
    merge_retyped,
    parse,
    parse_blocks,
)
from copygram.language.types import LineRange
from tests.strategies import head_edits, ordered_edits

DOC = "def f(x):\n    y = x\n    return y + 1\n\n\ndef g():\n    return y + 1\n"


def block(search: str, replacement: str) -> str:
    return BLOCK_OPEN + search + DIVIDER + replacement + BLOCK_CLOSE


def test_a_block_replaces_its_run_and_everything_else_is_copied() -> None:
    program = parse(block("    return y + 1\n", "    return y - 1\n"), DOC)
    assert program == Program([Copy(1, 2), Gen("    return y - 1\n"), Copy(4, 7)])
    assert resolve(program, DOC) == DOC.replace("y + 1", "y - 1", 1)


def test_a_repeated_run_means_its_first_occurrence_after_the_cursor() -> None:
    text = block("    return y + 1\n", "A\n") + block("    return y + 1\n", "B\n")
    assert resolve(parse(text, DOC), DOC) == (
        "def f(x):\n    y = x\nA\n\n\ndef g():\nB\n")


def test_the_empty_program_leaves_the_document_alone() -> None:
    assert resolve(parse("", DOC), DOC) == DOC


def test_an_empty_replacement_deletes_the_run() -> None:
    assert resolve(parse(block("\n\n", ""), DOC), DOC) == DOC.replace("\n\n\n", "\n")


@pytest.mark.parametrize(("text", "where"), [
    (block("    return y + 2\n", "x\n"), "not a run of document lines"),
    (block("    y = x\n", "x\n") + block("def f(x):\n", "x\n"), "at or after line 3"),
    (BLOCK_OPEN + DIVIDER + "x\n" + BLOCK_CLOSE, "search part is empty"),
    (BLOCK_OPEN + "    y = x\n", "no '======='"),
    (BLOCK_OPEN + "    y = x\n" + DIVIDER + "x\n", "no '>>>>>>> REPLACE'"),
    ("hello\n", "expected '<<<<<<< SEARCH'"),
])
def test_a_bad_program_is_a_syntax_error_that_says_where(text: str, where: str) -> None:
    with pytest.raises(ProgramSyntaxError, match=where) as info:
        parse(text, DOC)
    assert info.value.line >= 1


def test_a_marker_line_of_the_document_is_never_searched() -> None:
    doc = "a\n=======\nb\n"
    # The divider ends the run, so a run never takes in the document's "=======" line: here
    # "a" alone is replaced, by everything up to the closing marker.
    text = BLOCK_OPEN + "a\n=======\n" + DIVIDER + "x\n" + BLOCK_CLOSE
    assert resolve(parse(text, doc), doc) == "=======\nx\n=======\nb\n"
    with pytest.raises(ProgramSyntaxError, match="search part is empty"):
        parse(block("=======\n", "x\n"), doc)


def test_replacements_take_the_documents_line_endings() -> None:
    doc = "a\r\nb\r\nc\r\n"
    assert resolve(parse(block("b\n", "x\ny\n"), doc), doc) == "a\r\nx\r\ny\r\nc\r\n"


def test_a_last_line_without_ending_stays_without_one() -> None:
    doc = "a\nb"
    assert parse_blocks(block("b\n", "c\n"), split_lines(doc))[0].search == (2, 2)
    assert resolve(parse(block("b\n", "c\n"), doc), doc) == "a\nc"
    assert resolve(parse(block("a\n", "z\n"), doc), doc) == "z\nb"


# -- render: the inverse, for any edit that keeps the document's order -----------------------

@given(ordered_edits())
def test_render_then_parse_gives_the_same_result(edit: tuple[str, Program]) -> None:
    document, program = edit
    target = resolve(program, document)
    try:
        text = render(program, document)
    except CopygramError:
        # Blocks cannot change whether the document ends with a line ending (the pool has no
        # marker line, the one other edit they cannot spell).
        assert target and target.endswith("\n") != document.endswith("\n")
        return
    assert resolve(parse(text, document), document) == resolve(program, document)


def test_render_writes_a_move_as_blocks_of_its_result() -> None:
    # A move is an edit too: render writes it as blocks of the result it makes.
    program = Program([Copy(3, 3), Copy(1, 2)])
    doc = "a\nb\nc\n"
    assert resolve(parse(render(program, doc), doc), doc) == "c\na\nb\n"


# -- merge_retyped: a replacement that types its run's neighbours again -----------------------


def merged(text: str, document: str) -> str:
    lines = split_lines(document)
    return resolve(blocks_program(merge_retyped(parse_blocks(text, lines), lines), lines),
                   document)


def test_lines_retyped_after_the_run_are_taken_into_it() -> None:
    # The model searched one line, then wrote its fix and the two lines after it again.
    text = block("    y = x\n", "    y = x * 2\n    return y + 1\n\n")
    assert resolve(parse(text, DOC), DOC).count("return y + 1\n\n\n") == 1  # duplicated
    assert merged(text, DOC) == DOC.replace("y = x\n", "y = x * 2\n")


def test_lines_retyped_before_the_run_are_taken_into_it() -> None:
    text = block("    return y + 1\n", "def f(x):\n    y = x\n    return y - 1\n")
    assert merged(text, DOC) == DOC.replace("y + 1", "y - 1", 1)


def test_a_run_never_grows_into_the_next_block_nor_back_into_the_previous_one() -> None:
    text = (block("    y = x\n", "    y = -x\n    return y + 1\n")
            + block("    return y + 1\n", "    return y + 2\n"))
    # The first replacement ends with line 3, which the second block searches: left as written.
    lines = split_lines(DOC)
    first, second = merge_retyped(parse_blocks(text, lines), lines)
    assert (first.search.start, first.search.end) == (2, 2)
    assert (second.search.start, second.search.end) == (3, 3)


def test_an_ordinary_edit_is_left_alone() -> None:
    text = block("    return y + 1\n", "    return y - 1\n") + block("def g():\n", "def h():\n")
    lines = split_lines(DOC)
    assert merge_retyped(parse_blocks(text, lines), lines) == parse_blocks(text, lines)


def test_a_retyped_last_line_without_ending_keeps_the_document_ending_open() -> None:
    document = "a = 1\nb = 2"
    assert merged(block("a = 1\n", "a = 3\nb = 2\n"), document) == "a = 3\nb = 2"


@given(st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n"]), min_size=1, max_size=12),
       st.data())
def test_merging_drops_exactly_the_retyped_neighbours(document_lines: list[str],
                                                      data: st.DataObject) -> None:
    n = len(document_lines)
    document = "".join(document_lines)
    start = data.draw(st.integers(1, n))
    end = data.draw(st.integers(start, n))
    # New lines the document does not have, then up to all of the run's neighbours retyped.
    # (With no new line, a replacement of retyped lines alone can read either way: see the
    # docstring.)
    new = data.draw(st.lists(st.sampled_from(["X\n", "Y\n"]), min_size=1, max_size=3))
    before = data.draw(st.integers(0, start - 1))
    after = data.draw(st.integers(0, n - end))
    retyped = (document_lines[start - 1 - before : start - 1] + new
               + document_lines[end : end + after])
    search = "".join(document_lines[start - 1 : end])
    assume(find_run(split_lines(document), split_lines(search), 1) == start)
    intended = resolve(parse(block(search, "".join(new)), document), document)
    assert merged(block(search, "".join(retyped)), document) == intended


# -- heads (search_scope = "head") -----------------------------------------------------------


def test_a_head_block_replaces_the_whole_unit_its_line_opens() -> None:
    text = block("def f(x):\n", "def f(x):\n    return x - 1\n")
    (head,) = parse_blocks(text, split_lines(DOC), heads=True)
    assert (head.search.start, head.search.end) == (1, 3)
    assert resolve(parse(text, DOC, heads=True), DOC) == (
        "def f(x):\n    return x - 1\n\n\ndef g():\n    return y + 1\n")


def test_a_head_search_part_is_one_line() -> None:
    text = block("def f(x):\n    y = x\n", "")
    with pytest.raises(ProgramSyntaxError, match="one line"):
        parse(text, DOC, heads=True)


def test_the_next_head_comes_after_the_unit() -> None:
    # "    return y + 1" inside f's unit cannot head the next block; the one in g can.
    text = (block("def f(x):\n", "def f(x):\n    return x\n")
            + block("    return y + 1\n", "    return 0\n"))
    blocks = parse_blocks(text, split_lines(DOC), heads=True)
    assert [b.search.start for b in blocks] == [1, 7]


@given(head_edits())
def test_render_heads_then_parse_gives_the_blocks_back(edit: tuple[str, list[Block]]) -> None:
    document, blocks = edit
    text = render_heads(blocks, document)
    assert parse_blocks(text, split_lines(document), heads=True) == blocks
    program = parse(text, document, heads=True)
    assert program == blocks_program(blocks, split_lines(document))


def test_render_heads_refuses_a_run_that_is_not_a_unit() -> None:
    with pytest.raises(CopygramError, match="not the unit"):
        render_heads([Block(LineRange(1, 2), "")], DOC)


def test_a_braced_unit_written_without_its_closing_brace_keeps_the_documents() -> None:
    document = "const f = (x) => {\n  return x + 1;\n}\nf(2);\n"
    for written in ("  return x - 1;\n", "  return x - 1;\n}\n"):
        text = block("const f = (x) => {\n", "const f = (x) => {\n" + written)
        fixed = resolve(parse(text, document, heads=True), document)
        assert fixed == "const f = (x) => {\n  return x - 1;\n}\nf(2);\n"
    # A replacement that closes the unit its own way replaces the brace.
    text = block("const f = (x) => {\n", "const f = (x) => x - 1;\n")
    assert resolve(parse(text, document, heads=True), document) == "const f = (x) => x - 1;\nf(2);\n"


def test_a_head_block_that_rewrites_only_the_header_keeps_the_body() -> None:
    # The model changed the signature and stopped where the body begins: read as the whole
    # unit, the edit would delete the body.
    document = "const f = (x, y) => {\n  return x + 1;\n};\nf(2);\n"
    text = block("const f = (x, y) => {\n", "const f = (x) => {\n")
    (head,) = parse_blocks(text, split_lines(document), heads=True)
    assert (head.search.start, head.search.end) == (1, 1)
    fixed = resolve(parse(text, document, heads=True), document)
    assert fixed == "const f = (x) => {\n  return x + 1;\n};\nf(2);\n"
    assert render_heads([head], document) == text


@pytest.mark.parametrize(("line", "heads"), [
    ("}\n", False), ("  });\n", False), ("]\n", False), ("},\n", False), (")\n", False),
    ("} else {\n", True), ("int f() {\n", True), ("\n", True), ("x = 1\n", True),
])
def test_a_line_that_only_closes_brackets_may_not_head_a_block(line: str, heads: bool) -> None:
    from copygram.language.search_replace import may_head

    assert may_head(line) is heads


def test_render_heads_refuses_a_closing_line_for_a_head() -> None:
    document = "int f() {\n  return 1;\n}\n"
    with pytest.raises(CopygramError, match="only closes brackets"):
        render_heads([Block(LineRange(3, 3), "")], document)
