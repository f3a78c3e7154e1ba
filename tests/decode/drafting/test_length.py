"""DraftLength: how many tokens to draft, from a fixed cost curve and what drafts earn."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram.backends.base import LLAMACPP_CPU, TRANSFORMERS_CPU, BatchProfile
from copygram.decode.drafting import DraftLength


def profile(*points: tuple[int, float]) -> BatchProfile:
    return BatchProfile(((1, 1.0), *points), step_tolerance=0.0)


def test_draft_length_follows_the_cost_of_batching_and_the_acceptance_rate() -> None:
    # 10 more tokens in one forward cost 0.5 or 4 decode steps.
    cheap_batch = DraftLength(10, profile((11, 1.5)))
    dear_batch = DraftLength(10, profile((11, 5.0)))
    # Prior acceptance 1/2: the k-th token saves 0.5**k steps and costs 0.05 or 0.4 per token.
    assert cheap_batch.length("tag") == 4  # 0.5**4 > 0.05 > 0.5**5
    assert dear_batch.length("tag") == 1  # 0.5**2 < 0.4
    for _ in range(50):
        dear_batch.observe_draft("lookup", proposed=10, accepted=10)
    assert dear_batch.length("lookup") > dear_batch.length("tag")
    for _ in range(100):
        dear_batch.observe_draft("gen", proposed=1, accepted=0)
    probes = [dear_batch.length("gen") for _ in range(4 * DraftLength.PROBE_EVERY)]
    assert probes.count(1) == 4 and set(probes) == {0, 1}  # rare one-token probes


def test_a_prior_lets_a_source_draft_from_its_first_call() -> None:
    # llama.cpp's cost curve: an even prior drafts nothing until a probe earns some trust.
    lengths = DraftLength(64, LLAMACPP_CPU, {"line": (9, 1)})
    assert lengths.length("lookup") == 0 and lengths.length("line") >= 5
    for _ in range(12):  # the edit says otherwise: the prior gives way
        lengths.observe_draft("line", proposed=8, accepted=0)
    assert lengths.length("line") == 0
    with pytest.raises(ValueError, match="pseudo-counts"):
        DraftLength(8, LLAMACPP_CPU, {"line": (0, 1)})


def test_a_step_in_the_cost_of_batching_means_long_drafts_or_none() -> None:
    # Two tokens cost 1.5 decode steps, eleven hardly more.
    lengths = DraftLength(10, profile((2, 1.5), (11, 1.6)))
    assert lengths.cost(2) == pytest.approx(1.5) and lengths.cost(6) < 1.6
    assert lengths.length("tag") >= 5  # a short draft would pay the step for little
    for _ in range(20):
        lengths.observe_draft("poor", proposed=10, accepted=0)
    assert lengths.length("poor") == 0  # too rarely right to pay the step
    assert lengths.length("poor", feed=2) > 0  # the feed already paid it: drafting is cheap


def test_a_drafted_copy_carries_its_lines_only_when_that_pays() -> None:
    lengths = DraftLength(10, profile((6, 1.5), (200, 20.0)))  # ~0.1 step per copied token
    for _ in range(30):
        lengths.observe_draft("sure", proposed=5, accepted=5)
        lengths.observe_draft("unsure", proposed=5, accepted=2)
    assert lengths.content_pays("sure", 1, 5, 20)
    assert not lengths.content_pays("unsure", 1, 5, 20)


@given(st.lists(st.tuples(st.sampled_from(["tag", "gen"]), st.integers(1, 16),
                          st.integers(0, 16)), max_size=40),
       st.integers(1, 8))
def test_lengths_depend_only_on_what_drafts_earned(verdicts: list[tuple[str, int, int]],
                                                    feed: int) -> None:
    # No clock anywhere: two DraftLengths told the same verdicts size every draft alike.
    for costs in (LLAMACPP_CPU, TRANSFORMERS_CPU):
        a, b = DraftLength(16, costs), DraftLength(16, costs)
        for source, proposed, accepted in verdicts:
            accepted = min(accepted, proposed)
            assert a.length(source, feed) == b.length(source, feed)
            a.observe_draft(source, proposed, accepted)
            b.observe_draft(source, proposed, accepted)


def test_a_profile_checks_its_points() -> None:
    with pytest.raises(ValueError, match="start at"):
        BatchProfile(((2, 1.0), (8, 3.0)), 0.0)
    with pytest.raises(ValueError, match="increasing"):
        BatchProfile(((1, 1.0), (8, 3.0), (8, 4.0)), 0.0)
    with pytest.raises(ValueError, match="non-decreasing"):
        BatchProfile(((1, 1.0), (8, 0.5)), 0.0)
    with pytest.raises(ValueError, match="step_tolerance"):
        BatchProfile(((1, 1.0), (8, 3.0)), float("nan"))
    assert LLAMACPP_CPU.cost(1) == 1.0 and LLAMACPP_CPU.cost(1024) > LLAMACPP_CPU.cost(512)


def test_a_run_source_is_sized_by_its_first_token_and_its_continuation_apart() -> None:
    # Drafts that fail at once or go on to the end (an output repeating earlier text): kept
    # from the first token 1 time in 3, every token after that kept.
    cheap = profile((16, 1.2), (64, 2.6))
    runs = DraftLength(64, cheap, runs=("echo",))
    plain = DraftLength(64, cheap)
    for lengths in (runs, plain):
        for _ in range(20):
            lengths.observe_draft("echo", proposed=10, accepted=0)
            lengths.observe_draft("echo", proposed=10, accepted=0)
            lengths.observe_draft("echo", proposed=10, accepted=10)
    # The same history: a third of a run's first tokens, every token once a draft is right.
    assert runs.acceptance("echo") == pytest.approx(21 / 62)
    assert plain.acceptance("echo") == pytest.approx(201 / 242)
    # One rate for both drafts too long a run: 200 of 600 tokens kept at a per-token rate of
    # 0.83; the run model drafts the length a kept draft reaches at a third of the chance.
    assert runs.length("echo") >= 10
    one_in_ten = DraftLength(64, cheap, runs=("echo",))
    for _ in range(30):
        one_in_ten.observe_draft("echo", proposed=10, accepted=0 if _ % 10 else 1)
    assert one_in_ten.length("echo") <= 3  # right 1 time in 10, and then only for one token


def test_misses_in_a_row_discount_a_source_down_to_a_floor() -> None:
    lengths = DraftLength(8, TRANSFORMERS_CPU)
    fresh = lengths.acceptance("lookup")
    assert lengths.acceptance("lookup", misses=1) == pytest.approx(fresh * 0.5)
    # Measured: after 2-8 misses a source's next first token is kept ~0.4 as often, not less.
    for misses in (2, 5, 30):
        assert lengths.acceptance("lookup", misses=misses) == pytest.approx(fresh * 0.4)
    # On a backend where a few drafted tokens cost almost nothing, a lost source still drafts.
    assert lengths.length("lookup", misses=30) >= 1


def test_at_a_long_context_the_measured_forwards_cost_what_was_measured() -> None:
    """The AVX-512 llama.cpp profile's long-context model against its measurement (Qwen2.5-
    Coder-1.5B, 2 vCPUs of an Intel Xeon: 16 and 64 tokens at a 6,000-token context cost 7.0
    and 26.8 decode steps of that context), and drafts priced there are no longer."""
    from copygram.backends.base import LLAMACPP_CPU_AVX512, LLAMACPP_CPU_AVX512_INVARIANT

    long = LLAMACPP_CPU_AVX512.at_context(6000)
    assert long.cost(64) == pytest.approx(26.8, rel=0.05)
    assert long.cost(16) == pytest.approx(7.0, rel=0.1)
    assert LLAMACPP_CPU_AVX512.at_context(400) is LLAMACPP_CPU_AVX512  # at or below the base
    assert LLAMACPP_CPU_AVX512_INVARIANT.at_context(6000).costs == long.costs
    assert LLAMACPP_CPU.at_context(6000) is LLAMACPP_CPU  # not measured: as it is
    short_lengths = DraftLength(64, LLAMACPP_CPU_AVX512, {"line": (9, 1)})
    long_lengths = DraftLength(64, long, {"line": (9, 1)})
    assert long_lengths.length("line") <= short_lengths.length("line")


@given(st.lists(st.floats(0.1, 8.0), min_size=1, max_size=5), st.integers(0, 5000),
       st.integers(0, 40_000), st.floats(0.0, 1e-3), st.floats(0.0, 1e-3))
def test_a_profile_at_any_context_prices_a_forward_s_time_in_that_context_s_steps(
        steps: list[float], base: int, tokens: int, kv: float, attention: float) -> None:
    """At a longer context the curve is still a profile (one decode step at one token, never
    falling), and a forward's time, in decode steps at the base, is the same both ways: its
    cost there plus what the extra context adds, or its cost at the context times that
    context's decode step."""
    points, cost = [], 1.0
    for n, step in enumerate(steps, start=1):
        cost += step
        points.append((2 ** n, cost))
    base_profile = BatchProfile(((1, 1.0), *points), 0.0, (base, kv, attention))
    at = base_profile.at_context(tokens)  # checked by BatchProfile itself
    extra = max(0, tokens - base)
    step = 1 + extra * (kv + attention)
    for n in (1, 3, *(n for n, _ in points)):
        assert at.cost(n) * step == pytest.approx(base_profile.cost(n) + extra * (kv + n * attention))
    with pytest.raises(ValueError, match="context"):
        BatchProfile(((1, 1.0), (8, 3.0)), 0.0, (100, -1.0, 0.0))
