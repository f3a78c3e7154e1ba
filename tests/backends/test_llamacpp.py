"""The llama.cpp backend against the default model (SmolLM2-135M-Instruct Q4_1, ~0.3 s to load)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from copygram.errors import BackendError
from tests.backends.contract import FIRST_TEXT_ID, BackendContract
from tests.backends.tolerances import assert_llamacpp_close

pytestmark = pytest.mark.llamacpp


def _model_path() -> object:
    from copygram.backends.model import default_model_path

    try:
        return default_model_path()
    except BackendError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def backend() -> Iterator[object]:
    from copygram.backends.llamacpp import LlamaCppBackend

    b = LlamaCppBackend(_model_path(), n_ctx=2048)  # type: ignore[arg-type]
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
        rng = np.random.default_rng(4)
        ids = rng.integers(FIRST_TEXT_ID, small.vocab_size, 70).tolist()  # 32 + 32 + 6
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


def test_wrapped_llama_stays_in_step(backend: object) -> None:
    """Benchmarks call ``llm.eval`` on the wrapped Llama; it must continue where copygram is."""
    from copygram.backends.llamacpp import LlamaCppBackend

    assert isinstance(backend, LlamaCppBackend)
    backend.truncate(0)
    backend.splice([FIRST_TEXT_ID] * 10)
    backend.truncate(4)
    assert backend.llm.n_tokens == 4
    backend.llm.eval([FIRST_TEXT_ID + 1])
    assert backend.llm.n_tokens == 5
