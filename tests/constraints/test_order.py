"""The order guard: with ``ordered=True`` every copy starts after the previous copy's end.

Checked on llguidance's 256-byte tokenizer (every program is spelled byte by byte, so each guard
decision is visible) and on a real vocabulary with multi-byte tokens.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copygram import ConstraintError, Copy, Gen, Program, parse, render, resolve
from copygram.constraints import compile_constraint
from copygram.language.syntaxes import syntax_names


def ordered(program: Program) -> bool:
    floor = 0
    for op in program:
        if isinstance(op, Copy):
            if op.start <= floor:
                return False
            floor = op.end
    return True


@st.composite
def copy_programs(draw: st.DrawFn, n: int) -> Program:
    ops: list[Copy | Gen] = []
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            start = draw(st.integers(1, n))
            ops.append(Copy(start, draw(st.integers(start, n))))
        else:
            ops.append(Gen(draw(st.sampled_from(["x\n", "", "a<b&c", "</gen>"]))))
    return Program(ops)


def feed_bytes(constraint: Any, text: str) -> bool:
    """Consume ``text`` byte by byte (the byte tokenizer's ids are the bytes); False if refused."""
    for byte in text.encode():
        if not constraint.allowed()[byte]:
            return False
        constraint.consume(byte)
    return True


def reaches_the_end(program: Program, n: int) -> bool:
    return any(isinstance(op, Copy) and op.end == n for op in program)


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 30), data=st.data(), syntax=st.sampled_from(syntax_names()),
       engine=st.sampled_from(["llguidance", "outlines"]))
def test_to_end_accepts_exactly_the_ordered_programs_that_copy_the_last_line(
        n: int, data: st.DataObject, syntax: str, engine: str) -> None:
    program = data.draw(copy_programs(n))
    constraint = compile_constraint(["l\n"] * n, "byte", syntax=syntax, ordered=True,
                                    to_end=True, engine=engine)
    accepted = feed_bytes(constraint, render(program, syntax)) and constraint.done
    assert accepted == (ordered(program) and reaches_the_end(program, n))
    if ordered(program) and not constraint.allowed()[constraint.eos_token_id]:
        # Never a dead end: the rest of the document can always be copied.
        floor = max((op.end for op in program if isinstance(op, Copy)), default=0)
        s = render(Program([Copy(floor + 1, n)]), syntax) if floor < n else ""
        assert not s or feed_bytes(constraint, s) and constraint.done


def test_to_end_needs_ordered_copies() -> None:
    with pytest.raises(ConstraintError, match="ordered"):
        from copygram.constraints.document_grammar import copy_tag
        from copygram.constraints.guard import Tracker

        Tracker(copy_tag("lines"), 3, to_end=True)


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 30), data=st.data(), syntax=st.sampled_from(syntax_names()))
def test_ordered_constraint_accepts_exactly_the_ordered_programs(
        n: int, data: st.DataObject, syntax: str) -> None:
    program = data.draw(copy_programs(n))
    constraint = compile_constraint(["l\n"] * n, "byte", syntax=syntax, ordered=True)
    accepted = feed_bytes(constraint, render(program, syntax)) and constraint.done
    assert accepted == ordered(program), render(program, syntax)
    # Without the guard every valid range is accepted anywhere.
    free = compile_constraint(["l\n"] * n, "byte", syntax=syntax)
    assert feed_bytes(free, render(program, syntax)) and free.done


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 25), seed=st.integers(0, 2**32 - 1),
       syntax=st.sampled_from(syntax_names()))
def test_random_walks_never_dead_end_and_stay_ordered(n: int, seed: int, syntax: str) -> None:
    rng = random.Random(seed)
    document = "".join(f"line {i}\n" for i in range(1, n + 1))
    constraint = compile_constraint(document, "byte", syntax=syntax, ordered=True)
    eos = constraint.eos_token_id
    for step in range(600):
        mask = constraint.allowed()
        assert mask.any(), f"dead end after {constraint.program_text!r}"
        if mask[eos] and (step > 300 or rng.random() < 0.02):
            break
        # ASCII only (the byte tokenizer would otherwise write broken UTF-8 into gen text),
        # favouring markup bytes so that many copies are tried.
        ascii_ids = [t for t in np.flatnonzero(mask).tolist() if t < 128]
        markup = [t for t in ascii_ids if chr(t) in '<>/"=-0123456789@copylinesg']
        choice = rng.choice(markup if markup and rng.random() < 0.8 else ascii_ids)
        constraint.consume(choice)
    else:
        pytest.skip("walk did not finish")  # pragma: no cover - the cap is generous
    program = parse(constraint.program_text, syntax)
    assert ordered(program)
    resolve(program, document)  # never a RangeError


def test_after_the_last_line_is_copied_no_copy_can_start() -> None:
    constraint = compile_constraint(["a\n", "b\n"], "byte", ordered=True)
    assert feed_bytes(constraint, '<copy lines="1-2"/>')
    assert feed_bytes(constraint, "<")  # may still open a gen
    assert not constraint.allowed()[ord("c")]
    assert constraint.allowed()[ord("g")]


def test_the_order_guard_names_the_refused_token() -> None:
    constraint = compile_constraint(["a\n", "b\n", "c\n"], "byte", ordered=True)
    assert feed_bytes(constraint, '<copy lines="1-2"/><copy lines="')
    with pytest.raises(ConstraintError):
        constraint.consume(ord("2"))  # line 2 is already behind the cursor


@pytest.mark.llamacpp
def test_ordered_on_a_real_vocabulary(smollm2: Any) -> None:
    document = "".join(f"x{i}\n" for i in range(1, 13))
    for program, ok in ((Program([Copy(1, 3), Gen("y\n"), Copy(5, 12)]), True),
                        (Program([Copy(4, 6), Copy(2, 3)]), False),
                        (Program([Copy(1, 12), Copy(12, 12)]), False)):
        constraint = compile_constraint(document, smollm2, ordered=True)
        good = True
        # Op by op: a token may not reach past a copy tag's end (the tag-end guard).
        tokens = [t for op in program for t in smollm2.tokenize(render(Program([op])))]
        for token in tokens:
            if not constraint.allowed()[token]:
                good = False
                break
            constraint.consume(token)
        assert (good and constraint.done) == ok, render(program)
