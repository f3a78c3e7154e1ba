"""The line-aligned prediction drafter: where it follows the prediction after kept, changed,
inserted and deleted lines, drafts off a token boundary, n-gram fallback, sizes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from copygram.backends.base import LLAMACPP_CPU, TRANSFORMERS_CPU
from copygram.decode.drafting import Draft, DraftConfig, PredictionDrafter
from tests.strategies import texts

BYTES = [bytes([i]) for i in range(256)]
AB = 256  # a merged token "ab", to put token boundaries where bytes have none
VOCAB = [*BYTES, b"ab"]
FIXED = DraftConfig(max_tokens=40, adaptive=False)


def tokenize(text: str) -> list[int]:
    """Bytes, with every "ab" one token."""
    out: list[int] = []
    data = text.encode()
    i = 0
    while i < len(data):
        if data[i : i + 2] == b"ab":
            out.append(AB)
            i += 2
        else:
            out.append(data[i])
            i += 1
    return out


def drafter(prediction: str, config: DraftConfig = FIXED) -> PredictionDrafter:
    return PredictionDrafter(prediction, tokenize, VOCAB, config)


def text_of(draft: Draft | None) -> str:
    assert draft is not None
    return b"".join(VOCAB[t] for t in draft.tokens).decode()


def propose(d: PredictionDrafter, output: str) -> Draft | None:
    return d.propose(tokenize(output))


PREDICTION = "x = 1\ny = 2\nz = 3\n"


def test_kept_lines_draft_the_rest_of_the_line_and_the_lines_after() -> None:
    d = drafter(PREDICTION)
    assert text_of(propose(d, "")) == PREDICTION
    draft = propose(d, "x = 1\ny")
    assert text_of(draft) == " = 2\nz = 3\n" and draft is not None and draft.source == "line"
    assert d.anchor == 1


def test_a_changed_line_is_passed_over_and_an_inserted_line_waits() -> None:
    changed = drafter(PREDICTION)
    assert text_of(propose(changed, "x = 1\ny = 5\n")) == "z = 3\n"
    inserted = drafter(PREDICTION)
    assert text_of(propose(inserted, "x = 1\nprint('hello world')\n")) == "y = 2\nz = 3\n"


def test_a_deleted_line_is_found_again_by_the_line_the_output_starts() -> None:
    d = drafter(PREDICTION)
    assert text_of(propose(d, "x = 1\nz")) == " = 3\n"
    d = drafter(PREDICTION)
    propose(d, "x = 1\nz = 3\n")  # re-anchored past the line it reproduced
    # Past the prediction's end: no prediction draft, only an echo of the output itself.
    end = propose(d, "x = 1\nz = 3\n")
    assert d.anchor == 3 and end is not None and end.source == "echo"
    assert text_of(end) == "z = 3\n"  # what followed the output's first "\n"


def test_a_trivial_line_re_anchors_only_close_by() -> None:
    prediction = "".join(f"value_{i} = {i}\n" for i in range(10)) + "}\n"
    d = drafter(prediction)
    propose(d, "}\n")  # ten lines ahead: not taken for the "}" the prediction ends with
    assert d.anchor == 0


def test_the_rest_of_a_changed_line_is_resynchronised() -> None:
    d = drafter("value = compute(alpha, beta)\nnext\n")
    draft = propose(d, "value = compute(alpha, gamma, beta")
    assert draft is not None and draft.source == "resync" and text_of(draft) == ")\nnext\n"


def test_n_gram_lookup_is_the_fallback() -> None:
    d = drafter("qq\nrr\n")
    draft = propose(d, "qq\nrr\nxq")
    assert draft is not None and draft.source == "lookup" and text_of(draft).startswith("q\nrr")


def test_off_a_token_boundary_the_rest_is_tokenized() -> None:
    d = drafter("xab\ny\n")
    assert d.propose([ord("x"), ord("a")]) == Draft([ord("b"), ord("\n"), ord("y"), ord("\n")],
                                                    source="line")
    d = drafter("xab\ny\n")
    assert d.propose([ord("x"), AB]) == Draft([ord("\n"), ord("y"), ord("\n")], source="line")


def test_nothing_to_draft() -> None:
    assert drafter("").propose(tokenize("anything")) is None
    assert drafter(PREDICTION, DraftConfig(max_tokens=0)).propose([]) is None


def test_draft_sizes_follow_the_cost_curve_and_the_cap() -> None:
    capped = drafter(PREDICTION * 5, DraftConfig(max_tokens=4, adaptive=False))
    draft = propose(capped, "")
    assert draft is not None and len(draft.tokens) == 4
    adaptive = PredictionDrafter(PREDICTION * 5, tokenize, VOCAB, DraftConfig(max_tokens=16),
                                 LLAMACPP_CPU)
    sizes = []
    output = ""
    for _ in range(30):
        draft = propose(adaptive, output)
        sizes.append(0 if draft is None else len(draft.tokens))
        if draft is not None:
            adaptive.feedback(draft, len(draft.tokens))  # always right: drafts grow
            output += text_of(draft)
        output += (PREDICTION * 5)[len(output)] if len(output) < len(PREDICTION * 5) else ""
    assert max(sizes) > 1 and all(size <= 16 for size in sizes)


@settings(max_examples=100, deadline=None)
@given(texts, texts, st.integers(0, 40))
def test_drafts_depend_only_on_the_tokens(prediction: str, output: str, cut: int) -> None:
    runs = []
    for _ in range(2):
        d = PredictionDrafter(prediction, tokenize, VOCAB, DraftConfig(), LLAMACPP_CPU)
        tokens = tokenize(output)
        drafts = []
        for end in range(0, len(tokens) + 1, max(1, cut)):
            draft = d.propose(tokens[:end])
            drafts.append(draft)
            if draft is not None:
                d.feedback(draft, min(len(draft.tokens), end % 3))
        runs.append(drafts)
    assert runs[0] == runs[1]


def test_an_output_that_repeats_itself_is_drafted_from_itself() -> None:
    # The prediction has nothing like the output; the output's own earlier text drafts its
    # repeats, as prompt lookup (which searches the output too) would.
    d = drafter("something else entirely\n")
    loop = "say hi to qq\nsay hi to qq\nsay hi"
    draft = propose(d, loop)
    assert draft is not None and draft.source == "echo" and text_of(draft).startswith(" to qq\n")
    # At the same n-gram the prediction comes first.
    d = drafter("a b c d\n")
    assert propose(d, "q b c x\nzz b c").source == "lookup"  # type: ignore[union-attr]


def test_the_prompt_drafts_what_neither_the_prediction_nor_the_output_holds() -> None:
    # A model that explains its edit repeats the instruction, which only the prompt holds.
    prompt = tokenize("Fix the bug in add_numbers please.\n")
    d = PredictionDrafter("x = 1\n", tokenize, VOCAB, FIXED, context=prompt)
    draft = propose(d, "x = 1\nI fixed the bug in add")
    assert draft is not None and draft.source == "prompt"
    assert text_of(draft).startswith("_numbers please.")
    # Without a prediction there is still the prompt (and the output) to draft from.
    bare = PredictionDrafter("", tokenize, VOCAB, FIXED, context=prompt)
    assert text_of(propose(bare, "the bug")).startswith(" in add_numbers")


def test_the_source_whose_drafts_were_kept_is_preferred_at_the_same_n_gram() -> None:
    # Both the prediction and the output have "b c" followed by different text; once the
    # prediction's lookups have been rejected and the echo's kept, the echo drafts first.
    d = PredictionDrafter("a b c d\n", tokenize, VOCAB, DraftConfig(), TRANSFORMERS_CPU)
    output = "q b c x\nzz b c"
    first = propose(d, output)
    assert first is not None and first.source == "lookup"
    for _ in range(3):
        d.feedback(Draft(first.tokens, source="lookup"), 0)
        d.feedback(Draft(tokenize(" x\n"), source="echo"), 3)
    second = propose(d, output)
    assert second is not None and second.source == "echo" and text_of(second).startswith(" x")


def test_a_resync_gives_way_to_a_lookup_that_starts_right_more_often() -> None:
    # The output is writing prose, not the old line: a resync (the old line after the last few
    # characters the output shares with it) and the output's own earlier text both have a draft.
    d = PredictionDrafter("value = compute(alpha, beta)\nnext\n", tokenize, VOCAB,
                          DraftConfig(), TRANSFORMERS_CPU)
    output = "beta! the sum, beta"
    first = propose(d, output)
    assert first is not None and first.source == "resync"  # a tie: the resync first
    assert text_of(first).startswith(")\nnext")
    for _ in range(3):
        d.feedback(Draft(first.tokens, source="resync"), 0)
        d.feedback(Draft(tokenize("! the"), source="echo"), 5)
    second = propose(d, output)
    assert second is not None and second.source == "echo" and text_of(second).startswith("! the")
    # A line draft is not put in question: the output reproduces the prediction's line there.
    kept = PredictionDrafter(PREDICTION, tokenize, VOCAB, DraftConfig(), TRANSFORMERS_CPU)
    for _ in range(3):
        kept.feedback(Draft(tokenize("x"), source="line"), 0)
        kept.feedback(Draft(tokenize(" = 1"), source="echo"), 4)
    draft = propose(kept, "x = 1\ny = 2\nz")
    assert draft is not None and draft.source == "line" and text_of(draft).startswith(" = 3")


def test_a_line_after_one_the_prediction_did_not_hold_is_a_rejoin_with_its_own_rate() -> None:
    d = PredictionDrafter(PREDICTION, tokenize, VOCAB, DraftConfig(), TRANSFORMERS_CPU)
    kept = propose(d, "x = 1\n")
    assert kept is not None and kept.source == "line" and text_of(kept) == "y = 2\nz = 3\n"
    for after in ("x = 1\ny = 5\n", "x = 1\nprint('hello world')\n"):  # changed, inserted
        rejoin = propose(PredictionDrafter(PREDICTION, tokenize, VOCAB, DraftConfig(),
                                           TRANSFORMERS_CPU), after)
        assert rejoin is not None and rejoin.source == "rejoin"
    # Once the output line starts like the anchored line, the draft is a line draft again.
    again = propose(d, "x = 1\nprint('hello world')\ny")
    assert again is not None and again.source == "line" and text_of(again) == " = 2\nz = 3\n"
    # Rejoins that fail do not shorten the drafts that go on from a kept line.
    for _ in range(6):
        d.feedback(Draft(tokenize("y = 2\n"), source="rejoin"), 0)
    assert d.sizer.acceptance("rejoin") < 0.2 < d.sizer.acceptance("line")
    assert text_of(propose(d, "x = 1\nprint('hello world')\ny")) == " = 2\nz = 3\n"
    # A rejoin that keeps failing gives way to a lookup that starts right.
    for _ in range(3):
        d.feedback(Draft(tokenize("y ="), source="echo"), 3)
    output = "x = 1\nqq\n"
    draft = propose(PredictionDrafter(PREDICTION, tokenize, VOCAB, DraftConfig(),
                                      TRANSFORMERS_CPU), output)
    assert draft is not None and draft.source == "rejoin"
    draft = propose(d, output)
    assert draft is not None and draft.source != "rejoin"
