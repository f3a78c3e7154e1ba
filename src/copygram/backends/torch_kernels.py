"""Cheaper short forwards for PyTorch models on a CPU in float32 (the transformers backend's):
linear layers that compute a few tokens as ``W @ x.T`` where that beats ``linear`` on this CPU
(:func:`use_small_batch_matmul`, :func:`cpu_routing`), and SDPA that shares key/value heads in
a masked forward of several tokens instead of copying them (:func:`use_gqa_sdpa`)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from copygram.backends.base import TRANSFORMERS_CPU, TRANSFORMERS_CPU_FEW_ROWS_LINEAR, BatchProfile
from copygram.errors import missing_dependency

try:
    import torch
    from transformers import AttentionInterface
    from transformers.integrations.sdpa_attention import (
        sdpa_attention_forward as _hf_sdpa_attention,
    )
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_dependency("transformers", "transformers") from exc

__all__ = ["SMALL_BATCH_MIN_ROWS", "SMALL_BATCH_ROWS", "cpu_routing", "use_gqa_sdpa",
           "use_small_batch_matmul"]


SMALL_BATCH_ROWS = 16
# The fewest rows a linear layer computes as W @ x.T, by CPU vendor (any other: 1). Why it
# depends on the vendor: the x86 wheels' BLAS (MKL) has fast few-row fp32 kernels on Intel and
# slow ones on AMD. Measured on 2 vCPUs, SmolLM2-135M at a 700-token context, torch 2.13: on an
# Intel Xeon (AVX-512) `linear` took a decode step in 61 ms against W @ x.T's 96 ms, and 4 tokens
# in 88 ms against 98 ms, while from 8 tokens W @ x.T was cheaper (16 tokens: 117 ms against
# 136 ms); on an AMD EPYC W @ x.T took a decode step from ~45 ms to ~25 ms.
SMALL_BATCH_MIN_ROWS: Mapping[str, int] = {"GenuineIntel": 5}


def cpu_routing(vendor: str) -> tuple[int, BatchProfile]:
    """The fewest rows :func:`use_small_batch_matmul` routes on a CPU of ``vendor``, and the
    fp32 cost curve of a forward with that routing."""
    min_rows = SMALL_BATCH_MIN_ROWS.get(vendor, 1)
    return min_rows, (TRANSFORMERS_CPU if min_rows == 1 else TRANSFORMERS_CPU_FEW_ROWS_LINEAR)


def use_small_batch_matmul(model: torch.nn.Module, max_rows: int = SMALL_BATCH_ROWS,
                           min_rows: int = 1) -> int:
    """Route every linear layer of ``model`` through ``weight @ x.T`` for inputs of
    ``min_rows`` to ``max_rows`` rows (tokens), one row computed as two; returns how many layers
    were routed.

    Why: for so few rows PyTorch's CPU ``linear`` (an fp32 GEMV/GEMM with the activations on the
    left) can pick slow kernels: on an AMD EPYC, SmolLM2-135M's LM head took 7.5 ms for one row
    and 18 ms for two, and a decode step ~45 ms at a 600-token context. With the weight on the
    left (and a single row doubled, since the one-column product is the slow GEMV again) a
    decode step took ~25 ms and a forward of 2-4 tokens about the same (2 CPU cores, torch
    2.13). Which rows gain depends on the CPU (:data:`SMALL_BATCH_MIN_ROWS`); other inputs keep
    ``linear``. Results differ only in summation order (~1e-5 in the logits)."""
    if not 1 <= min_rows <= max_rows:
        raise ValueError(f"need 1 <= min_rows <= max_rows, got {min_rows}, {max_rows}")
    routed = 0
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            module.forward = functools.partial(_small_batch_linear, module, min_rows, max_rows)  # type: ignore[method-assign]
            routed += 1
    return routed


def _small_batch_linear(layer: torch.nn.Linear, min_rows: int, max_rows: int,
                        x: torch.Tensor) -> torch.Tensor:
    rows = x.numel() // x.shape[-1]
    if not min_rows <= rows <= max_rows:
        return torch.nn.functional.linear(x, layer.weight, layer.bias)
    flat = x.reshape(rows, x.shape[-1])
    if rows == 1:
        flat = torch.cat([flat, flat])
    # Contiguous again: attention reads these rows as heads, and SDPA's fused CPU kernel wants
    # a unit stride in the head dimension (a transposed view sends it to the slow math path).
    out = (layer.weight @ flat.T)[:, :rows].T.contiguous()
    if layer.bias is not None:
        out = out + layer.bias
    return out.reshape(*x.shape[:-1], out.shape[-1])


GQA_SDPA = "copygram_gqa_sdpa"


def _gqa_sdpa_attention(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor,
                        value: torch.Tensor, attention_mask: torch.Tensor | None,
                        **kwargs: Any) -> tuple[torch.Tensor, None]:
    """transformers' ``sdpa`` attention, except that a masked forward of several tokens lets
    SDPA share the key/value heads (``enable_gqa``) instead of copying them per query head."""
    groups = int(getattr(module, "num_key_value_groups", 1))
    extras = ("position_bias", "softcap", "s_aux")  # terms plain SDPA cannot apply
    if (attention_mask is None or query.shape[2] == 1 or groups == 1
            or any(kwargs.get(name) is not None for name in extras)):
        return _hf_sdpa_attention(module, query, key, value, attention_mask, **kwargs)
    out = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=attention_mask, dropout_p=float(kwargs.get("dropout", 0.0)),
        scale=kwargs.get("scaling"), enable_gqa=True,
    )
    return out.transpose(1, 2).contiguous(), None


def use_gqa_sdpa(model: Any) -> bool:
    """Switch a model on transformers' ``sdpa`` attention to :func:`_gqa_sdpa_attention`.

    Why: for a masked forward (any forward of 2+ tokens after a cached prefix) transformers
    copies each key/value head once per query head it serves (``repeat_kv``): at a 1,500-token
    context that copy made a 2-token forward of SmolLM2-135M (3 key/value heads for 9 query
    heads) cost ~10 ms more than a decode step on 2 CPU cores. Returns whether it switched."""
    if getattr(model.config, "_attn_implementation", None) != "sdpa":
        return False
    AttentionInterface.register(GQA_SDPA, _gqa_sdpa_attention)
    # Without a mask function of its own, transformers treats the name as an external kernel
    # that needs no mask; this one takes the masks sdpa takes.
    AttentionMaskInterface.register(GQA_SDPA, sdpa_mask)
    model.set_attn_implementation(GQA_SDPA)
    return True
