"""Verified copies (``verify_copies``, copygram.decode.copy_check and verify.splice_copy): a copy is
cut before the first line the model, reading it, would have written otherwise; a model that
agrees with every copied line writes exactly what it writes without the check."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copygram import ConfigError, Copy, CopyEvent, EditSession, Gen, Program, resolve
from copygram.bench.replay import replay
from copygram.decode.copy_check import CHECKED_TOKENS, Check, copy_checks, first_disagreement
from copygram.decode.events import DoneEvent, Event, RetractEvent, SpanEvent, TokenEvent
from copygram.language.lines import split_lines
from copygram.language.syntaxes import get_syntax, syntax_names
from copygram.language.types import LineRange
from copygram.testing import EOS, ScriptedBackend
from tests.strategies import programs, texts

BYTES = [bytes([i]) for i in range(256)]


# --------------------------------------------------------------------------- the checks


def test_checks_are_the_rows_before_each_later_line_up_to_its_first_word() -> None:
    lines = ["a = 1\n", "  b\n", "\n", "c\n"]
    copied = list("".join(lines).encode())
    checks = copy_checks(copied, BYTES, lines, LineRange(1, 4), offset=3)
    # Line 2 starts at byte 6: rows 3+5.. predict its bytes up to "b" (two spaces, then b).
    # Line 3 ("\n") is one whitespace byte, then line 4's "c".
    assert checks == [Check(8, ord(" "), 2), Check(9, ord(" "), 2), Check(10, ord("b"), 2),
                      Check(12, ord("\n"), 3), Check(13, ord("c"), 4)]
    assert copy_checks(copied[:6], BYTES, lines, LineRange(1, 1), offset=0) == []


def test_at_most_a_few_tokens_of_a_line_are_checked() -> None:
    lines = ["x\n", " " * 12 + "y\n"]
    copied = list("".join(lines).encode())
    checks = copy_checks(copied, BYTES, lines, LineRange(1, 2), offset=0)
    assert len(checks) == CHECKED_TOKENS and {c.line for c in checks} == {2}


def test_a_line_that_starts_inside_a_token_is_not_checked() -> None:
    # Tokens: "a\n\n" spans the start of line 2 (blank); "b\n" starts line 3 at a boundary.
    spelled = [b"a\n\n", b"b\n"]
    checks = copy_checks([0, 1], spelled, ["a\n", "\n", "b\n"], LineRange(1, 3), offset=0)
    assert checks == [Check(0, 1, 3)]


def test_the_first_disagreeing_check_names_the_line() -> None:
    checks = [Check(0, 5, 2), Check(1, 6, 2), Check(2, 7, 3)]
    rows = np.zeros((3, 10), dtype=np.float32)
    rows[0, 5] = rows[1, 6] = rows[2, 7] = 1.0
    assert first_disagreement(checks, rows) is None
    rows[2, 7], rows[2, 1] = 0.0, 1.0
    assert first_disagreement(checks, rows) == 3
    rows[1, 6], rows[1, 2] = 0.0, 1.0
    assert first_disagreement(checks, rows) == 2


# ---------------------------------------------------------------- a model that reads its copies


@dataclass
class _Way:
    context: bytes  # the program text with each copy's lines after its tag
    copies: list[tuple[int, int, int]]  # (start, end) of each copy's lines in context, and
    # the length of the output before them


class ReadingBackend(ScriptedBackend):
    """A byte-level model with several ways to write its program, tried in order: it follows the
    first whose text (each copy followed by its lines) the cache holds. Inside copied lines it
    predicts the next byte of ``intended``, the document it means to write, as long as what it
    has copied so far agrees with it: so a copy that runs past the line it means to rewrite
    disagrees there."""

    def setup(self, ways: Sequence[Program], intended: str) -> ReadingBackend:
        syntax = get_syntax(self.syntax)
        lines = split_lines(self.document)
        self._intended = intended.encode()
        self._ways = []
        for program in ways:
            context, copies, output = b"", [], 0
            for op in program:
                context += syntax.render(Program([op])).encode()
                if isinstance(op, Copy):
                    content = "".join(lines[op.start - 1 : op.end]).encode()
                    copies.append((len(context), len(context) + len(content), output))
                    context += content
                    output += len(content)
                else:
                    output += len(op.text.encode())
            self._ways.append(_Way(context, copies))
        return self

    def _next_logits(self) -> npt.NDArray[np.float32]:
        logits = np.zeros(self.vocab_size, dtype=np.float32)
        cache = self._cache[self._prompt_len :]
        if EOS in cache:
            return logits
        seen = bytes(cache)
        for way in self._ways:
            if not way.context.startswith(seen):
                continue
            at = len(seen)
            for start, end, output in way.copies:
                if start < at < end:
                    done = output + at - start  # output bytes written, up to here
                    copied = way.context[start:at]
                    if self._intended[output:done] != copied:
                        return logits
                    nxt = self._intended[done : done + 1]
                    logits[nxt[0] if nxt else EOS] = 10.0
                    return logits
            nxt = way.context[at : at + 1]
            logits[nxt[0] if nxt else EOS] = 10.0
            return logits
        return logits


# One-space indents: the byte-level model's first non-blank byte is within the checked tokens.
DOCUMENT = "def f(x):\n y = x + 1\n return y\n\n\nprint(f(2))\n"
FIXED = Program([Copy(1, 1), Gen(" z = x + 2\n return z\n"), Copy(4, 6)])
OVERSHOOT = Program([Copy(1, 2), Gen(" z = x + 2\n return z\n"), Copy(4, 6)])


def reading_session(ways: Sequence[Program], intended: str, **kwargs: object) -> EditSession:
    backend = ReadingBackend(DOCUMENT, ways[0]).setup(ways, intended)
    return EditSession(backend, on_damage="keep",
                       syntax="lines", **{"mode": "program", **kwargs})


@pytest.mark.parametrize("drafts", [0, 16])
def test_a_copy_one_line_too_long_is_cut_where_the_model_disagrees(drafts: int) -> None:
    intended = resolve(FIXED, DOCUMENT)
    # Unchecked, the model's overshoot keeps the line it rewrites: `y = x + 1` stays.
    plain = reading_session([OVERSHOOT, FIXED], intended, draft_tokens=drafts).edit(DOCUMENT,
                                                                                     "x")
    assert plain.program == OVERSHOOT and "y = x + 1" in plain.text
    session = reading_session([OVERSHOOT, FIXED], intended, draft_tokens=drafts,
                              verify_copies=True)
    events: list[Event] = list(session.stream(DOCUMENT, "x"))
    done = events[-1]
    assert isinstance(done, DoneEvent)
    result = done.result
    assert result.program == FIXED and result.text == intended
    assert result.stats.cut_copies == 1 and result.stats.copy_ops == 2
    # The stream: the tag's end taken back, then the copy of the lines kept.
    retracts = [e for e in events if isinstance(e, RetractEvent)]
    assert len(retracts) == 1
    after = events[events.index(retracts[0]) + 1 :]
    assert [e.lines for e in after if isinstance(e, CopyEvent)] == [LineRange(1, 1),
                                                                    LineRange(4, 6)]
    # The events' text, cut back at the retraction's byte, spells the program the result holds.
    text = b""
    for event in events:
        if isinstance(event, RetractEvent):
            text = text[: event.start]
        elif isinstance(event, TokenEvent | SpanEvent | DoneEvent):
            text += event.text.encode()
    assert text.decode() == result.program_text
    # The cache holds the program as the loop leaves it: nothing of the cut-off line.
    backend = session.backend
    assert isinstance(backend, ReadingBackend)
    assert bytes(backend.cached_ids[backend._prompt_len :]).count(b"y = x + 1") == 0


@settings(max_examples=80)
@given(st.data(), texts.filter(bool), st.sampled_from(syntax_names()), st.sampled_from([0, 16]))
def test_a_model_that_agrees_with_its_copies_writes_the_same_program(
        data: st.DataObject, document: str, syntax: str, drafts: int) -> None:
    program = data.draw(programs(len(split_lines(document)))).normalized()
    intended = resolve(program, document)

    def edit(verify: bool) -> tuple[Program, str, int]:
        backend = ReadingBackend(document, program, syntax=syntax).setup([program], intended)
        session = EditSession(backend, on_damage="keep", syntax=syntax, ordered_copies=False,
                              max_new_tokens=1 << 15, draft_tokens=drafts,
                              verify_copies=verify, mode="program")
        result = session.edit(document, "x")
        return result.program, result.text, result.stats.cut_copies

    assert edit(True) == edit(False) == (program, intended, 0)


def test_replay_never_cuts_the_teachers_copies() -> None:
    session = reading_session([OVERSHOOT, FIXED], resolve(FIXED, DOCUMENT), verify_copies=True)
    replayed = replay(session, DOCUMENT, OVERSHOOT, measure_plain=False)
    assert replayed.text == resolve(OVERSHOOT, DOCUMENT)


def test_verify_copies_is_a_config_key() -> None:
    from copygram.config import parse_config

    assert parse_config({"route": {"syntax": "lines", "verify_copies": True}}).session.verify_copies is True
    with pytest.raises(ConfigError, match="verify_copies"):
        parse_config({"route": {"verify_copies": "yes"}})
