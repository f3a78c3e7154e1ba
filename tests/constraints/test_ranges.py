from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram.constraints.ranges import range_alternatives, range_regex


def test_exhaustive_small_ranges() -> None:
    universe = [str(x) for x in range(400)]
    for lo in range(150):
        for hi in range(lo, 150):
            pattern = re.compile(range_regex(lo, hi))
            got = {s for s in universe if pattern.fullmatch(s)}
            assert got == {str(x) for x in range(lo, hi + 1)}, (lo, hi)


@given(st.integers(1, 10**7), st.integers(0, 10**8), st.data())
def test_membership(n: int, probe: int, data: st.DataObject) -> None:
    pattern = re.compile(range_regex(1, n))
    assert bool(pattern.fullmatch(str(probe))) == (1 <= probe <= n)
    assert not pattern.fullmatch("0" + str(data.draw(st.integers(1, n))))  # no leading zero
    assert not pattern.fullmatch("")


@given(st.integers(0, 10**12), st.integers(0, 10**12))
def test_alternatives_are_disjoint_and_small(a: int, b: int) -> None:
    lo, hi = min(a, b), max(a, b)
    alts = range_alternatives(lo, hi)
    assert len(alts) <= 2 * len(str(hi)) + 2  # O(log n) alternatives
    for value in {lo, hi, (lo + hi) // 2}:
        assert sum(bool(re.fullmatch(alt, str(value))) for alt in alts) == 1


def test_bad_bounds() -> None:
    with pytest.raises(ValueError):
        range_regex(5, 4)
