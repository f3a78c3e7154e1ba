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
    from copygram.backends.transformers import TransformersBackend
    from copygram.testing import default_model_path

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


def test_n_ctx_is_a_limit_the_cache_grows(backend: object) -> None:
    """The cache holds the tokens spliced, not n_ctx of them: its default, the trained context
    (cap_context), costs no memory until used."""
    from copygram.backends.transformers import TransformersBackend

    assert isinstance(backend, TransformersBackend)
    backend.truncate(0)
    backend.splice(read_facts(backend).random_text(0, 40))
    keys = backend.cache.layers[0].keys
    assert backend.context_length == 2048
    assert keys.shape[-2] == backend.cache.get_seq_length() == 40


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
@pytest.mark.parametrize("min_rows", [1, 5])
def test_small_batch_matmul_computes_what_linear_does(bias: bool, min_rows: int) -> None:
    import torch

    from copygram.backends.torch_kernels import SMALL_BATCH_ROWS, use_small_batch_matmul

    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(24, 40, bias=bias), torch.nn.ReLU(),
                                    torch.nn.Linear(40, 8, bias=bias))
    routed = copy.deepcopy(reference)
    assert use_small_batch_matmul(routed, min_rows=min_rows) == 2
    for rows in range(1, SMALL_BATCH_ROWS + 3):  # one row (doubled), and both sides of the limit
        x = torch.randn(1, rows, 24)
        with torch.inference_mode():
            want, got = reference(x), routed(x)
        assert got.shape == want.shape == (1, rows, 8)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        if not min_rows <= rows <= SMALL_BATCH_ROWS:  # left to linear: the same kernel
            assert torch.equal(got, want)
    with pytest.raises(ValueError, match="min_rows"):
        use_small_batch_matmul(routed, min_rows=SMALL_BATCH_ROWS + 1)


def test_the_cpu_picks_the_routing_and_its_cost_curve(backend: object) -> None:
    from copygram.backends.base import TRANSFORMERS_CPU, TRANSFORMERS_CPU_FEW_ROWS_LINEAR
    from copygram.backends.torch_kernels import cpu_routing
    from copygram.backends.transformers import TransformersBackend
    from copygram.host import cpu_info

    assert cpu_routing("GenuineIntel") == (5, TRANSFORMERS_CPU_FEW_ROWS_LINEAR)
    assert cpu_routing("AuthenticAMD") == (1, TRANSFORMERS_CPU)
    assert cpu_routing("") == (1, TRANSFORMERS_CPU)
    assert isinstance(backend, TransformersBackend)
    # The loaded backend prices forwards on the curve of the routing its CPU got.
    assert backend.batch_profile is cpu_routing(cpu_info().vendor)[1]
    assert cpu_info() == cpu_info()


def test_a_model_that_ignores_the_cache_is_an_error_not_a_wrong_result(backend: object) -> None:
    """A transformers release that swallows the ``cache`` keyword (5.17 did) would start every
    forward from an empty cache: the backend checks what the cache holds after each forward."""
    from copygram.backends.transformers import TransformersBackend

    assert isinstance(backend, TransformersBackend)
    model = backend.model

    class Forgetful:
        """The model, as such a release runs it: the cache it was given left untouched."""

        config = model.config

        def __call__(self, **kwargs: object) -> object:
            kwargs.pop("cache")
            return model(**kwargs)

    ids = read_facts(backend).random_text(0, 6)
    backend.truncate(0)
    backend.model = Forgetful()
    try:
        with pytest.raises(BackendError, match="did not keep the KV cache"):
            backend.splice(ids)
        assert backend.n_tokens == 0 and backend.cached_ids == []
    finally:
        backend.model = model
    backend.splice(ids)  # the real model keeps it
    assert backend.cache.get_seq_length() == 6


def test_a_model_that_keeps_the_cache_but_does_not_read_it_is_refused(backend: object) -> None:
    """A forward that fills the cache but computes without it (the device check saw logits
    after a prefix equal to those without it, with transformers 5.17) passes the cache-length
    check: the load-time check that a prefix changes what follows refuses it."""
    from transformers import DynamicCache

    from copygram.backends.transformers import TransformersBackend

    assert isinstance(backend, TransformersBackend)
    model = backend.model

    class Blind:
        """The model, reading a fresh cache each forward while filling the one it is given."""

        config = model.config

        def __call__(self, **kwargs: object) -> object:
            model(**kwargs)  # fills the backend's cache
            kwargs["cache"] = DynamicCache(config=model.config)
            return model(**kwargs)

    backend.truncate(0)
    backend._check_prefix_counts()  # the real model passes
    backend.model = Blind()
    try:
        with pytest.raises(BackendError, match="do not depend on the tokens before it"):
            backend._check_prefix_counts()
    finally:
        backend.model = model
        backend.truncate(0)


def test_the_cache_goes_under_the_keyword_the_models_forward_names(backend: object) -> None:
    """transformers 5.17's models take the KV cache as ``past_key_values``, 5.25's as ``cache``;
    either forward takes ``**kwargs``, so the other keyword would be swallowed (an empty cache,
    wrong logits): the backend passes the one the model's forward names."""
    import torch

    from copygram.backends.transformers import TransformersBackend, cache_keyword

    assert isinstance(backend, TransformersBackend)
    model = backend.model

    class Older(torch.nn.Module):
        """The model with 5.17's names for its forward's arguments."""

        config = model.config

        def forward(self, input_ids: torch.Tensor, past_key_values: object = None,
                    use_cache: bool | None = None, logits_to_keep: object = 0,
                    **kwargs: object) -> object:
            return model(input_ids=input_ids, cache=past_key_values, use_cache=use_cache,
                         logits_to_keep=logits_to_keep)

    assert cache_keyword(type(model)) == "cache"  # transformers 5.25, as pyproject pins it
    assert cache_keyword(Older) == "past_key_values"
    ids = read_facts(backend).random_text(1, 12)
    backend.truncate(0)
    want = [backend.splice(ids[:6]), backend.splice(ids[6:])]
    backend.truncate(0)
    backend.model = Older()
    try:
        got = [backend.splice(ids[:6]), backend.splice(ids[6:])]
        assert backend.cache.get_seq_length() == 12
    finally:
        backend.model = model
    for g, w in zip(got, want, strict=True):
        assert_fp32_close(g, w)
