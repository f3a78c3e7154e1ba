from __future__ import annotations

from hypothesis import given

from copygram.language.lines import count_lines, split_lines
from tests.strategies import texts


def test_endings_are_kept_and_only_cr_lf_split() -> None:
    assert split_lines("a\nb\r\nc\rd") == ["a\n", "b\r\n", "c\r", "d"]
    assert split_lines("") == []
    assert split_lines("\n") == ["\n"]
    assert split_lines("x\x0cy\u2028z\n") == ["x\x0cy\u2028z\n"]
    assert split_lines("\r\r\n\n") == ["\r", "\r\n", "\n"]


@given(texts)
def test_split_is_lossless(document: str) -> None:
    lines = split_lines(document)
    assert "".join(lines) == document
    assert count_lines(document) == len(lines)
    assert all(line for line in lines)
    for line in lines[:-1]:
        assert line.endswith(("\n", "\r"))
