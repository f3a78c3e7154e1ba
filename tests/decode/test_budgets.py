"""Bounded runs: a looping model ends on its token budget or the repeat guard, with a typed error
that carries the partial program and the run's stats, never by filling the context."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram import (
    Copy,
    EditResult,
    EditSession,
    Gen,
    GenerationError,
    LengthError,
    Program,
    render,
)
from copygram.decode.budgets import REPEAT_LIMIT, Budget, RepeatGuard, token_budget
from copygram.decode.document import EditDocument
from copygram.decode.stats import RunStats
from copygram.testing import ScriptedBackend

DOCUMENT = "def f(x):\n    return x + 1\n"


def tokenize(text: str) -> list[int]:
    return list(text.encode())


def test_the_budget_is_derived_from_the_document_and_fits_the_context() -> None:
    document = EditDocument(DOCUMENT, tokenize)
    n = len(DOCUMENT.encode())
    assert token_budget(document, 100, 1 << 16, None) == Budget(2 * n + 256, "default")
    assert token_budget(document, 100, 1 << 16, 50) == Budget(50, "max_new_tokens")
    # Prompt + budget + the copied lines never exceed the context.
    assert token_budget(document, 100, 400, None) == Budget(400 - 100 - n - 8, "context")
    assert token_budget(document, 100, 400, 10_000) == Budget(400 - 100 - n - 8, "context")
    assert token_budget(document, 390, 400, None) == Budget(1, "context")


def test_the_repeat_guard_counts_identical_non_blank_lines_in_a_row() -> None:
    guard = RepeatGuard()
    assert guard.feed(b"x = 1\n" * (REPEAT_LIMIT - 1)) is None
    assert guard.feed(b"\n\n") is None  # blank lines neither count nor reset
    assert guard.feed(b"x = 1\n") == b"x = 1"
    other = RepeatGuard()
    assert other.feed((b"a\n" * (REPEAT_LIMIT - 1) + b"b\n") * 3) is None


@given(st.lists(st.sampled_from([b"a\n", b"b\n", b"\n", b"a", b"\na\n"]), max_size=60))
def test_the_guard_fires_exactly_when_a_line_repeats_eight_times(chunks: list[bytes]) -> None:
    guard = RepeatGuard()
    fired = any(guard.feed(chunk) is not None for chunk in chunks)
    lines = [line for line in b"".join(chunks).split(b"\n")[:-1] if line.strip()]
    runs = [1]
    for previous, line in itertools.pairwise(lines):
        runs.append(runs[-1] + 1 if line == previous else 1)
    assert fired == (bool(lines) and max(runs) >= REPEAT_LIMIT)


def test_a_model_repeating_a_line_is_stopped_with_its_partial_program() -> None:
    looping = Program([Copy(1, 1), Gen("    x = 1\n" * 40)])
    backend = ScriptedBackend(DOCUMENT, looping)
    with pytest.raises(GenerationError, match="8 times in a row: it is looping") as caught:
        EditSession(backend, on_damage="keep", syntax="lines", mode="program").edit(DOCUMENT, "x")
    error = caught.value
    # the first line starts with the gen tag: it is not one of the identical ones
    assert error.partial_program.count("    x = 1\n") == REPEAT_LIMIT + 1
    assert isinstance(error.stats, RunStats) and error.stats.program_tokens > 0
    assert "--show-program" in str(error)


def test_a_model_that_never_ends_stops_on_the_budget_not_on_the_context() -> None:
    endless = Program([Copy(1, 1), Gen("".join(f"    y{i} = {i}\n" for i in range(400)))])
    backend = ScriptedBackend(DOCUMENT, endless, context_length=1200)
    with pytest.raises(LengthError, match=r"no complete program within \d+ tokens \(the room "
                       "left in n_ctx") as caught:
        EditSession(backend, on_damage="keep", syntax="lines", mode="program").edit(DOCUMENT, "x")
    stats = caught.value.stats
    assert isinstance(stats, RunStats)
    assert backend.n_tokens < backend.context_length
    # The default budget, reached in a roomy context, is the model's failure, not a length.
    with pytest.raises(GenerationError, match="for a document of") as failed:
        EditSession(ScriptedBackend(DOCUMENT, endless), on_damage="keep",
                    syntax="lines", mode="program").edit(DOCUMENT, "x")
    assert not isinstance(failed.value, LengthError)
    with pytest.raises(LengthError, match=r"within 20 tokens \(max_new_tokens\)"):
        EditSession(ScriptedBackend(DOCUMENT, endless), on_damage="keep",
                    syntax="lines", max_new_tokens=20, mode="program").edit(DOCUMENT, "x")


def test_a_draft_may_finish_a_program_past_its_budget() -> None:
    # Only a token chosen past the budget fails a program, not an end reached through a draft:
    # 40 program tokens, of which drafts write the copy tag's, end within max_new_tokens 31.
    document = "".join(f"line {i}\n" for i in range(1, 41))
    program = Program([Gen("line one\n"), Copy(2, 40)])
    assert len(render(program).encode()) == 40

    def edit(budget: int) -> EditResult:
        return EditSession(ScriptedBackend(document, program), on_damage="keep", syntax="lines",
                           max_new_tokens=budget, mode="program",
                           draft_adaptive=False).edit(document, "x")

    assert edit(31).program == program and edit(40).program == program
    with pytest.raises(LengthError):
        edit(30)
