from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram import Copy, Gen, Program, RangeError, render, resolve
from copygram.language.lines import count_lines, split_lines
from tests.strategies import programs, texts


def test_copies_keep_line_endings_exactly() -> None:
    document = "a\r\nb\nc\rd"
    assert resolve(Program([Copy(2, 4), Gen("X"), Copy(1, 1)]), document) == "b\nc\rdXa\r\n"


def test_a_worked_edit() -> None:
    document = "def f(x):\n    return x + 1\n\n\nprint(f(2))\n"
    program = Program([Copy(1, 1), Gen("    return x + 2\n"), Copy(3, 5), Gen("# end")])
    assert resolve(program, document) == (
        "def f(x):\n    return x + 2\n\n\nprint(f(2))\n# end"
    )
    assert resolve(Program(), document) == ""
    assert resolve(Program([Gen("only new")]), "") == "only new"


@pytest.mark.parametrize("op", [Copy(2, 1), Copy(1, 4), Copy(4, 4)])
def test_bad_ranges_name_the_op_and_n(op: Copy) -> None:
    with pytest.raises(RangeError) as info:
        resolve(Program([Gen("x"), op]), "1\n2\n3\n")
    assert info.value.op == op and info.value.n_lines == 3
    assert "op #2" in str(info.value)


@pytest.mark.parametrize("start, end", [(0, 1), (1, 0), (-2, 3)])
def test_line_numbers_start_at_one_so_copy_refuses_zero(start: int, end: int) -> None:
    # Caught when the op is built, before any document is known.
    with pytest.raises(RangeError, match="start at 1"):
        Copy(start, end)


@given(st.data(), texts)
def test_copies_of_consecutive_ranges_covering_every_line_give_the_document_back(
        data: st.DataObject, document: str) -> None:
    n = count_lines(document)
    cuts = data.draw(st.sets(st.integers(1, n - 1), max_size=5)) if n > 1 else set()
    bounds = [0, *sorted(cuts), n]
    program = Program([Copy(a + 1, b) for a, b in itertools.pairwise(bounds) if a < b])
    assert len(program) == (len(cuts) + 1 if n else 0)
    assert resolve(program, document) == document


@given(st.data(), texts)
def test_ops_resolve_independently(data: st.DataObject, document: str) -> None:
    # resolve is a homomorphism: the program split anywhere resolves to the two halves joined,
    # and a string document and its pre-split lines give the same text.
    lines = split_lines(document)
    program = data.draw(programs(len(lines)))
    cut = data.draw(st.integers(0, len(program)))
    whole = resolve(program, document)
    assert whole == resolve(program[:cut], document) + resolve(program[cut:], document)
    assert whole == resolve(program, lines)
    assert resolve(Program([Gen(render(program))]), document) == render(program)
