"""Both engines accept valid programs token by token and reject corrupted ones; bad input."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from copygram import ConfigError, ConstraintError, Copy, DocumentError, Gen, Program, render
from copygram.constraints import Constraint, compile_constraint, vocab_for
from copygram.language.syntaxes import get_syntax, syntax_names
from tests.strategies import programs

# outlines needs outlines-core (an extra): its runs are marked, so only they skip without it.
ENGINES = ["llguidance", pytest.param("outlines", marks=pytest.mark.outlines)]
SIZES = [1, 2, 10, 99, 100, 1000]


def tokenize(tokenizer: Any, text: str, syntax: str = "lines") -> list[int]:
    """Tokens of program text, cut after each copy tag (a model's tag ends at a token end)."""
    vocab = vocab_for(tokenizer)
    ids: list[int] = []
    close = re.escape(get_syntax(syntax).copy_close)
    for piece in re.split(f"(?<={close})", text):
        if not piece:
            continue
        if tokenizer == "byte":
            ids += list(piece.encode())
        else:
            ids += tokenizer.tokenize(piece)
    assume(b"".join(vocab.token_bytes[i] for i in ids) == text.encode())
    return ids


def accepts(constraint: Constraint, ids: list[int]) -> bool:
    try:
        constraint.consume_many(ids)
        constraint.consume(constraint.eos_token_id)
    except ConstraintError:
        return False
    return True


@pytest.fixture(params=["byte", "smollm2"], scope="module")
def tokenizer(request: pytest.FixtureRequest) -> Any:
    return "byte" if request.param == "byte" else request.getfixturevalue("smollm2")


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_engines_accept_valid_programs(tokenizer: Any, engine: str, data: st.DataObject) -> None:
    n = data.draw(st.sampled_from(SIZES))
    syntax = data.draw(st.sampled_from(syntax_names()))
    program = data.draw(programs(n_lines=n))
    ids = tokenize(tokenizer, render(program, syntax), syntax)
    c = compile_constraint(["x\n"] * n, tokenizer, engine=engine, syntax=syntax)
    closed = [r for r in c.consume_many(ids) if r is not None]
    assert closed == [cp.lines for cp in program.copies()]
    assert c.done and c.program_text == render(program, syntax)
    c.consume(c.eos_token_id)
    assert c.finished and not c.allowed().any()


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_engines_reject_corrupted_programs(tokenizer: Any, engine: str,
                                           data: st.DataObject) -> None:
    n = data.draw(st.sampled_from(SIZES))
    prefix = render(data.draw(programs(n_lines=n)))
    i = data.draw(st.integers(1, n))
    bad = data.draw(st.sampled_from(["past_n", "reversed", "unclosed", "zero"]))
    if bad == "past_n":
        text = prefix + f'<copy lines="{i}-{n + data.draw(st.integers(1, 10**6))}"/>'
    elif bad == "reversed":
        assume(i > 1)
        text = prefix + f'<copy lines="{i}-{data.draw(st.integers(1, i - 1))}"/>'
    elif bad == "zero":
        text = prefix + f'<copy lines="0{i}-{i}"/>'
    else:
        text = prefix + "<gen>" + data.draw(st.sampled_from(["", "abc", "x&lt;"]))
    ids = tokenize(tokenizer, text)
    assert not accepts(compile_constraint(["x\n"] * n, tokenizer, engine=engine), ids)


@pytest.mark.parametrize("engine", ENGINES)
def test_state_unchanged_after_rejection_and_rollback(engine: str) -> None:
    c = compile_constraint("a\nb\nc\n", "byte", engine=engine)
    c.consume_many(list(b'<copy lines="2-'))
    before = c.allowed()
    with pytest.raises(ConstraintError):
        c.consume(ord("1"))  # 1 < 2
    with pytest.raises(ConstraintError):
        c.consume_many([ord("3"), ord("x")])  # all or nothing
    assert c.program_text == '<copy lines="2-'
    np.testing.assert_array_equal(c.allowed(), before)
    with pytest.raises(ConstraintError):
        c.consume(c.eos_token_id)
    assert c.consume_many(list(b'3"/>')) == [None, None, None, Copy(2, 3).lines]
    c.consume(c.eos_token_id)
    with pytest.raises(ConstraintError):
        c.consume(ord("<"))
    with pytest.raises(ConstraintError):
        c.rollback(c.n_consumed + 1)
    c.rollback(5)
    assert c.program_text == '<copy lines="2-' and not c.finished
    np.testing.assert_array_equal(c.allowed(), before)
    out = np.zeros(c.vocab_size, dtype=np.bool_)
    c.fill_allowed(out)
    np.testing.assert_array_equal(out, before)


def test_forced_tokens() -> None:
    c = compile_constraint("a\nb\n", "byte")
    c.consume_many(list(b"<c"))
    forced = c.forced()
    assert bytes(forced) == b'opy lines="'
    c.consume_many(forced)
    c.consume_many(list(b"1"))
    assert bytes(c.forced()) == b"-"  # 10.. > n = 2
    one = compile_constraint("a\n", "byte")
    one.consume_many(list(b"<c"))
    assert bytes(one.forced()) == b'opy lines="1-1"/>'  # n = 1: the whole tag is forced
    assert one.consume_many(one.forced())[-1] == Copy(1, 1).lines
    assert one.done and one.forced() == []


@pytest.mark.outlines
def test_outlines_forces_the_rest_of_a_one_line_tag() -> None:
    o = compile_constraint("a\n", "byte", engine="outlines")
    o.consume_many(list(b'<copy lines="1'))
    assert bytes(o.forced()) == b'-1"/>'


class _BytesPlus:
    """The byte tokenizer plus ``extra`` tokens (ids 262, 263, ...), past the real vocab."""

    def __init__(self, *extra: bytes) -> None:
        import llguidance

        self._ll = llguidance.LLTokenizer("byte")
        self.extra = extra
        self.vocab_size = 262 + len(extra)

    def ll_tokenizer(self) -> Any:
        return self._ll

    def token_bytes(self) -> list[bytes]:
        tb = [b"" if self._ll.is_special_token(i) else self._ll.decode_bytes([i])
              for i in range(self._ll.vocab_size)]
        return [*tb, *self.extra]

    eos_token_id = 261


@pytest.mark.parametrize("engine", ENGINES)
def test_tag_end_guard_rejects_tokens_past_the_tag(engine: str) -> None:
    tok = _BytesPlus(b'"/><')  # id 262
    c = compile_constraint("a\nb\n", tok, engine=engine)
    c.consume_many(list(b'<copy lines="1-2'))
    assert not c.allowed()[262]
    with pytest.raises(ConstraintError):
        c.consume(262)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_complete_line_number_forces_what_follows(engine: str) -> None:
    # As real BPE vocabularies have them: an engine's fast-forward will not commit to '"/>'
    # while '"/><' might follow.
    tok = _BytesPlus(b'"/', b'"/>', b'"/><')
    spelled = tok.token_bytes()
    close = spelled.index(b'"/>')
    document = "".join(f"{i}\n" for i in range(19))
    c = compile_constraint(document, tok, engine=engine)

    def take_forced() -> bytes:
        taken = []
        while forced := c.forced():
            c.consume_many(forced)
            taken += forced
        return b"".join(spelled[t] for t in taken)

    c.consume_many(list(b'<copy lines="14'))  # 140.. > 19: the start line is complete
    assert take_forced() == b"-1"  # and 14 <= end <= 19
    c.consume_many(list(b"7"))  # 170.. > 19: the end line is complete
    forced = c.forced()
    # As the one token '"/>' ('"/><' is ruled out by the tag-end guard) wherever the engine's
    # own fast-forward does not give the bytes (outlines_core, which sees no guards).
    assert b"".join(spelled[t] for t in forced) == b'"/>'
    assert engine == "llguidance" or forced == [close]
    assert c.consume_many(forced)[-1] == Copy(14, 17).lines
    assert take_forced() == b""  # the next op is a choice


def test_bad_inputs() -> None:
    with pytest.raises(DocumentError, match="plain generation"):
        compile_constraint("", "byte")
    with pytest.raises(DocumentError, match="max_lines"):
        compile_constraint("a\nb\nc\n", "byte", max_lines=2)
    with pytest.raises(ConfigError):
        compile_constraint("a", "byte", engine="xgrammar")
    with pytest.raises(ConstraintError):
        compile_constraint("a", "bpe")
    with pytest.raises(ConstraintError):
        compile_constraint("a", object())

    class NoAngle:
        def __init__(self) -> None:
            import llguidance

            self._ll = llguidance.LLTokenizer("byte")

        def ll_tokenizer(self) -> Any:
            return self._ll

        def token_bytes(self) -> list[bytes]:
            return [b"" if i == ord("<") else bytes([i]) for i in range(256)] + [b""] * 6

        eos_token_id = 261
        vocab_size = 262

    with pytest.raises(ConstraintError, match="'<'"):
        compile_constraint("a", NoAngle())


@pytest.mark.parametrize("engine", ENGINES)
def test_program_with_only_gens_and_empty_program(engine: str) -> None:
    c = compile_constraint("a", "byte", engine=engine)
    assert c.done and c.n_lines == 1
    ids = list(render(Program([Gen("x<y&z"), Gen("")])).encode())
    c.consume_many(ids)
    assert c.done and c.program_text == "<gen>x<y&z</gen><gen></gen>"


@pytest.mark.parametrize("engine", ENGINES)
def test_max_lines_is_checked_by_every_engine(engine: str) -> None:
    with pytest.raises(DocumentError, match="max_lines"):
        compile_constraint(["x\n"] * 3, "byte", engine=engine, max_lines=2)
