"""The kernel curve's bound on rewrite mode's speedup (:mod:`copygram.bench.quality.bound`) and
its measured / bound ratio in the pooled report."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram.backends.base import BatchProfile
from copygram.bench.quality.bound import copy_bound
from copygram.bench.quality.report import markdown_table, pool
from copygram.bench.quality.scoring import REWRITE, REWRITE_MODE, RowQuality

# A batched token costs a quarter of a step.
QUARTER = BatchProfile(((1, 1.0), (128, 32.0)), 0.0)


def tokenize(text: str) -> list[int]:
    return list(text.encode())


def test_copied_lines_cost_the_curve_and_new_ones_a_step_each() -> None:
    bound = copy_bound("a\nB\nc\n", "a\nb\nc\n", tokenize, QUARTER)
    assert (bound.tokens, bound.copied) == (6, 4)
    assert bound.steps == pytest.approx(2 + 4 * 0.25) and bound.speedup == pytest.approx(2.0)
    assert copy_bound("a\nb\n", "a\nb\n", tokenize, QUARTER).speedup == pytest.approx(4.0)
    assert copy_bound("x\ny\n", "a\nb\n", tokenize, QUARTER).speedup == pytest.approx(1.0)
    assert copy_bound("", "a\n", tokenize, QUARTER).speedup == 1.0


@given(st.text("ab\n", max_size=40), st.text("ab\n", max_size=40))
def test_the_bound_lies_between_plain_decoding_and_a_fully_copied_output(
        output: str, document: str) -> None:
    bound = copy_bound(output, document, tokenize, QUARTER)
    assert 0 <= bound.copied <= bound.tokens
    assert 1.0 - 1e-9 <= bound.speedup <= 4.0 + 1e-9


def _row(approach: str, gen_s: float, tokens: int = 0, steps: float | None = None) -> RowQuality:
    return RowQuality("d", "r", approach, valid=True, passed=None, exact=False, unchanged=False,
                      similarity=1.0, wall_s=gen_s + 1.0, decoded_tokens=tokens, gen_s=gen_s,
                      output_tokens=tokens, bound_steps=steps)


def test_the_report_sets_measured_beside_the_bound() -> None:
    rows = [_row(REWRITE, 6.0), _row(REWRITE_MODE, 3.0, tokens=100, steps=25.0)]
    mode = pool(rows)["d"][REWRITE_MODE]
    assert mode["bound_speedup"] == pytest.approx(4.0)
    assert mode["measured_over_bound"] == pytest.approx(2.0 / 4.0)
    assert "| d | rewrite-mode | rewrite | 1/1 | 1.75x | 1/1 | 2.00x | 4.00x | 50% |" \
        in markdown_table(pool(rows))
    # Without a bound (an approach that reports none) there is no ratio.
    plain = pool([rows[0], dataclasses.replace(rows[1], bound_steps=None)])["d"][REWRITE_MODE]
    assert "bound_speedup" not in plain and "measured_over_bound" not in plain
