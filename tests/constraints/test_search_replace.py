"""The search/replace constraint (copygram.constraints.search_replace): it admits exactly the
programs that parse against the document, forces the rest of a decided line, runs on real
tokenizers."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram.backends.base import Backend
from copygram.constraints.replacement import line_except
from copygram.constraints.search_replace import document_lark, search_replace_constraint
from copygram.errors import CopygramError, ProgramSyntaxError
from copygram.language.block_render import render, render_heads
from copygram.language.lines import split_lines
from copygram.language.ops import Program
from copygram.language.resolve import resolve
from copygram.language.search_replace import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    DIVIDER,
    Block,
    may_head,
    parse,
    search_line,
)
from tests.decode.real_models import real_backend
from tests.strategies import head_edits, ordered_edits
from tests.test_formats import accepted

DOC = "def f(x):\n    y = x\n    return y + 1\n\n\ndef g():\n    return 2\n"


def accepts(document: str, text: str, plan: bool = False, heads: bool = False) -> bool:
    """Whether the constraint (byte vocabulary) takes every byte of ``text`` and may end."""
    return accepted(search_replace_constraint(split_lines(document), "byte", plan, heads), text)


def parses(document: str, text: str, heads: bool = False) -> bool:
    try:
        parse(text, document, heads=heads)
    except ProgramSyntaxError:
        return False
    return True


_pieces = st.sampled_from([BLOCK_OPEN, DIVIDER, BLOCK_CLOSE, "a\n", "b\n", "x\n", "\n", "=",
                           ">>>>>>> REPLACE", ">>>>>>> REPLACEx\n", "<<<<<<< SEARCH\n\n", "",
                           " >>> REPLACE\n", "a >>>>>>>>>> REPLACE \n", "a > b >>> REPLACE\n",
                           "======= >>> REPLACE\n", "  >>>>>>>REPLACE\n", ">>"])


@given(ordered_edits(), st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 40), _pieces),
                                 max_size=3))
def test_the_constraint_accepts_exactly_the_programs_that_parse(
        edit: tuple[str, Program], mutations: list[tuple[int, int, str]]) -> None:
    document, program = edit
    try:
        text = render(program, document)
    except CopygramError:
        text = ""
    for at, cut, piece in mutations:  # splice, cut and insert marker and line pieces
        at %= len(text) + 1
        text = text[:at] + piece + text[at + cut:]
    assert accepts(document, text) == parses(document, text)


@given(ordered_edits())
def test_every_rendered_program_is_accepted(edit: tuple[str, Program]) -> None:
    document, program = edit
    try:
        text = render(program, document)
    except CopygramError:
        return  # an edit blocks cannot spell (tests/test_search_replace.py)
    assert accepts(document, text)


@given(st.text(alphabet="> REPLACEx\n", max_size=30))
def test_a_replacement_line_is_anything_but_the_closing_marker(line: str) -> None:
    import re

    matched = re.fullmatch(line_except(BLOCK_CLOSE.rstrip("\n")), line) is not None
    assert matched == (line.endswith("\n") and "\n" not in line[:-1] and line != BLOCK_CLOSE)


@pytest.mark.parametrize("heads", [False, True], ids=["lines", "heads"])
def test_a_replacement_line_may_not_hold_the_closing_arrows(heads: bool) -> None:
    """The default model once closed a head block on the line that ended its function
    (``} >>>>>>>>>> REPLACE``) and typed on: the closing marker's arrows are barred from a
    replacement line, by the constraint and the parser alike, unless the document holds them."""
    closed = BLOCK_OPEN + "def g():\n" + DIVIDER + "def g():\n    return 3\n" + BLOCK_CLOSE
    for line in (">>>>>>>>\n", "    x >>>>>>> y\n", "    return 3 >>>>>>> REPLACE\n"):
        text = closed.replace("    return 3\n", "    return 3\n" + line)
        assert not accepts(DOC, text, heads=heads) and not parses(DOC, text, heads=heads)
        held = DOC + "# x >>>>>>> REPLACE\n"  # a document that holds the run admits it
        assert accepts(held, text, heads=heads) and parses(held, text, heads=heads)
    # Fewer arrows are code (JavaScript's >>> shift).
    shift = closed.replace("    return 3\n", "    return x >>> 2 >> 1\n")
    assert accepts(DOC, shift, heads=heads) and parses(DOC, shift, heads=heads)


@pytest.mark.parametrize("heads", [False, True], ids=["lines", "heads"])
def test_a_block_may_close_on_the_line_it_ends(heads: bool) -> None:
    """The default model closed a head block with ``} >>> REPLACE`` on a 385-line JavaScript
    file and, held to the marker on its own line, typed on: such a line reads as its text and
    the closing marker, by the constraint and the parser alike."""
    closed = BLOCK_OPEN + "def g():\n" + DIVIDER + "def g():\n    return 3\n" + BLOCK_CLOSE
    expected = parse(closed, DOC, heads=heads)
    for line in ("    return 3 >>>>>>> REPLACE\n", "    return 3 >>>>>>>>>> REPLACE\n",
                 "    return 3>>>REPLACE\n", "    return 3\n  >>>>>>> REPLACE\n"):
        text = closed.replace("    return 3\n" + BLOCK_CLOSE, line)
        assert accepts(DOC, text, heads=heads)
        assert parse(text, DOC, heads=heads) == expected
    # The text may not hold ">" (it could be a shift) nor read as a marker line.
    for line in ("    return 3 > 2 >>> REPLACE\n", "======= >>> REPLACE\n"):
        text = closed.replace("    return 3\n" + BLOCK_CLOSE, line)
        assert not accepts(DOC, text, heads=heads) and not parses(DOC, text, heads=heads)
    # Where a line of the document reads so, only the marker line closes: the line is text.
    held = DOC + "# x >>> REPLACE\n"
    text = closed.replace("    return 3\n", "    return 3 >>> REPLACE\n")
    assert accepts(held, text, heads=heads)
    assert "return 3 >>> REPLACE" in resolve(parse(text, held, heads=heads), held)


def test_runs_start_at_or_after_the_cursor() -> None:
    assert not accepts(DOC, BLOCK_OPEN + "    y = x\n" + DIVIDER + BLOCK_CLOSE
                       + BLOCK_OPEN + "def f(x):\n" + DIVIDER + BLOCK_CLOSE)
    assert not accepts(DOC, BLOCK_OPEN + "    y = 2\n" + DIVIDER + BLOCK_CLOSE)


def test_once_a_line_is_decided_its_rest_is_forced() -> None:
    constraint = search_replace_constraint(split_lines(DOC), "byte")
    for byte in (BLOCK_OPEN + "    r").encode():
        constraint.consume(byte)
    # Two lines after the cursor start "    return "; the rest is the model's choice.
    assert bytes(constraint.forced()) == b"eturn "
    for byte in b"eturn y":
        constraint.consume(byte)
    assert bytes(constraint.forced()) == b" + 1\n"


def test_a_program_ends_only_after_a_closing_marker_line() -> None:
    # In a document that holds the closing marker's arrows, ">>>>>>> REPLACEx" would still be
    # a replacement line: only the newline closes the block.
    held = split_lines(DOC + "# ours >>>>>>> theirs\n")
    constraint = search_replace_constraint(held, "byte")
    for byte in (BLOCK_OPEN + "\n" + DIVIDER + BLOCK_CLOSE[:-1]).encode():
        constraint.consume(byte)
    assert not constraint.done and constraint.forced() == []
    # In one that does not, no replacement line holds them: the newline is forced.
    barred = search_replace_constraint(split_lines(DOC), "byte")
    for byte in (BLOCK_OPEN + "\n" + DIVIDER + BLOCK_CLOSE[:-1]).encode():
        barred.consume(byte)
    assert not barred.done and barred.forced() == [ord("\n")]
    constraint.consume(ord("\n"))
    assert constraint.done and constraint.forced() == []
    constraint.consume(constraint.eos_token_id)
    assert constraint.finished and not constraint.allowed().any()
    constraint.rollback(2)
    assert not constraint.done and constraint.program_text.endswith("REPLACE")


def test_a_long_document_compiles_in_milliseconds() -> None:
    lines = [f"line {i} = {i * 7 % 13}\n" for i in range(2000)]
    started = time.perf_counter()
    constraint = search_replace_constraint(lines, "byte")
    elapsed = time.perf_counter() - started
    assert document_lark(lines).count("\n") > 6000  # O(n) rules
    for byte in (BLOCK_OPEN + lines[1500]).encode():
        constraint.consume(byte)
    assert elapsed < 5.0  # generous: the figure in the module doc is ~1 ms per 100 lines


# -- real tokenizers -----------------------------------------------------------------------------

@pytest.fixture(scope="module", params=[
    pytest.param(("llamacpp", "smollm2-135m"), marks=pytest.mark.llamacpp, id="smollm2"),
    pytest.param(("llamacpp", "qwen2.5-coder-0.5b"), marks=pytest.mark.llamacpp, id="qwen0.5b"),
])
def model(request: pytest.FixtureRequest) -> Iterator[Backend]:
    yield from real_backend(request.param, n_ctx=512)


CODE = ('function f(a) {\n  if (a < 0) {\n    return -a;\n  }\n  return a;\n}\n'
        'console.log(f(-2));\n')


def test_a_tokenized_program_is_accepted_and_resolves(model: Backend) -> None:
    text = (BLOCK_OPEN + "  if (a < 0) {\n" + DIVIDER + "  if (a <= 0) {\n" + BLOCK_CLOSE)
    constraint = search_replace_constraint(split_lines(CODE), model)
    constraint.consume_many(model.tokenize(text))
    assert constraint.done
    assert resolve(parse(constraint.program_text, CODE), CODE) == CODE.replace("<", "<=", 1)


def test_forced_tokens_spell_the_rest_of_the_decided_line(model: Backend) -> None:
    constraint = search_replace_constraint(split_lines(CODE), model)
    constraint.consume_many(model.tokenize(BLOCK_OPEN + "console"))
    spelled = b""
    while forced := constraint.forced():
        constraint.consume_many(forced)
        spelled += b"".join(model.token_bytes()[t] for t in forced)
    # The document's last line; after it only the divider can come, so some of that is forced
    # too (how much depends on where the tokenizer may still merge bytes).
    whole = BLOCK_OPEN + "console.log(f(-2));\n" + DIVIDER
    assert constraint.program_text.startswith(BLOCK_OPEN + "console.log(f(-2));\n")
    assert whole.startswith(constraint.program_text)
    assert whole.startswith(BLOCK_OPEN + "console" + spelled.decode())


def test_with_a_plan_the_program_opens_with_one_plan_line() -> None:
    blocks = BLOCK_OPEN + "    return 2\n" + DIVIDER + "    return 3\n" + BLOCK_CLOSE
    plan = "Plan: g must return 3.\n"
    assert accepts(DOC, plan + blocks, plan=True)
    assert accepts(DOC, plan, plan=True)  # nothing to change after all
    assert not accepts(DOC, blocks, plan=True)  # the plan comes first
    assert not accepts(DOC, "Plan:\n" + blocks, plan=True)  # with words in it
    assert not accepts(DOC, plan + plan + blocks, plan=True)  # one line
    assert not accepts(DOC, "Plan: " + "x" * 300 + "\n" + blocks, plan=True)  # a line, not an essay
    assert not accepts(DOC, plan + blocks)  # only where asked for
    # The parser reads the plan as words, not as an edit.
    assert parse(plan + blocks, DOC) == parse(blocks, DOC)
    constraint = search_replace_constraint(split_lines(DOC), "byte", True)
    assert bytes(constraint.forced()) == b"Plan:"


# -- heads (search_scope = "head") -----------------------------------------------------------


@given(head_edits(), st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 40), _pieces),
                              max_size=3))
def test_with_heads_the_constraint_accepts_exactly_the_programs_that_parse(
        edit: tuple[str, list[Block]], mutations: list[tuple[int, int, str]]) -> None:
    document, blocks = edit
    text = render_heads(blocks, document)
    assert accepts(document, text, heads=True)
    for at, cut, piece in mutations:
        at %= len(text) + 1
        text = text[:at] + piece + text[at + cut:]
    assert accepts(document, text, heads=True) == parses(document, text, heads=True)


def test_with_heads_the_divider_is_forced_after_the_head_line() -> None:
    constraint = search_replace_constraint(split_lines(DOC), "byte", heads=True)
    for byte in (BLOCK_OPEN + "def f").encode():
        constraint.consume(byte)
    assert bytes(constraint.forced()) == b"(x):\n" + DIVIDER.encode()
    # A second search line is not a head block; the next head comes after f's unit.
    assert not accepts(DOC, BLOCK_OPEN + "def f(x):\n    y = x\n" + DIVIDER + BLOCK_CLOSE,
                       heads=True)
    assert not accepts(DOC, BLOCK_OPEN + "def f(x):\n" + DIVIDER + BLOCK_CLOSE + BLOCK_OPEN
                       + "    y = x\n" + DIVIDER + BLOCK_CLOSE, heads=True)


def test_a_replacement_may_not_write_the_formats_markers_into_the_file() -> None:
    # Issue 40: a head block put a second divider and a SEARCH body inside its replacement, and
    # both were written into the file. The constraint admits neither line, as the parse refuses.
    for marker in (DIVIDER, BLOCK_OPEN):
        text = BLOCK_OPEN + "    return 2\n" + DIVIDER + "    return 3\n" + marker + BLOCK_CLOSE
        assert not accepts(DOC, text)
        assert not parses(DOC, text)
    # A document that has such a line may have it written again (a reStructuredText underline).
    rst = "Title\n=======\n\nOld text.\n"
    text = BLOCK_OPEN + "Old text.\n" + DIVIDER + "New\n=======\n" + BLOCK_CLOSE
    assert accepts(rst, text)
    assert parses(rst, text)
    assert resolve(parse(text, rst), rst) == "Title\n=======\n\nNew\n=======\n"


@given(st.text(alphabet="=<> SEARCHREPLACx", max_size=18))
def test_a_replacement_line_is_anything_but_a_marker_line(text: str) -> None:
    import re

    words = [m.rstrip("\n") for m in (BLOCK_OPEN, DIVIDER, BLOCK_CLOSE)]
    matched = re.fullmatch(line_except(*words), text + "\n") is not None
    assert matched == (text not in words)


def test_without_body_heads_no_head_is_a_line_inside_a_function() -> None:
    java = ("class Solution {\n    public int f(int x) {\n        int y = x;\n"
            "        return y + 1;\n    }\n}\n")
    for document, inner, outer in ((DOC, "    y = x\n", "def f(x):\n"),
                                   (java, "        int y = x;\n", "    public int f(int x) {\n")):
        lines = split_lines(document)

        def takes(head: str, body_heads: bool, lines: list[str] = lines) -> bool:
            constraint = search_replace_constraint(lines, "byte", heads=True,
                                                   body_heads=body_heads)
            return accepted(constraint, BLOCK_OPEN + head + DIVIDER + head + BLOCK_CLOSE)

        assert takes(inner, True) and takes(outer, True)  # the default: any line heads
        assert not takes(inner, False) and takes(outer, False)


@given(head_edits())
def test_without_body_heads_the_constraint_takes_the_programs_whose_heads_open_no_body_line(
        edit: tuple[str, list[Block]]) -> None:
    from copygram.language.units import body_lines

    document, blocks = edit
    lines = split_lines(document)
    inside = body_lines(lines)
    outside = all(block.search.start not in inside for block in blocks)
    constraint = search_replace_constraint(lines, "byte", heads=True, body_heads=False)
    assert accepted(constraint, render_heads(blocks, document)) == outside


# -- touch: a program held to reach the ranges an instruction names -------------------------------

Touch = tuple[tuple[tuple[int, int], ...], ...]


def _touching(document: str, text: str, touch: Touch, heads: bool) -> bool:
    """The rule spelled out: the program parses, and where some program of the document could
    meet every requirement of ``touch`` (:func:`_can_meet`), it does: for every requirement,
    some block's run (with heads: from its head to the end of the unit it opens) overlaps one
    of its ranges, the run read at the first occurrence of its lines after the previous block
    (the parser's reading) or at any later one (the constraint is a grammar: one reading that
    meets them is enough)."""
    from copygram.language.search_replace import parse_blocks, searchable
    from copygram.language.units import unit_end

    lines = split_lines(document)
    keys = [search_line(line) for line in lines]
    n = len(lines)

    def meets(span: tuple[int, int]) -> frozenset[int]:
        return frozenset(i for i, spans in enumerate(touch)
                         if any(span[0] <= end and start <= span[1] for start, end in spans))

    everything = frozenset(range(len(touch)))
    try:
        blocks = parse_blocks(text, lines, heads=heads)
    except ProgramSyntaxError:
        return False
    if not _can_meet(lines, heads, meets, everything):
        return True
    readings = {(1, frozenset[int]())}  # (cursor, requirements met) after each block
    for block in blocks:
        run = keys[block.search.start - 1 : block.search.start if heads else block.search.end]
        readings = {(end + 1, met | meets((k, end)))
                    for cursor, met in readings for k in range(cursor, n - len(run) + 2)
                    if keys[k - 1 : k - 1 + len(run)] == run
                    and all(searchable(line) for line in lines[k - 1 : k - 1 + len(run)])
                    for end in [unit_end(lines, k) if heads else k + len(run) - 1]}
    return any(met == everything for _, met in readings)


def _can_meet(lines: list[str], heads: bool, meets: Callable[[tuple[int, int]], frozenset[int]],
              everything: frozenset[int]) -> bool:
    """Whether some program of blocks in document order meets every requirement: the best of
    every choice of runs, searched over (cursor, met) states."""
    from copygram.language.search_replace import searchable
    from copygram.language.units import unit_end

    n = len(lines)
    seen: set[tuple[int, frozenset[int]]] = set()
    todo = [(1, frozenset[int]())]
    while todo:
        cursor, met = todo.pop()
        if met == everything:
            return True
        if (cursor, met) in seen:
            continue
        seen.add((cursor, met))
        for start in range(cursor, n + 1):
            if not searchable(lines[start - 1]) or (heads and not may_head(lines[start - 1])):
                continue
            ends = [unit_end(lines, start)] if heads else []
            if not heads:
                end = start
                while end <= n and searchable(lines[end - 1]):
                    ends.append(end)
                    end += 1
            todo += [(end + 1, met | meets((start, end))) for end in ends]
    return False


def _touch_accepts(document: str, text: str, touch: Touch, heads: bool) -> bool:
    constraint = search_replace_constraint(split_lines(document), "byte", heads=heads,
                                           touch=touch)
    return accepted(constraint, text)


_ranges = st.lists(st.tuples(st.integers(1, 12), st.integers(0, 3)), min_size=1, max_size=2)
# One to three requirements, each one or two ranges.
_reach = st.lists(_ranges, min_size=1, max_size=3).map(
    lambda groups: tuple(tuple(sorted((a, a + size) for a, size in group)) for group in groups))


@given(head_edits(), _reach, st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 40),
                                                _pieces), max_size=2))
def test_with_touch_head_blocks_are_accepted_exactly_where_they_reach_every_requirement(
        edit: tuple[str, list[Block]], touch: Touch,
        mutations: list[tuple[int, int, str]]) -> None:
    document, blocks = edit
    text = render_heads(blocks, document)
    for at, cut, piece in mutations:
        at %= len(text) + 1
        text = text[:at] + piece + text[at + cut:]
    _agree(document, text, touch, True)


def _agree(document: str, text: str, touch: Touch, heads: bool) -> None:
    """The constraint takes exactly the programs that meet each requirement (:func:`_touching`)."""
    assert _touch_accepts(document, text, touch, heads) == _touching(document, text, touch, heads)


@given(ordered_edits(), _reach)
def test_with_touch_line_blocks_are_accepted_exactly_where_they_reach_every_requirement(
        edit: tuple[str, Program], touch: Touch) -> None:
    document, program = edit
    try:
        text = render(program, document)
    except CopygramError:
        text = ""
    _agree(document, text, touch, False)


def _fgh() -> tuple[str, str, str, str]:
    document = ("import os\n\ndef f(x):\n    return x\n\ndef g(y):\n    return y\n\n"
                "def h(z):\n    return z\n")

    def block(head: str, body: str) -> str:
        return BLOCK_OPEN + head + DIVIDER + head + body + BLOCK_CLOSE

    return (document, block("def f(x):\n", "    return -x\n"),
            block("def g(y):\n", "    return -y\n"), block("def h(z):\n", "    return -z\n"))


def test_with_touch_a_program_may_edit_elsewhere_first_but_must_reach_a_range() -> None:
    document, f, g, h = _fgh()
    touch = (((6, 7),),)  # g
    assert _touch_accepts(document, g, touch, True)
    assert _touch_accepts(document, f + g, touch, True) and _touch_accepts(document, g + h,
                                                                           touch, True)
    assert not _touch_accepts(document, f, touch, True)
    assert not _touch_accepts(document, h, touch, True)  # past g: it can never come back
    assert not _touch_accepts(document, "", touch, True)
    assert _touch_accepts(document, f, (), True)
    grammar = document_lark(split_lines(document), heads=True, touch=touch)
    assert grammar.startswith("start: u0f1\n")


def test_with_touch_a_program_reaches_each_definition_listed_together() -> None:
    """"Fix bugs in f and h": both must be reached (in document order), either alone is not
    enough; where one requirement may be met by either, one block does."""
    document, f, g, h = _fgh()
    both = (((3, 4),), ((9, 10),))  # f, h
    assert _touch_accepts(document, f + h, both, True)
    assert _touch_accepts(document, f + g + h, both, True)
    assert not _touch_accepts(document, f, both, True)
    assert not _touch_accepts(document, h, both, True)
    assert not _touch_accepts(document, g + h, both, True)  # past f: it can never come back
    assert _touch_accepts(document, h, (((3, 4), (9, 10)),), True)  # either f or h
    with pytest.raises(ValueError, match="at most 3"):
        document_lark(split_lines(document), heads=True, touch=both * 2)


def _only_accepts(document: str, text: str, only: tuple[tuple[int, int], ...]) -> bool:
    constraint = search_replace_constraint(split_lines(document), "byte", heads=True, only=only)
    return accepted(constraint, text)


def _inside_only(document: str, text: str, only: tuple[tuple[int, int], ...]) -> bool:
    """The rule spelled out: the program parses and some reading of its heads (each at an
    occurrence of its line after the previous block's unit) opens units that each overlap a
    range of ``only``."""
    from copygram.language.search_replace import parse_blocks, searchable
    from copygram.language.units import unit_end

    lines = split_lines(document)
    keys = [search_line(line) for line in lines]
    try:
        blocks = parse_blocks(text, lines, heads=True)
    except ProgramSyntaxError:
        return False
    cursors = {1}
    for block in blocks:
        head = keys[block.search.start - 1]
        cursors = {end + 1 for cursor in cursors for k in range(cursor, len(lines) + 1)
                   if keys[k - 1] == head and searchable(lines[k - 1])
                   for end in [unit_end(lines, k)]
                   if any(a <= end and k <= b for a, b in only)}
    return bool(cursors)


@given(head_edits(), st.lists(st.integers(1, 14), min_size=1, max_size=3))
def test_with_only_every_head_block_opens_a_unit_that_overlaps_a_range(
        edit: tuple[str, list[Block]], at: list[int]) -> None:
    """A rename's blocks are held to the lines that use its old name (``only``): the constraint
    takes exactly the programs whose every block's unit overlaps one of them."""
    document, blocks = edit
    only = tuple(sorted({(k, k) for k in at}))
    text = render_heads(blocks, document)
    assert _only_accepts(document, text, only) == _inside_only(document, text, only)


def test_with_only_a_rename_edits_its_definition_and_uses_alone() -> None:
    document, f, g, h = _fgh()
    only = ((3, 3), (10, 10))  # f's first line; h's body, which we say uses f
    assert _only_accepts(document, f + h, only) and _only_accepts(document, f, only)
    assert not _only_accepts(document, f + g + h, only)
    assert not _only_accepts(document, g, only)
    assert _only_accepts(document, g, ())


def test_a_line_that_only_closes_brackets_heads_no_block() -> None:
    """A Java program headed a block on a lone ``}`` (its replacement appended two more), a C++
    one deleted one closing line after another: such a line opens nothing, so neither the
    constraint nor the parser takes it as a head; lines scope still searches it."""
    document = "int f() {\n  return 1;\n}\n\nint g() {\n  return 2;\n}\n"
    for head in ("}\n",):
        text = BLOCK_OPEN + head + DIVIDER + BLOCK_CLOSE
        assert not accepts(document, text, heads=True)
        assert not parses(document, text, heads=True)
    assert accepts(document, BLOCK_OPEN + "}\n" + DIVIDER + "};\n" + BLOCK_CLOSE)
    fixed = BLOCK_OPEN + "int g() {\n" + DIVIDER + "int g() {\n  return 3;\n}\n" + BLOCK_CLOSE
    assert accepts(document, fixed, heads=True) and parses(document, fixed, heads=True)


@pytest.mark.parametrize("heads", [False, True], ids=["lines", "heads"])
def test_a_replacement_line_may_not_open_with_a_markers_run(heads: bool) -> None:
    """After writing a unit again, the default model went on with ``======= REPLACE`` and the
    unit once more, or closed on ``======= REPLACE >>>>>>> REPLACE`` (large rows that add a
    function): a line that opens with the divider's or the opening marker's run of seven is
    markup, refused by the constraint and the parser alike, unless a document line opens so."""
    closed = BLOCK_OPEN + "def g():\n" + DIVIDER + "def g():\n    return 3\n" + BLOCK_CLOSE
    for line in ("======= REPLACE\n", "=======_REPLACE\n", "<<<<<<< SEARCH:\n", "=========\n"):
        text = closed.replace("    return 3\n", "    return 3\n" + line)
        assert not accepts(DOC, text, heads=heads) and not parses(DOC, text, heads=heads)
        held = DOC + "# x\n" + line.replace("\n", "") + "x\n"  # a line that opens so
        assert accepts(held, text, heads=heads) == parses(held, text, heads=heads)
    loose = closed.replace("    return 3\n" + BLOCK_CLOSE, "======= REPLACE >>>>>>> REPLACE\n")
    assert not accepts(DOC, loose, heads=heads) and not parses(DOC, loose, heads=heads)
    # Fewer, or not at the line's start, is text.
    for line in ("    x = '======'\n", "    # =======\n", "======\n"):
        text = closed.replace("    return 3\n", "    return 3\n" + line)
        assert accepts(DOC, text, heads=heads) and parses(DOC, text, heads=heads)
