from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram.bench.baselines import (
    PromptLookup,
    find_candidate_pred_tokens,
    full_regeneration,
    prompt_lookup,
)
from copygram.testing import ScriptedBackend

small_ids = st.lists(st.integers(0, 5), max_size=60)


def _prefilled(prompt: list[int]) -> ScriptedBackend:
    backend = ScriptedBackend()
    if prompt:
        backend.splice(prompt)
    backend.calls.clear()
    return backend


@given(small_ids.filter(bool), small_ids)
def test_full_regeneration_feeds_every_target_token_once(prompt: list[int], target: list[int]
                                                         ) -> None:
    backend = _prefilled(prompt)
    stats = full_regeneration(backend, target)
    assert backend.cached_ids == prompt + target
    assert stats.forwards == len(target) == stats.decoded_tokens == stats.output_tokens
    assert all(call.kind == "decode" and len(call.ids) == 1 for call in backend.calls)
    assert stats.drafted_tokens == 0


@given(small_ids.filter(bool), small_ids, st.integers(1, 12), st.integers(1, 4))
def test_prompt_lookup_accepts_exactly_the_teacher_tokens(
        prompt: list[int], target: list[int], k: int, max_ngram: int) -> None:
    backend = _prefilled(prompt)
    stats = prompt_lookup(backend, prompt, target, k=k, max_ngram=max_ngram)
    assert backend.cached_ids == prompt + target  # rejected drafts were truncated
    assert stats.forwards <= len(target)
    assert stats.forwards == len(backend.calls)
    assert stats.decoded_tokens + stats.drafted_tokens == len(target) == stats.output_tokens
    # Every forward but the last yields one bonus token, and t_0 comes from the prompt.
    assert stats.decoded_tokens == stats.forwards
    assert all(len(call.ids) <= k + 1 for call in backend.calls)


@given(st.lists(st.integers(0, 4), max_size=40), st.integers(1, 6), st.integers(1, 4),
       st.lists(st.integers(0, 4), max_size=20))
def test_incremental_drafter_matches_hf_reference(
        ids: list[int], k: int, max_ngram: int, more: list[int]) -> None:
    drafter = PromptLookup(ids, k=k, max_ngram=max_ngram, eos_token_ids={4})
    for token in [None, *more]:
        if token is not None:
            drafter.extend([token])
        assert drafter.propose() == find_candidate_pred_tokens(
            drafter.ids, k=k, max_ngram=max_ngram, eos_token_ids={4})


def test_hf_reference_examples() -> None:
    # Longest n-gram first, leftmost earlier occurrence, continuation capped at k.
    assert find_candidate_pred_tokens([1, 2, 3, 9, 1, 2, 3, 7, 2, 3], k=2, max_ngram=2) == [9, 1]
    assert find_candidate_pred_tokens([5, 1, 2, 1, 2], k=5, max_ngram=1) == [1, 2]
    assert find_candidate_pred_tokens([1, 2, 3], k=3) == []
    assert find_candidate_pred_tokens([1, 7, 8, 1], k=3, eos_token_ids={8}) == [7]


@pytest.mark.parametrize("k", [10, 32])
def test_copying_the_prompt_takes_about_n_over_k_forwards(k: int) -> None:
    rng = random.Random(0)
    document = rng.sample(range(256), 200)  # distinct tokens: every lookup finds the right spot
    prompt = [1, 2, 3, *document]
    backend = _prefilled(prompt)
    stats = prompt_lookup(backend, prompt, document, k=k)
    assert backend.cached_ids == prompt + document
    full = -(-len(document) // (k + 1))
    assert full <= stats.forwards <= full + 1
    assert stats.forwards * (k + 1) >= len(document) > (stats.forwards - 2) * (k + 1)


def test_empty_target_costs_nothing() -> None:
    backend = _prefilled([1, 2])
    assert full_regeneration(backend, []).forwards == 0
    assert prompt_lookup(backend, [1, 2], []).forwards == 0
    assert backend.cached_ids == [1, 2]
