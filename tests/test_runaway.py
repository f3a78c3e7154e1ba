"""A head block that ran on into the units after its own, closed where the next one began
(copygram.language.runaway)."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from copygram.language.lines import split_lines
from copygram.language.resolve import resolve
from copygram.language.runaway import RUNAWAY_LINES, close_runaway, ends_answer, next_unit
from copygram.language.search_replace import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    DIVIDER,
    may_head,
    parse,
    search_line,
    searchable,
)
from copygram.language.units import unit_end

DOC = ("import os\n\n\ndef a(x):\n    return x\n\n\ndef b(x):\n    return x + 1\n\n\n"
       "def c(x):\n    return x + 2\n")


def _open(head: str, replacement: str) -> str:
    return BLOCK_OPEN + head + DIVIDER + replacement


def test_a_block_that_retypes_the_next_unit_is_closed_where_it_began() -> None:
    ran = _open("def a(x):\n", "def a(x):\n    return -x\n\n\ndef b(x):\n    return x + 1\n\n")
    closed = close_runaway(ran, split_lines(DOC))
    assert closed == _open("def a(x):\n", "def a(x):\n    return -x\n") + BLOCK_CLOSE
    assert resolve(parse(closed, DOC, heads=True), split_lines(DOC)) == DOC.replace(
        "return x\n", "return -x\n")
    # A block before it stays; a partial last line is not read.
    first = _open("import os\n", "import sys\n") + BLOCK_CLOSE
    assert close_runaway(first + ran + "def c", split_lines(DOC)) == first + closed


def test_a_block_is_closed_only_where_it_copied_the_document_line_for_line() -> None:
    lines = split_lines(DOC)
    changed = _open("def a(x):\n", "def a(x):\n    return -x\n\ndef b(x):\n    return 0\n\n")
    assert close_runaway(changed, lines) is None  # b changed as it was typed: not a copy
    short = _open("def a(x):\n", "def a(x):\n    return -x\n\ndef b(x):\n")
    assert RUNAWAY_LINES > 1 and close_runaway(short, lines) is None
    nothing = _open("def a(x):\n", "\ndef b(x):\n    return x + 1\n\n")
    assert close_runaway(nothing, lines) is None  # it wrote nothing of its own
    last = _open("def c(x):\n", "def c(x):\n    return 2\n")
    assert close_runaway(last, lines) is None  # no unit after it
    assert close_runaway("no blocks", lines) is None
    assert close_runaway(_open("def z(x):\n", "def b(x):\n    return x + 1\n\n"), lines) is None


_pieces = st.lists(st.sampled_from(["a", "b", "", "  x = 1", "}", "q = 2"]), min_size=1,
                   max_size=6)
_layout = st.lists(st.sampled_from(["def f(x):", "    y = 1", "        z", "    return y", "",
                                    "}", "else:", "@d", "a", "x = [", "]"]),
                   min_size=4, max_size=16)


# Most drawn layouts have no head to open a block at or no unit after it, and are assumed away;
# on 5 of 41 seeds that tripped the filter health check (no failing example), so it is off.
@settings(suppress_health_check=[HealthCheck.filter_too_much])
@given(_layout, st.integers(0, 20), _pieces, st.integers(0, 2), st.integers(RUNAWAY_LINES, 12))
def test_a_closed_block_resolves_to_what_the_block_wrote_before_the_retyped_lines(
        layout: list[str], pick: int, written: list[str], gap: int, copied: int) -> None:
    """Whatever the layout: a block that wrote ``written``, then blank lines, then the
    document's lines from the next unit on (at least RUNAWAY_LINES of them) is read as the
    block that wrote ``written`` alone (its blank lines at the end left to the document)."""
    lines = [line + "\n" for line in layout]
    heads = [k for k in range(1, len(lines) + 1) if searchable(lines[k - 1])
             and lines[k - 1].strip() and may_head(lines[k - 1])]
    assume(heads)
    head = heads[pick % len(heads)]
    assume(lines.index(lines[head - 1]) == head - 1)  # the parser reads its first occurrence
    following = next_unit(lines, unit_end(lines, head))
    assume(following is not None and following - 1 + copied <= len(lines))
    assert following is not None
    own = [line + "\n" for line in written]
    assume(own[-1].strip())
    retyped = own + ["\n"] * gap + lines[following - 1 : following - 1 + copied]
    # Where the block's own lines already read as the next unit's (a layout that repeats), the
    # earliest such place is where it is closed: not this case.
    assume(all(retyped[i:] != lines[following - 1 : following - 1 + len(retyped) - i]
               for i in range(len(own))))
    closed = close_runaway(_open(search_line(lines[head - 1]), "".join(retyped)), lines)
    alone = _open(search_line(lines[head - 1]), "".join(own)) + BLOCK_CLOSE
    assert closed is not None
    document = "".join(lines)
    assert (resolve(parse(closed, document, heads=True), lines)
            == resolve(parse(alone, document, heads=True), lines))


def test_a_block_that_writes_an_elision_line_of_the_view_is_closed_before_it() -> None:
    # The model shown a view (copygram.language.focus) went on past its unit to the next part it
    # was shown, its elision line first: the block ends there, whatever follows.
    elision = "# ... lines 8-10 not shown ...\n"
    ran = _open("def a(x):\n", "def a(x):\n    return -x\n\n" + elision + "def c(x):\n    return 0\n")
    closed = close_runaway(ran, split_lines(DOC))
    assert closed == _open("def a(x):\n", "def a(x):\n    return -x\n") + BLOCK_CLOSE
    # Not where the document holds that line itself (then it is no elision of a view).
    own = DOC + elision
    assert close_runaway(ran, split_lines(own)) is None


def test_a_code_fence_ends_a_block_of_a_code_file() -> None:
    # The 1,319-line Python rename: the last block's replacement ended with ```python, the
    # start of a chat answer's next code block. In a code file (fences) it closes the block.
    for fence in ("```python\n", "```\n", "  ```js \n"):
        ran = _open("def a(x):\n", "def a(x):\n    return -x\n" + fence)
        closed = close_runaway(ran, split_lines(DOC), fences=True)
        assert closed == _open("def a(x):\n", "def a(x):\n    return -x\n") + BLOCK_CLOSE
        assert close_runaway(ran, split_lines(DOC)) is None  # prose: a fence may be meant
        assert close_runaway(ran, split_lines(DOC + fence), fences=True) is None  # held
    assert not ends_answer("x = ```", True) and ends_answer("```c++", True)


def test_a_block_that_retypes_a_later_unit_past_others_is_closed_where_it_began() -> None:
    # Shown a view, the model went on past units it was not shown (b) to one it was (c).
    ran = _open("def a(x):\n", "def a(x):\n    return -x\n\n\ndef c(x):\n    return x + 2\n\n")
    closed = close_runaway(ran, split_lines(DOC), min_lines=2)
    assert closed == _open("def a(x):\n", "def a(x):\n    return -x\n") + BLOCK_CLOSE
    # c's lines changed as they were typed: no close there.
    changed = ran.replace("x + 2", "x - 2")
    assert close_runaway(changed, split_lines(DOC), min_lines=2) is None
