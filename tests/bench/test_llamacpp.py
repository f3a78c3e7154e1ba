"""The baselines and the format token counter on the real default model (llama.cpp)."""

from __future__ import annotations

import pytest

from copygram.backends import Backend, load
from copygram.bench.baselines import baseline_prompt, full_regeneration, prompt_lookup
from copygram.bench.formats import token_counter
from copygram.errors import BackendError

pytestmark = pytest.mark.llamacpp

DOCUMENT = "def add(a, b):\n    return a - b\n\n\nprint(add(1, 2))\n"
FIXED = DOCUMENT.replace("a - b", "a + b")


@pytest.fixture(scope="module")
def backend() -> Backend:
    try:
        return load({"backend": "llamacpp", "n_ctx": 1024})
    except BackendError as exc:  # the default model is not installed
        pytest.skip(f"no default model: {exc}")


def test_baselines_feed_exactly_the_target(backend: Backend) -> None:
    prompt = baseline_prompt(backend, DOCUMENT, "Fix the bug.")
    assert DOCUMENT in backend.detokenize(prompt)
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


def test_token_counter_counts_the_models_tokens(backend: Backend) -> None:
    count = token_counter(backend)
    assert count(FIXED) == len(backend.tokenize(FIXED)) < len(FIXED)  # BPE merges characters
    assert count("") == 0
