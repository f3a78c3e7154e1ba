"""Drafter.propose: the tag hypotheses and the lookup in gen text, on a byte tokenizer."""

from __future__ import annotations

import pytest

from copygram.decode.drafting import Draft, DraftConfig, Drafter
from copygram.errors import ConfigError
from copygram.language.lines import split_lines
from copygram.language.types import LineRange

DOCUMENT = "def f(x):\n    return x + 1\n\n\nprint(f(2))\nif a < b & c:\n    pass\n"
LINES = split_lines(DOCUMENT)
N = len(LINES)  # 7


BYTES = [bytes([i]) for i in range(256)]


def tokenize(text: str) -> list[int]:
    return list(text.encode("utf-8"))


def drafter(**config: int | bool) -> Drafter:
    return Drafter(LINES, tokenize, BYTES, DraftConfig(**{"max_tokens": 64, **config}))  # type: ignore[arg-type]


def text_of(draft: Draft | None) -> str:
    assert draft is not None
    return bytes(draft.tokens).decode("utf-8")


def test_at_the_start_proposes_copying_the_whole_document() -> None:
    draft = drafter().propose_after("", [])
    assert text_of(draft) == f'<copy lines="1-{N}"/>'
    assert draft is not None and draft.closes == LineRange(1, N)


def test_a_long_tag_is_cut_to_max_tokens_and_closes_nothing() -> None:
    draft = drafter(max_tokens=5).propose_after("", [])
    assert text_of(draft) == "<copy"
    assert draft is not None and draft.closes is None


def test_completes_a_partial_copy_tag() -> None:
    program = '<copy lines="1-'
    draft = drafter().propose_after(program, tokenize(program))
    assert text_of(draft) == f'{N}"/>'
    assert draft is not None and draft.closes == LineRange(1, N)


@pytest.mark.parametrize("k", [1, 2, 4])
def test_after_a_one_line_gen_following_copy_1_k_proposes_a_copy_from_k_plus_2(k: int) -> None:
    program = f'<copy lines="1-{k}"/><gen>    return x * 2\n</gen>'
    draft = drafter().propose_after(program, tokenize(program))
    assert text_of(draft) == f'<copy lines="{k + 2}-{N}"/>'
    assert draft is not None and draft.closes == LineRange(k + 2, N)


def test_a_gen_of_two_lines_skips_two() -> None:
    program = '<copy lines="1-1"/><gen>a\nb\n</gen>'
    draft = drafter().propose_after(program, tokenize(program))
    assert draft is not None and draft.closes == LineRange(4, N)


def test_after_a_copy_proposes_a_gen_rewriting_the_next_line() -> None:
    program = '<copy lines="1-5"/>'
    draft = drafter().propose_after(program, tokenize(program))
    assert text_of(draft) == "<gen>if a < b & c:\n"  # verbatim, as gen text is written
    assert draft is not None and draft.closes is None


def test_inside_a_gen_lookup_proposes_the_rest_of_the_old_line() -> None:
    program = '<copy lines="1-1"/><gen>    return x'
    context = tokenize('<copy lines="1-1"/>' + LINES[0] + "<gen>    return x")
    assert text_of(drafter().propose_after(program, context)).startswith(" + 1\n")


@pytest.mark.parametrize(("written", "rest"), [
    ("    return abs(x", " + 1\n"),  # an insertion: the old text waits, then goes on
    ("    return x - 1", "\n"),  # a replaced character: found again a little ahead
    ("    return x * 2 + 1", "\n"),  # a longer replacement
    ("    return 1", "\n"),  # a deletion: 'x + ' skipped
])
def test_inside_a_gen_the_old_line_is_followed_past_a_change(written: str, rest: str) -> None:
    program = '<copy lines="1-1"/><gen>' + written
    context = tokenize('<copy lines="1-1"/>' + LINES[0] + "<gen>" + written)
    draft = drafter().propose_after(program, context)
    assert draft is not None and draft.source == "old"
    assert text_of(draft).startswith(rest)


def test_a_gen_that_completes_a_line_may_end_and_copy_the_rest() -> None:
    program = '<copy lines="1-1"/><gen>    return x - 1\n'
    draft = drafter().propose_after(program, tokenize(program))
    assert text_of(draft) == f'</gen><copy lines="3-{N}"/>'
    assert draft is not None and draft.closes == LineRange(3, N) and draft.source == "close"
    last = '<copy lines="1-6"/><gen>    passed\n'  # rewrote the last line: nothing to copy
    assert text_of(drafter().propose_after(last, tokenize(last))) == "</gen>"


def test_once_the_close_tag_is_begun_the_rest_of_it_and_the_next_copy_are_drafted() -> None:
    # Not old text: "</ge" says the gen ends, whatever the alignment with the old lines.
    program = '<copy lines="1-1"/><gen>    return x - 1\n</ge'
    draft = drafter().propose_after(program, tokenize(program))
    assert text_of(draft) == f'n><copy lines="3-{N}"/>'
    assert draft is not None and draft.closes == LineRange(3, N) and draft.source == "closing"
    last = '<copy lines="1-6"/><gen>    passed\n</gen'
    assert text_of(drafter().propose_after(last, tokenize(last))) == ">"


def test_a_gen_close_and_the_copy_after_it_are_drafted_as_one_text() -> None:
    # The worked example in the prompt tokenizes "</gen><copy" with the token "><": a model
    # writes that, so drafting "</gen>" and "<copy" apart would be rejected at ">".
    vocabulary = [*BYTES, b"><"]

    def merging(text: str) -> list[int]:
        pieces = text.encode("utf-8").split(b"><")
        return [t for i, piece in enumerate(pieces) for t in ([256] if i else []) + list(piece)]

    d = Drafter(LINES, merging, vocabulary, DraftConfig(max_tokens=64, adaptive=False))
    program = '<copy lines="1-1"/><gen>    return x - 1\n'
    draft = d.propose_after(program, merging(program))
    assert draft is not None and 256 in draft.tokens
    assert b"".join(vocabulary[t] for t in draft.tokens) == f'</gen><copy lines="3-{N}"/>'.encode()


def test_old_text_is_followed_incrementally() -> None:
    d = drafter()
    head = '<copy lines="1-5"/><gen>'
    program = ""
    for piece in ("if a ", "<", "= b", " &"):  # one gen written in steps
        program += piece
        draft = d.propose_after(head + program, tokenize(program))
    assert text_of(draft).startswith(" c:\n")
    fresh = drafter().propose_after(head + program, tokenize(program))  # all at once: same alignment
    assert text_of(fresh) == text_of(draft)


def test_lookup_follows_the_document_as_gen_text_writes_it() -> None:
    program = '<copy lines="1-5"/><gen>if a'
    context = tokenize('<copy lines="1-5"/>' + "".join(LINES[:5]) + "<gen>if a")
    assert text_of(drafter().propose_after(program, context)).startswith(" < b & c:\n")
    # A reserved word in the document is drafted escaped, as gen text must write it.
    lines = ["x = 1\n", 's = "</gen>"\n']
    d = Drafter(lines, tokenize, BYTES, DraftConfig(max_tokens=64))
    draft = d.propose_after('<copy lines="1-1"/>', tokenize('<copy lines="1-1"/>x = 1\n'))
    assert text_of(draft) == '<gen>s = "&lt;/gen>"\n'


def test_lookup_drafts_the_documents_own_token_split_across_line_ends() -> None:
    # A BPE-like vocabulary merges a newline with the next line's indent; line-by-line
    # tokenization of the document would split them, and the model never writes that split.
    indent = 256
    vocabulary = [*BYTES, b"\n    "]

    def merging(text: str) -> list[int]:
        pieces = text.encode("utf-8").split(vocabulary[indent])
        tokens = list(pieces[0])
        for piece in pieces[1:]:
            tokens += [indent, *piece]
        return tokens

    d = Drafter(LINES, merging, vocabulary, DraftConfig(max_tokens=8, adaptive=False))
    # A gen unlike the old text it replaces (so old-text alignment gives up), ending in an
    # n-gram of line 1.
    program = f'<copy lines="1-4"/><gen>{"q" * 16} def f'
    draft = d.propose_after(program, merging("".join(LINES[:4]) + program[len('<copy lines="1-4"/>'):]))
    assert draft is not None and draft.source == "lookup"
    assert draft.tokens == merging("(x):\n    return x + 1\n")[:8]
    assert indent in draft.tokens


def test_lookup_falls_back_to_what_the_edit_wrote_then_to_the_instruction() -> None:
    d = Drafter(LINES, tokenize, BYTES, DraftConfig(max_tokens=8, adaptive=False),
                instruction="Rename it to QUUX_VALUE.")
    head = f'<copy lines="1-{N}"/><gen>'
    program = head + "QJ = 1\nQK = QJ"  # nowhere in the document
    assert text_of(d.propose_after(program, tokenize(program))) == " = 1\nQK "
    program = head + "QUU"  # only in the instruction
    assert text_of(d.propose_after(program, tokenize(program))) == "X_VALUE."


def test_after_a_copy_to_the_end_only_an_appended_gen_is_drafted() -> None:
    everything = f'<copy lines="1-{N}"/>'
    for partial, rest in (("", "<gen>"), ("<", "gen>"), ("<ge", "n>")):
        draft = drafter().propose_after(everything + partial, tokenize(everything + partial))
        assert draft is not None and draft.source == "append" and text_of(draft) == rest


def test_nothing_to_propose() -> None:
    everything = f'<copy lines="1-{N}"/>'
    assert drafter(gen=False).propose_after(everything, tokenize(everything)) is None  # used up
    assert drafter(gen=False).propose_after('<copy lines="1-2"/>', []) is None
    assert drafter(tags=False).propose_after("", []) is None
    rewritten_to_the_end = f'<copy lines="1-{N - 1}"/><gen>    passed\n</gen>'
    assert drafter().propose_after(rewritten_to_the_end, tokenize(rewritten_to_the_end)) is None
    unknown = "<gen>QJZKVWXYUTSRPONM"  # no old text, no n-gram in the document, nothing repeated
    assert drafter().propose_after(unknown, tokenize(unknown)) is None


def test_max_tokens_zero_disables_drafting() -> None:
    d = Drafter(LINES, tokenize, BYTES, DraftConfig(max_tokens=0))
    assert d.propose_after("", []) is None
    assert d.propose_after('<copy lines="1-1"/><gen>    return', tokenize("    return")) is None


def test_rolled_back_program_is_reparsed() -> None:
    d = drafter()
    long = '<copy lines="1-3"/><gen>x\n</gen>'
    assert d.propose_after(long, tokenize(long)) is not None
    draft = d.propose_after("", [])
    assert draft is not None and draft.closes == LineRange(1, N)


def test_bad_config() -> None:
    with pytest.raises(ConfigError):
        DraftConfig(max_tokens=-1)
    with pytest.raises(ConfigError):
        DraftConfig(max_ngram=0)
