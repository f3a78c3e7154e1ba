"""DraftLength: how many tokens to draft, from what forwards cost and drafts earn."""

from __future__ import annotations

import pytest

from copygram.decode.drafting import DraftLength


def test_draft_length_follows_the_cost_of_batching_and_the_acceptance_rate() -> None:
    cheap_batch, dear_batch = DraftLength(10), DraftLength(10)
    for lengths, extra in ((cheap_batch, 0.005), (dear_batch, 0.040)):
        lengths.observe_forward(1, 0.010)  # a decode step: 10 ms
        lengths.observe_forward(11, 0.010 + extra)  # 10 more tokens in one forward
    # Prior acceptance 1/2: the k-th token saves 10 ms * 0.5**k and costs the extra per token.
    assert cheap_batch.length("tag") == 4  # 0.5 ms per token: 10 * 0.5**4 > 0.5 > 10 * 0.5**5
    assert dear_batch.length("tag") == 1  # 4 ms per token: 10 * 0.5**2 < 4
    for _ in range(50):
        dear_batch.observe_draft("lookup", proposed=10, accepted=10)
    assert dear_batch.length("lookup") > dear_batch.length("tag")
    fresh = DraftLength(7)
    assert fresh.length("tag") == 7  # no timings yet: one full draft to measure
    fresh.observe_forward(8, 0.020)
    assert fresh.length("tag") == 0  # every forward so far verified a draft: time a decode
    assert fresh.length("tag", feed=3) == 7  # (which only a one-token forward can be)
    for _ in range(100):
        dear_batch.observe_draft("gen", proposed=1, accepted=0)
    probes = [dear_batch.length("gen") for _ in range(4 * DraftLength.PROBE_EVERY)]
    assert probes.count(1) == 4 and set(probes) == {0, 1}  # rare one-token probes


def test_a_step_in_the_cost_of_batching_means_long_drafts_or_none() -> None:
    # transformers on a CPU: two tokens cost 1.5 decode steps, eleven hardly more.
    lengths = DraftLength(10)
    for n, seconds in ((1, 0.040), (2, 0.060), (11, 0.064)):
        lengths.observe_forward(n, seconds)
    six = lengths.cost(6)
    assert lengths.cost(2) == pytest.approx(0.060) and six is not None and six < 0.064
    assert lengths.length("tag") >= 5  # a short draft would pay the step for little
    for _ in range(20):
        lengths.observe_draft("poor", proposed=10, accepted=0)
    assert lengths.length("poor") == 0  # too rarely right to pay the step
    assert lengths.length("poor", feed=2) > 0  # the feed already paid it: drafting is cheap


def test_a_drafted_copy_carries_its_lines_only_when_that_pays() -> None:
    lengths = DraftLength(10)
    assert not lengths.content_pays("tag", 1, 5, 100)  # costs unknown: never gamble
    for n, seconds in ((1, 0.010), (6, 0.015), (200, 0.200)):
        lengths.observe_forward(n, seconds)  # ~1 ms per copied token, 10 per decode step
    for _ in range(30):
        lengths.observe_draft("sure", proposed=5, accepted=5)
        lengths.observe_draft("unsure", proposed=5, accepted=2)
    assert lengths.content_pays("sure", 1, 5, 20)
    assert not lengths.content_pays("unsure", 1, 5, 20)
    assert not lengths.content_pays("unsure", 1, 5, 2)  # even a short one: the tag is dear
