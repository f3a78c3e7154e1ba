"""FreeText, the constraint of plain text: every token allowed, nothing forced, no copy; its text
and rollback as every constraint's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram.constraints import Constraint
from copygram.constraints.free import FreeText
from copygram.errors import ConstraintError

TOKENS = [b"", b"a", b"bc", "\u00e9".encode()[:1], "\u00e9".encode()[1:], b"\n"]
EOS = 0


def free() -> FreeText:
    return FreeText(len(TOKENS) + 2, TOKENS, EOS)


def test_it_is_a_constraint_that_allows_every_token() -> None:
    text = free()
    assert isinstance(text, Constraint)
    assert text.allowed().all() and text.allowed().shape == (len(TOKENS) + 2,)
    with pytest.raises(ValueError):
        text.allowed()[1] = False  # one shared mask: read-only
    out = np.zeros(len(TOKENS) + 2, dtype=np.bool_)
    text.fill_allowed(out)
    assert out.all()
    assert text.done and not text.finished and text.forced() == [] and text.n_lines == 0


@given(st.lists(st.integers(1, len(TOKENS) - 1), max_size=30), st.data())
def test_text_and_rollback(tokens: list[int], data: st.DataObject) -> None:
    text = free()
    assert all(text.consume(t) is None for t in tokens)
    assert text.program_bytes == b"".join(TOKENS[t] for t in tokens)
    assert text.program_text == text.program_bytes.decode("utf-8", errors="replace")
    text.consume(EOS)
    assert text.finished and not text.done and text.n_consumed == len(tokens) + 1
    back = data.draw(st.integers(0, len(tokens) + 1))
    text.rollback(back)
    kept = tokens[: len(tokens) + 1 - back] if back else tokens
    assert text.program_bytes == b"".join(TOKENS[t] for t in kept)
    assert text.finished == (back == 0)
    with pytest.raises(ConstraintError):
        text.rollback(text.n_consumed + 1)
