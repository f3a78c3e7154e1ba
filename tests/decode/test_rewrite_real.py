"""Rewrite mode on real models: token-identical to plain step-by-step greedy decoding of the same
prompt through the same backend, on every run, and drafted from the file where the model keeps it.

Where a test allows it (``strict=False``), the outputs may part only at a choice that plain
decoding itself makes by a top-2 margin within the backend's step tolerance: on llama.cpp the KV
cache a batched forward writes differs slightly from the one one-token steps write, so a later
choice by a margin of ~0.05 can go either way (docs/rewrite.md, "What is guaranteed").

For each backend and model on this machine (never downloaded by a test): SmolLM2 on llama.cpp and
Transformers, and Qwen2.5-Coder-0.5B on llama.cpp (a second tokenizer) when it is in the model
cache (``copygram models fetch qwen2.5-coder-0.5b``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from copygram.backends.base import Backend
from copygram.decode.events import DoneEvent
from copygram.decode.rewrite import closes_file, rewrite_budget
from copygram.session import EditSession
from tests.decode.real_models import MODELS, real_backend
from tests.decode.stepwise import stepwise_text
from tests.decode.test_rewrite import rewrite

EDITS = [
    ("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
     "Fix the bug in add."),
    ('def is_even(n):\n    """True when n is even."""\n    return n % 2 == 1\n\n\nprint(is_even(4))\n',
     "Fix is_even."),
    ("total = 0\nfor i in range(10):\n    total += i\nprint(total)\n",
     "Rename total to acc."),
]

KEPT = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(6))

@pytest.fixture(scope="module", params=MODELS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    yield from real_backend(request.param, n_ctx=2048)


def plain(backend: Backend, session: EditSession, document: str, instruction: str) -> list[int]:
    prompt = backend.tokenize(session.prompt(document, instruction), special=True)
    return stepwise_text(backend, prompt,
                         max_tokens=rewrite_budget(len(backend.tokenize(document))),
                         closes=closes_file(backend.token_bytes(), document))


def assert_plain_greedy(backend: Backend, prompt: list[int], got: Sequence[int],
                        max_tokens: int, document: str | None = None) -> None:
    """``got`` is plain greedy decoding's output (ended as a rewrite of ``document`` ends, at
    its closing fence), or parts from it only at a choice plain decoding makes by a margin
    within the backend's step tolerance (a near-tie)."""
    margins: list[float] = []
    closes = None if document is None else closes_file(backend.token_bytes(), document)
    expected = stepwise_text(backend, prompt, max_tokens=max_tokens, margins=margins,
                             closes=closes)
    if list(got) == expected:
        return
    at = next((i for i, (a, b) in enumerate(zip(got, expected, strict=False)) if a != b),
              min(len(got), len(expected)))
    tolerance = backend.batch_profile.step_tolerance
    assert margins[at] <= tolerance, (
        f"differs from plain greedy decoding at token {at}, where its top-2 margin is "
        f"{margins[at]:.3f}, above the backend's step tolerance {tolerance}")


@pytest.mark.parametrize("edit", range(len(EDITS)))
def test_rewrite_mode_is_plain_greedy_decoding(backend: Backend, edit: int) -> None:
    # Plain greedy decoding's tokens, or parting from them only at a near-tie: on llama.cpp's
    # default kernels a KV cache written by batched forwards is not bit-equal to one written a
    # token at a time (Qwen 0.5B, "Fix the bug in add.": a choice by a margin of 0.03 went the
    # other way once drafts grew to 64 tokens). Exact equality on every batch shape is what the
    # batch-invariant suite asserts (tests/backends/invariant_suite.py).
    document, instruction = EDITS[edit]
    session = EditSession(backend, on_damage="keep", mode="rewrite")
    prompt = backend.tokenize(session.prompt(document, instruction), special=True)
    first, result = rewrite(session, document, instruction=instruction)
    assert_plain_greedy(backend, prompt, first, rewrite_budget(len(backend.tokenize(document))),
                        document)
    assert result.raw == backend.detokenize(first)
    # The same input gives the same forwards, so the same output, every run.
    again, _ = rewrite(session, document, instruction=instruction)  # its prompt now cached
    assert again == first
    fresh, _ = rewrite(EditSession(backend, on_damage="keep", mode="rewrite"), document,
                       instruction=instruction)
    assert fresh == first


def test_a_file_the_model_keeps_is_drafted(backend: Backend) -> None:
    instruction = "Change f5 to return x + 50."
    session = EditSession(backend, on_damage="keep", mode="rewrite")
    tokens, result = rewrite(session, KEPT, instruction=instruction)
    prompt = backend.tokenize(session.prompt(KEPT, instruction), special=True)
    assert_plain_greedy(backend, prompt, tokens, rewrite_budget(len(backend.tokenize(KEPT))),
                        KEPT)
    stats = result.stats
    assert stats.drafted_tokens > 0 and stats.forwards < len(tokens)
    assert stats.decoded_tokens + stats.drafted_tokens == len(tokens)


def test_complete_with_and_without_a_prediction(backend: Backend) -> None:
    session = EditSession(backend, on_damage="keep", mode="program")
    messages = [{"role": "user", "content": f"Repeat this code exactly:\n{EDITS[0][0]}"}]
    prompt = backend.tokenize(backend.chat_prompt(messages), special=True)
    for prediction in (None, EDITS[0][0]):
        *_, done = session.complete(messages, prediction=prediction, max_tokens=60)
        assert isinstance(done, DoneEvent)
        assert_plain_greedy(backend, prompt, done.result.token_ids, 60)
