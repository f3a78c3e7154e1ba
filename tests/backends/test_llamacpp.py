"""The llama.cpp backend against the default model (SmolLM2-135M-Instruct Q4_1, ~0.2 s to load)
and, when it is on this machine, a second model of another family (Qwen2.5-Coder-0.5B-Instruct
Q4_K_M, ~0.6 s to load, ~20 s of tests): the contract holds for any model."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from copygram.catalog import get_entry, model_status
from tests.backends.contract import BackendContract, read_facts
from tests.backends.tolerances import assert_llamacpp_close

pytestmark = pytest.mark.llamacpp

MODELS = ["smollm2-135m", "qwen2.5-coder-0.5b"]
"""Catalog names. Only models already on disk run: a test never downloads one."""


@pytest.fixture(scope="module", params=MODELS)
def backend(request: pytest.FixtureRequest) -> Iterator[object]:
    from copygram.backends.llamacpp import LlamaCppBackend

    status = model_status(get_entry(request.param))
    if not status.present or status.path is None:
        pytest.skip(f"{request.param} is not on this machine (copygram models fetch "
                    f"{request.param}){': ' + status.problem if status.problem else ''}")
    b = LlamaCppBackend(status.path, n_ctx=2048)
    yield b
    b.close()


class TestLlamaCppContract(BackendContract):
    examples = 8

    def assert_close(self, got: np.ndarray, want: np.ndarray) -> None:
        assert_llamacpp_close(got, want)


def test_splice_longer_than_the_batch_limit_equals_one_prefill(backend: object) -> None:
    from copygram.backends.llamacpp import LlamaCppBackend

    assert isinstance(backend, LlamaCppBackend)
    small = LlamaCppBackend(backend.model_path, n_ctx=512, n_batch=32)
    try:
        ids = read_facts(backend).random_text(4, 70)  # 32 + 32 + 6
        chunked = small.splice(ids)
        chunked_rows = small.splice_all(ids)
        assert small.n_tokens == 140
        backend.truncate(0)
        whole = backend.splice(ids)
        whole_rows = backend.splice_all(ids)
        assert_llamacpp_close(chunked, whole)
        assert chunked_rows.shape == whole_rows.shape == (70, backend.vocab_size)
        for got, want in zip(chunked_rows, whole_rows, strict=True):
            assert_llamacpp_close(got, want)
    finally:
        small.close()


def test_a_prompt_read_in_its_batches_computes_what_one_splice_computes(backend: object) -> None:
    from copygram.backends.base import Batched
    from copygram.backends.llamacpp import LlamaCppBackend
    from copygram.decode.forwards import prefill, prefill_steps

    assert isinstance(backend, LlamaCppBackend)
    small = LlamaCppBackend(backend.model_path, n_ctx=512, n_batch=32)
    try:
        assert isinstance(small, Batched)
        ids = read_facts(backend).random_text(5, 100)
        done = [event.done for event in prefill_steps(small, ids)]
        assert done == [0, 32, 64, 96, 100] and small.cached_ids == ids
        small.truncate(0)
        whole = small.splice(ids)
        small.truncate(0)
        stepped, spliced = prefill(small, ids)
        # The same batches (the backend's own n_batch), so the same numbers, bit for bit.
        assert spliced == 100 and np.array_equal(stepped, whole)
    finally:
        small.close()


def test_a_restored_snapshot_computes_what_follows_as_the_prefix_spliced_again(
        backend: object) -> None:
    from copygram.backends.llamacpp import LlamaCppBackend

    assert isinstance(backend, LlamaCppBackend)
    prompt = backend.tokenize("def median(values):\n    ordered = sorted(values)\n" * 4)
    backend.truncate(0)
    backend.splice(prompt)
    snapshot = backend.snapshot()
    assert snapshot.ids == tuple(prompt) and snapshot.nbytes > 0
    after = backend.decode(prompt[0])
    backend.truncate(0)
    backend.splice(backend.tokenize("something else entirely"))
    backend.restore(snapshot)
    assert backend.cached_ids == prompt and backend.n_tokens == len(prompt)
    assert_llamacpp_close(backend.decode(prompt[0]), after)
    backend.restore(backend.snapshot())  # a snapshot of the cache as it is changes nothing
    assert backend.cached_ids == [*prompt, prompt[0]]
    backend.truncate(0)
