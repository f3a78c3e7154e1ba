"""The baselines and the format token counter on the real default model (llama.cpp)."""

from __future__ import annotations

import pytest

from copygram.bench.baselines import full_regeneration, prompt_lookup
from copygram.bench.e2e import baseline_prompt

pytestmark = pytest.mark.llamacpp

DOCUMENT = "def add(a, b):\n    return a - b\n\n\nprint(add(1, 2))\n"
FIXED = DOCUMENT.replace("a - b", "a + b")


@pytest.fixture(scope="module")
def backend():  # type: ignore[no-untyped-def]
    from copygram.backends import load

    return load({"backend": "llamacpp", "n_ctx": 1024})


def test_baselines_feed_exactly_the_target(backend) -> None:  # type: ignore[no-untyped-def]
    prompt = baseline_prompt(backend, DOCUMENT, "Fix the bug.")
    target = backend.tokenize(FIXED)
    backend.truncate(0)
    backend.splice(prompt)
    full = full_regeneration(backend, target)
    assert backend.n_tokens == len(prompt) + len(target) == len(prompt) + full.forwards
    backend.truncate(len(prompt))
    lookup = prompt_lookup(backend, prompt, target, k=10)
    assert backend.n_tokens == len(prompt) + len(target)
    assert lookup.drafted_tokens + lookup.decoded_tokens == len(target)
    assert lookup.forwards < full.forwards / 2  # the fix copies almost everything


def test_vocab_token_counter_matches_backend(backend) -> None:  # type: ignore[no-untyped-def]
    from copygram.bench.formats import vocab_token_counter

    count = vocab_token_counter()
    assert count(FIXED) == len(backend.tokenize(FIXED))
    assert count("") == 0
