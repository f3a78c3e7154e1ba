"""Random walks over allowed tokens: every finished walk parses and resolves; none dead-ends.

Walk policy: at each step pick uniformly among the allowed tokens, except that with probability
1/4 the pick is uniform among the allowed *tag tokens* (made only of the grammar's literal
bytes), so that gen ops close and copies happen before the length cap. After the cap, the walk
finishes: EOS if allowed, else the first allowed of a few closing spellings (``"/>``, ``"``,
``<``, ``/`` ...), else uniform. Both engines run in lockstep and must allow the same tokens, except
where bytes are forced: there llguidance allows only their canonical spelling (a subset).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from copygram import Copy, parse, render, resolve
from copygram.constraints import compile_constraint, vocab_for
from copygram.constraints.document_grammar import literal_bytes
from copygram.language.lines import count_lines, split_lines
from copygram.language.ops import Program
from copygram.language.syntaxes import get_syntax, syntax_names
from copygram.language.types import LineRange

CLOSERS = [b"</gen>", b"</g>", b"</", b"<", b'"/>', b'"', b"/>", b"/", b">"]
SYNTAXES = syntax_names()
# outlines compiles per line count (~20-300 ms), so walks draw from a fixed menu of sizes.
SIZES = [1, 2, 3, 9, 10, 11, 99, 100, 101, 777, 1000, 2000]


def make_document(rng: random.Random, n_target: int) -> str:
    parts = []
    for _ in range(n_target):
        body = "".join(rng.choice("ab <>&\"-1") for _ in range(rng.randrange(0, 12)))
        parts.append(body + rng.choice(["\n", "\r\n", "\r", "\n"]))
    if rng.random() < 0.5:
        parts[-1] = parts[-1].rstrip("\r\n") or "z"
    return "".join(parts)


def check_resolves(program: Program, closed: list[LineRange], document: str, text: str,
                   syntax: str) -> None:
    """What a finished walk must mean: its text is exactly one program (parsing loses nothing),
    every copy names lines of the document, the constraint reported exactly those copies as they
    closed, and the document the resolver builds is what the decode loop would have spliced: each
    gen's text and, for each copy, the lines the constraint reported."""
    assert render(program, syntax) == text
    n = count_lines(document)
    assert all(1 <= cp.start <= cp.end <= n for cp in program.copies())
    assert closed == [cp.lines for cp in program.copies()]
    lines = split_lines(document)
    ranges = iter(closed)
    spliced = []
    for op in program:
        if isinstance(op, Copy):
            start, end = next(ranges)
            spliced.extend(lines[start - 1 : end])
        else:
            spliced.append(op.text)
    assert resolve(program, lines) == "".join(spliced)


def closing_token(spelled: Sequence[bytes], text: str, syntax: str, mask: Any) -> int:
    """Inside gen text (which may hold "<" forever), the token writing the rest of the close tag,
    or its next byte; -1 outside gen text or if neither is allowed. Why walks need it: gen text is
    verbatim, so a random walk closes a gen only when it happens to spell the whole close tag."""
    s = get_syntax(syntax)
    if not s.in_gen_text(text):
        return -1
    close = s.gen_close
    written = next((k for k in range(len(close) - 1, 0, -1) if text.endswith(close[:k])), 0)
    for want in (close[written:], close[written]):
        ids = [i for i, data in enumerate(spelled) if data == want.encode() and mask[i]]
        if ids:
            return ids[0]
    return -1


class Walker:
    def __init__(self, tokenizer: Any) -> None:
        self.vocab = vocab_for(tokenizer)
        tag_bytes = set().union(*(literal_bytes(s) for s in SYNTAXES))
        self.tag_tokens = np.zeros(self.vocab.vocab_size, dtype=np.bool_)
        for token_id, data in enumerate(self.vocab.token_bytes):
            self.tag_tokens[token_id] = bool(data) and set(data) <= tag_bytes
        self.closers = []
        for want in CLOSERS:
            ids = [i for i, data in enumerate(self.vocab.token_bytes) if data == want]
            if ids:
                self.closers.append(ids[0])

    def closing_token(self, text: str, syntax: str, mask: Any) -> int:
        return closing_token(self.vocab.token_bytes, text, syntax, mask)

    def walk(self, tokenizer: Any, document: str, seed: int, cap: int,
             syntax: str = "lines") -> None:
        rng = random.Random(seed)
        engines = [compile_constraint(document, tokenizer, engine=e, syntax=syntax)
                   for e in ("llguidance", "outlines")]
        main = engines[0]
        eos = main.eos_token_id
        history: list[tuple[str, bytes]] = []
        tokens: list[int] = []
        for step in range(cap + 200):
            masks = [c.allowed() for c in engines]
            assert masks[0].any(), f"dead end after {main.program_text!r}"
            if not np.array_equal(masks[0], masks[1]):
                # llguidance allows only the canonical spelling of forced bytes (e.g. "gen"
                # after "</", not "g"); elsewhere the engines must agree exactly.
                assert not (masks[0] & ~masks[1]).any(), main.program_text
                assert main.forced(), main.program_text
            mask = masks[0]
            history.append((main.program_text, np.packbits(mask).tobytes()))
            if step < cap:
                pool = mask & self.tag_tokens if rng.random() < 0.25 else mask
                if not pool.any():
                    pool = mask
                choice = int(rng.choice(np.flatnonzero(pool)))
            elif mask[eos]:
                choice = eos
            else:
                choice = self.closing_token(main.program_text, syntax, mask)
                if choice < 0:
                    choice = next((t for t in self.closers if mask[t]), -1)
                if choice < 0:
                    choice = int(rng.choice(np.flatnonzero(mask)))
            results = [c.consume(choice) for c in engines]
            assert results[0] == results[1]
            tokens.append(choice)
            if results[0] is not None:
                assert main.program_text.endswith(get_syntax(syntax).copy_close)
            if choice == eos:
                break
            if rng.random() < 0.05 and main.n_consumed >= 3:
                back = rng.randint(1, 3)
                for c in engines:
                    c.rollback(back)
                text, packed = history[-back]
                assert main.program_text == text
                assert np.packbits(main.allowed()).tobytes() == packed
                del history[-back:]
                del tokens[-back:]
        assert all(c.finished for c in engines), main.program_text
        program = parse(main.program_text, syntax)
        event(f"copies: {min(len(program.copies()), 3)}")
        replay = compile_constraint(document, tokenizer, syntax=syntax)
        closed = [r for r in replay.consume_many(tokens) if r is not None]
        assert replay.finished and replay.program_text == main.program_text
        check_resolves(program, closed, document, main.program_text, syntax)


@pytest.fixture(scope="module")
def byte_walker() -> Walker:
    return Walker("byte")


@pytest.fixture(scope="module")
def smollm2_walker(smollm2: Any) -> Walker:
    return Walker(smollm2)


@pytest.mark.outlines  # both engines walk in lockstep
@settings(max_examples=150, deadline=None)
@given(st.sampled_from(SIZES), st.integers(0, 2**32), st.integers(5, 120),
       st.sampled_from(SYNTAXES))
def test_byte_walks(byte_walker: Walker, n: int, seed: int, cap: int, syntax: str) -> None:
    document = make_document(random.Random(seed), n)
    byte_walker.walk("byte", document, seed, cap, syntax)


@pytest.mark.outlines
@settings(max_examples=100, deadline=None)
@given(st.sampled_from(SIZES), st.integers(0, 2**32), st.integers(5, 80),
       st.sampled_from(SYNTAXES))
def test_smollm2_walks(smollm2_walker: Walker, smollm2: Any, n: int, seed: int, cap: int,
                       syntax: str) -> None:
    document = make_document(random.Random(seed), n)
    smollm2_walker.walk(smollm2, document, seed, cap, syntax)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2000), st.integers(0, 2**32))
def test_llguidance_walks_any_size(smollm2: Any, n: int, seed: int) -> None:
    rng = random.Random(seed)
    document = make_document(rng, n)
    c = compile_constraint(document, smollm2)
    n_real = count_lines(document)
    tag = b'<copy lines="'
    taken: list[int] = []

    def take(*ids: int) -> None:
        c.consume_many(list(ids))
        taken.extend(ids)

    for _ in range(150):
        mask = c.allowed()
        assert mask.any()
        if mask[c.eos_token_id] and rng.random() < 0.1:
            take(c.eos_token_id)
            break
        take(int(rng.choice(np.flatnonzero(mask))))
        if c.finished:
            break
        if tag in c.program_bytes[-20:] and rng.random() < 0.5:
            take(*c.forced())
    spelled = smollm2.token_bytes()
    while not c.finished:
        mask = c.allowed()
        assert mask.any()
        if mask[c.eos_token_id]:
            take(c.eos_token_id)
            continue
        # Head for the end: in gen text, write the close tag; elsewhere mostly markup.
        closer = closing_token(spelled, c.program_text, "lines", mask)
        if closer >= 0:
            take(closer)
            continue
        allowed = np.flatnonzero(mask)
        markup = [t for t in allowed.tolist() if b"<" in spelled[t] or b">" in spelled[t]]
        take(int(rng.choice(markup if markup and rng.random() < 0.9 else allowed)))
        if len(c.program_bytes) > 100_000:
            pytest.fail("walk did not finish")
    assert n_real == c.n_lines
    replay = compile_constraint(document, smollm2)
    closed = [r for r in replay.consume_many(taken) if r is not None]
    assert replay.finished
    check_resolves(parse(c.program_text), closed, document, c.program_text, "lines")
