"""How close batched and stepwise logits must be, per stack, and why."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def _softmax(x: npt.NDArray[np.floating]) -> npt.NDArray[np.float64]:
    e = np.exp(x - x.max(), dtype=np.float64)
    result: npt.NDArray[np.float64] = e / e.sum()
    return result


def assert_logits_close(got: np.ndarray, want: np.ndarray, *, atol: float, tv: float) -> None:
    """``got`` within ``atol`` of ``want`` everywhere, softmax total variation within ``tv``, and
    the same argmax unless ``want``'s top two are closer than the observed error (a genuine tie)."""
    assert got.shape == want.shape
    diff = float(np.abs(got - want).max())
    assert diff <= atol, f"max |logit diff| {diff:.3g} > {atol}"
    distance = 0.5 * float(np.abs(_softmax(got) - _softmax(want)).sum())
    assert distance <= tv, f"softmax total variation {distance:.3g} > {tv}"
    top2 = np.sort(want)[-2:]
    if top2[1] - top2[0] > 2 * diff:
        assert int(got.argmax()) == int(want.argmax())


def assert_llamacpp_close(got: np.ndarray, want: np.ndarray) -> None:
    """llama.cpp runs a batch and a single token through different quantised matmul kernels, so
    batched and stepwise logits differ. Measured over 869 rows (60 random spans after random
    prefixes, SmolLM2 Q4_1): max |logit diff| median 0.47, p99 0.97, max 1.45; softmax total
    variation median 0.03, p99 0.065, max 0.10. Bounds 2.0 / 0.15 sit above that. They catch gross
    cache bugs (a wrong position or a lost recent token moves logits by several units) but not a
    subtle one; the exact checks (``assert_same``: equal batch shapes on both sides) cover those."""
    assert_logits_close(got, want, atol=2.0, tv=0.15)


def assert_fp32_close(got: np.ndarray, want: np.ndarray) -> None:
    """fp32 torch: batched and stepwise differ only by reduction order in the GEMMs (measured
    <= 6e-5 on logits of magnitude ~25); 1e-3 leaves room for other thread counts and BLAS."""
    assert_logits_close(got, want, atol=1e-3, tv=1e-4)
