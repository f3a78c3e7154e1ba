from __future__ import annotations

from hypothesis import given

from copygram import Copy, Gen, Program, oracle, render, resolve
from copygram.language.lines import split_lines
from copygram.language.oracle import CharCost, TokenCost, program_cost
from tests.strategies import related_documents, texts


@given(related_documents())
def test_round_trip_related(pair: tuple[str, str]) -> None:
    before, after = pair
    assert resolve(oracle(before, after), before) == after


@given(texts, texts)
def test_round_trip_arbitrary(before: str, after: str) -> None:
    assert resolve(oracle(before, after), before) == after


@given(related_documents())
def test_never_longer_than_generating_everything(pair: tuple[str, str]) -> None:
    before, after = pair
    program = oracle(before, after)
    whole = Program([Gen(after)]) if after else Program()
    assert len(render(program)) <= len(render(whole))
    # The cost the programme minimises is the rendered length, exactly.
    assert program_cost(program, CharCost()) == len(render(program))


@given(texts)
def test_identity_is_one_copy_when_that_is_shorter(document: str) -> None:
    n = len(split_lines(document))
    program = oracle(document, document)
    if not n:
        assert program == Program()  # nothing to copy, nothing to write
        return
    single = Program([Copy(1, n)])
    if len(render(single)) < len(render(Program([Gen(document)]))):
        assert program == single


def test_reordered_and_duplicated_blocks_are_copied() -> None:
    block_a = "".join(f"alpha line {i} with some length\n" for i in range(5))
    block_b = "".join(f"beta line {i} with some length\n" for i in range(5))
    program = oracle(block_a + block_b, block_b + block_a + block_a)
    assert program == Program([Copy(6, 10), Copy(1, 5), Copy(1, 5)])


def test_short_lines_are_generated_rather_than_copied() -> None:
    before = "".join(f"a rather long line number {i}\n" for i in range(10))
    after = before.replace("number 4\n", "number 4\n\n")
    program = oracle(before, after)
    assert Gen("\n") in program
    assert resolve(program, before) == after


def _toy_tokenize(text: str) -> list[int]:
    """A deterministic stand-in tokenizer: runs of word characters, or single other characters
    (the ids are their lengths: only the count matters to the cost)."""
    import re

    return [len(piece) for piece in re.findall(r"\w+|\W", text)]


@given(related_documents())
def test_token_cost_oracle_round_trips_and_minimises_tokens(pair: tuple[str, str]) -> None:
    before, after = pair
    cost = TokenCost(_toy_tokenize)
    program = oracle(before, after, cost=cost)
    assert resolve(program, before) == after
    by_chars = oracle(before, after)
    assert program_cost(program, cost) <= program_cost(by_chars, cost)
    whole = Program([Gen(after)]) if after else Program()
    assert program_cost(program, cost) <= program_cost(whole, cost)


@given(related_documents())
def test_compact_char_cost_matches_the_compact_rendering(pair: tuple[str, str]) -> None:
    before, after = pair
    program = oracle(before, after, cost=CharCost("compact"))
    assert resolve(program, before) == after
    assert program_cost(program, CharCost("compact")) == len(render(program, "compact"))
