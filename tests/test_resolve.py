from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram import Copy, Gen, Program, RangeError, resolve
from copygram.lines import split_lines
from tests.strategies import programs, texts


def test_copies_keep_line_endings_exactly() -> None:
    document = "a\r\nb\nc\rd"
    assert resolve(Program([Copy(2, 4), Gen("X"), Copy(1, 1)]), document) == "b\nc\rdXa\r\n"


@pytest.mark.parametrize("op", [Copy(0, 1), Copy(2, 1), Copy(1, 4), Copy(4, 4)])
def test_bad_ranges_name_the_op_and_n(op: Copy) -> None:
    with pytest.raises(RangeError) as info:
        resolve(Program([Gen("x"), op]), "1\n2\n3\n")
    assert info.value.op == op and info.value.n_lines == 3
    assert "op #2" in str(info.value)


@given(st.data(), texts)
def test_resolve_is_concatenation(data: st.DataObject, document: str) -> None:
    lines = split_lines(document)
    program = data.draw(programs(len(lines)))
    expected = "".join(
        "".join(lines[op.start - 1 : op.end]) if isinstance(op, Copy) else op.text
        for op in program
    )
    assert resolve(program, document) == expected
    assert resolve(program, lines) == expected
