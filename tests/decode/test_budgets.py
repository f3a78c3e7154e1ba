"""Bounded runs: a looping model ends on its token budget or the repeat guard, with a typed error
that carries the partial program and the run's stats, never by filling the context."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram import (
    Copy,
    DoneEvent,
    EditResult,
    EditSession,
    Gen,
    GenerationError,
    LengthError,
    Program,
    RetractEvent,
    RunawayError,
    render,
)
from copygram.decode.budgets import (
    BLOCK_REPEATS,
    MAX_BLOCK_LINES,
    MIN_BLOCK_CHARS,
    REPEAT_LIMIT,
    Budget,
    Repeat,
    RepeatGuard,
    RunawayGuard,
    token_budget,
)
from copygram.decode.document import EditDocument
from copygram.decode.stats import RunStats
from copygram.language.lines import split_lines
from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER
from copygram.testing import EOS, ScriptedBackend

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
    assert guard.feed(b"x = 1\n") == Repeat((b"x = 1",), REPEAT_LIMIT)
    other = RepeatGuard()
    assert other.feed((b"a\n" * (REPEAT_LIMIT - 1) + b"b\n") * 2) is None


FUNCTION = b"def f(numbers):\n    out = [n for n in numbers if n > 0]\n\n    return sorted(out)\n"


def test_a_block_written_a_third_time_in_a_row_is_a_loop() -> None:
    guard = RepeatGuard()
    assert guard.feed(b"x = 0\n" + FUNCTION * (BLOCK_REPEATS - 1)) is None
    repeat = guard.feed(FUNCTION)
    assert repeat == Repeat((b"def f(numbers):", b"    out = [n for n in numbers if n > 0]",
                             b"    return sorted(out)"), BLOCK_REPEATS)
    assert str(repeat) == "the model wrote the 3 lines from 'def f(numbers):' 3 times in a row"
    # Not where the document holds the block so: the program may copy it.
    held = RepeatGuard(document=split_lines((b"# three\n" + FUNCTION * 3).decode()))
    assert held.feed(FUNCTION * 3) is None
    assert held.feed(FUNCTION) is not None  # a fourth time the document does not hold


def _loops(lines: list[bytes]) -> bool:
    """The guard's rule, spelled out: some prefix ends with a line 8 times in a row, or with a
    block of 2-64 lines (not all the same) three times in a row."""
    for end in range(1, len(lines) + 1):
        seen = lines[:end]
        if len(seen) >= REPEAT_LIMIT and len(set(seen[-REPEAT_LIMIT:])) == 1:
            return True
        for size in range(2, min(MAX_BLOCK_LINES, end // BLOCK_REPEATS) + 1):
            block = seen[-size:]
            if (len(set(block)) > 1 and sum(map(len, block)) >= MIN_BLOCK_CHARS
                    and seen[-size * BLOCK_REPEATS:] == block * BLOCK_REPEATS):
                return True
    return False


@given(st.lists(st.sampled_from([b"a\n", b"b\n", b"\n", b"a", b"\na\n", b"c\n"]),
                max_size=60))
def test_the_guard_fires_exactly_when_a_line_or_a_block_repeats(chunks: list[bytes]) -> None:
    guard = RepeatGuard()
    fired = any(guard.feed(chunk) is not None for chunk in chunks)
    lines = [line for line in b"".join(chunks).split(b"\n")[:-1] if line.strip()]
    assert fired == _loops(lines)


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


RUNAWAY_DOC = ("def a(x):\n    return x\n\n\ndef b(x):\n    return x + 1\n\n\n"
               "def c(x):\n    return x + 2\n\n\ndef d(x):\n    return x + 3\n")


def _head_block(head: str, replacement: str, close: bool = True) -> bytes:
    text = BLOCK_OPEN + head + DIVIDER + replacement + (BLOCK_CLOSE if close else "")
    return text.encode()


def test_a_head_block_that_retypes_the_next_unit_is_stopped() -> None:
    lines = split_lines(RUNAWAY_DOC)
    guard = RunawayGuard(lines)
    program = _head_block("def a(x):\n", "def a(x):\n    return -x\n\n\ndef b(x):\n"
                          "    return x + 1\n", close=False)
    assert guard.feed(program) is None  # two of b's lines: not yet
    ran = guard.feed(program + b"\n")  # the third, as the document has it
    assert ran is not None and "typed the next unit (line 5) again" in ran
    # Byte by byte alike, and read again from the start once taken back.
    again = RunawayGuard(lines)
    whole = program + b"\n"
    assert [again.feed(whole[:end]) is not None for end in range(1, len(whole) + 1)][-1]
    again.reset()
    assert again.feed(program) is None


def test_a_head_block_that_retypes_two_units_after_its_own_is_stopped() -> None:
    lines = split_lines(RUNAWAY_DOC)
    guard = RunawayGuard(lines)
    # b changed as it is typed again: not the next unit line for line, but two units' heads.
    retyped = "def a(x):\n    return -x\n\n\ndef b(x):\n    return 0\n\n\n"
    program = _head_block("def a(x):\n", retyped, close=False)
    assert guard.feed(program) is None  # one unit after its own: the next one may close it
    ran = guard.feed(program + b"def c(x):\n")
    assert ran is not None and "lines 5, 9" in ran


def test_a_statement_nested_in_a_later_unit_is_not_a_unit_after_the_block() -> None:
    """A fix may well write a common nested line (``for x in xs:``) that heads statements in
    later functions: only units as deep as the block's head, or shallower, count."""
    document = ("def a(xs):\n    return xs\n\n\ndef b(xs):\n    for x in xs:\n        print(x)"
                "\n\n\ndef c(xs):\n    for x in xs:\n        pass\n")
    guard = RunawayGuard(split_lines(document))
    fix = "def a(xs):\n    for x in xs:\n        pass\n    for x in xs:\n        pass\n"
    assert guard.feed(_head_block("def a(xs):\n", fix, close=False)) is None


def test_blocks_that_keep_to_their_units_run_on() -> None:
    lines = split_lines(RUNAWAY_DOC)
    guard = RunawayGuard(lines)
    # Each block retypes only its own unit; a later block's head is not a runaway, nor a unit
    # before the block's own, nor a new function.
    program = (_head_block("def a(x):\n", "def a(x):\n    return -x\n\n\ndef e(x):\n    pass\n")
               + _head_block("def c(x):\n", "def b(x):\n    return x + 1\ndef c(x):\n    "
                             "return 0\n") + _head_block("def d(x):\n", "def d(x):\n    "
                                                          "return 3\n"))
    assert guard.feed(program) is None


class _Closing(ScriptedBackend):
    """Writes ``reply`` (a program that runs away); once its cache holds ``closed`` (the
    program with that block closed), it ends."""

    closed: bytes = b""

    def _next_logits(self) -> npt.NDArray[np.float32]:
        written = bytes(t for t in self._cache[self._prompt_len :] if t < EOS)
        if written == self.closed:
            logits = np.zeros(self.vocab_size, dtype=np.float32)
            logits[EOS] = 10.0
            return logits
        return super()._next_logits()


def test_a_session_closes_a_block_that_runs_away_and_goes_on() -> None:
    """The model retypes the units after its block: the session takes the program back to
    where the next unit began, closes the block there and lets the model go on (here: it ends);
    the events, joined, are the program kept, and the edit is the block's."""
    retyped = ("def a(x):\n    return -x\n\n\ndef b(x):\n    return x + 1\n\n\n"
               "def c(x):\n    return x + 2\n\n\ndef d(x):\n    return x + 3\n")
    closed = _head_block("def a(x):\n", "def a(x):\n    return -x\n")
    backend = _Closing(RUNAWAY_DOC, reply=_head_block("def a(x):\n", retyped).decode())
    backend.closed = closed
    session = EditSession(backend, on_damage="keep", syntax="search_replace",
                          search_scope="head", mode="program", touch_named=False)
    events = list(session.stream(RUNAWAY_DOC, "Negate a."))
    done = events[-1]
    assert isinstance(done, DoneEvent)
    result = done.result
    assert result.text == RUNAWAY_DOC.replace("return x\n", "return -x\n")
    assert result.program_text == closed.decode() and result.stats.runaway_closes == 1
    assert not result.damage
    joined = ""
    for event in events:
        if isinstance(event, RetractEvent):
            joined = joined.encode()[: event.start].decode()
        else:
            joined += getattr(event, "text", "")
    assert joined == result.program_text


def test_a_block_that_runs_away_changing_what_it_retypes_is_not_closed() -> None:
    retyped = ("def a(x):\n    return -x\n\n\ndef b(x):\n    return 0\n\n\n"
               "def c(x):\n    return 0\n\n\ndef d(x):\n    return x + 3\n")
    backend = ScriptedBackend(RUNAWAY_DOC, reply=_head_block("def a(x):\n", retyped).decode())
    session = EditSession(backend, on_damage="keep", syntax="search_replace",
                          search_scope="head", mode="program", touch_named=False)
    with pytest.raises(RunawayError, match="typed the units at lines 5, 9 again"):
        session.edit(RUNAWAY_DOC, "Negate a.")


def test_a_block_of_a_code_file_that_types_a_code_fence_is_closed_before_it() -> None:
    ran = "def a(x):\n    return -x\n```python\n"
    closed = _head_block("def a(x):\n", "def a(x):\n    return -x\n")
    backend = _Closing(RUNAWAY_DOC, reply=_head_block("def a(x):\n", ran).decode())
    backend.closed = closed
    session = EditSession(backend, on_damage="keep", mode="program", touch_named=False)
    result = session.edit(RUNAWAY_DOC, "Negate a.", language="python")
    assert result.program_text == closed.decode() and result.stats.runaway_closes == 1
    assert result.text == RUNAWAY_DOC.replace("return x\n", "return -x\n") and not result.damage
    # Prose: the fence is written as the model wrote it.
    scripted = ScriptedBackend(RUNAWAY_DOC, reply=_head_block("def a(x):\n", ran).decode())
    prose = EditSession(scripted, on_damage="keep", mode="program", touch_named=False)
    assert "```python" in prose.edit(RUNAWAY_DOC, "Negate a.", language="text").text


def test_a_block_that_types_an_elision_line_of_the_view_is_closed_before_it() -> None:
    elision = "# ... lines 8-13 not shown ...\n"
    ran = "def a(x):\n    return -x\n\n\n" + elision + "def d(x):\n    return 0\n"
    closed = _head_block("def a(x):\n", "def a(x):\n    return -x\n")
    backend = _Closing(RUNAWAY_DOC, reply=_head_block("def a(x):\n", ran).decode())
    backend.closed = closed
    session = EditSession(backend, on_damage="keep", mode="program", touch_named=False)
    result = session.edit(RUNAWAY_DOC, "Negate a.")
    assert result.program_text == closed.decode() and result.stats.runaway_closes == 1
    assert result.text == RUNAWAY_DOC.replace("return x\n", "return -x\n") and not result.damage
