"""The transformers backend on the default GGUF, dequantized to fp32 on CPU (~15 s to load, once
per module)."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import numpy as np
import pytest

from copygram.errors import BackendError
from tests.backends.contract import BackendContract, read_facts
from tests.backends.tolerances import assert_fp32_close

pytestmark = pytest.mark.transformers


@pytest.fixture(scope="module")
def backend() -> Iterator[object]:
    from copygram.backends.model import default_model_path
    from copygram.backends.transformers import TransformersBackend

    try:
        path = default_model_path()
    except BackendError as exc:
        pytest.skip(str(exc))
    yield TransformersBackend(path, device="cpu", n_ctx=2048)


class TestTransformersContract(BackendContract):
    examples = 4

    def assert_close(self, got: np.ndarray, want: np.ndarray) -> None:
        assert_fp32_close(got, want)


def test_splice_keeps_only_the_last_logits_row(backend: object) -> None:
    """``splice`` must not run the LM head over every position (N x vocab floats)."""
    from copygram.backends.transformers import TransformersBackend

    assert isinstance(backend, TransformersBackend)
    seen: list[tuple[int, ...]] = []
    handle = backend.model.get_output_embeddings().register_forward_hook(
        lambda _m, _i, out: seen.append(tuple(out.shape))
    )
    try:
        backend.truncate(0)
        backend.splice(read_facts(backend).random_text(0, 40))
    finally:
        handle.remove()
    assert seen == [(1, 1, backend.vocab_size)]


def test_truncate_to_zero_starts_a_fresh_cache(backend: object) -> None:
    from copygram.backends.transformers import TransformersBackend

    assert isinstance(backend, TransformersBackend)
    ids = read_facts(backend).random_text(0, 2)
    backend.truncate(0)
    first = backend.splice(ids)
    backend.truncate(0)
    assert backend.cache.get_seq_length() == 0
    np.testing.assert_array_equal(backend.splice(ids), first)


@pytest.mark.parametrize("bias", [True, False])
def test_small_batch_matmul_computes_what_linear_does(bias: bool) -> None:
    import torch

    from copygram.backends.transformers import SMALL_BATCH_ROWS, use_small_batch_matmul

    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(24, 40, bias=bias), torch.nn.ReLU(),
                                    torch.nn.Linear(40, 8, bias=bias))
    routed = copy.deepcopy(reference)
    assert use_small_batch_matmul(routed) == 2
    for rows in range(1, SMALL_BATCH_ROWS + 3):  # one row (doubled), and both sides of the limit
        x = torch.randn(1, rows, 24)
        with torch.inference_mode():
            want, got = reference(x), routed(x)
        assert got.shape == want.shape == (1, rows, 8)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
