"""What the llama.cpp build and its kernels give: the features it compiled in, its CPU cost
curve, whether batched rows can equal one-token steps, and the model load itself.

Batch invariance (``batch_invariant``, CPU only; ``"auto"`` by default): llama.cpp's batched rows
can differ from one-token steps (by up to ~0.6 in a logit) because three kernels change with the
batch shape: the tiled K-quant matmul taken from 8 rows up, llamafile's sgemm, and the repacked
Q4_K weights, whose one-row gemv summed in another order than their 4-row gemm. ``make bootstrap``
builds llama-cpp-python without llamafile and with a patch that makes the gemv sum as the gemm
does (scripts/patches); with the tiled matmul off (``GGML_CPU_TILED_MM=0``) every row is then a
one-token step's bit for bit, so drafted decoding needs no near-tie re-decision and equals plain
greedy on every run, at the default kernels' cost. A load probe checks it; where it fails,
``"auto"`` keeps the default kernels and ``True`` reloads without repacked weights (invariant,
but a batched token costs up to ~2x more: 128 known tokens of Qwen2.5-Coder-1.5B on 2 cores, 76
decode steps against 38) or fails.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from copygram.backends import llamacpp_rpc
from copygram.backends._common import (
    END_OF_TURN_TOKENS,
    TILED_MATMUL_ENV,
    cap_context,
    gguf_context_length,
)
from copygram.backends.base import (
    LLAMACPP_CPU,
    LLAMACPP_CPU_AVX512,
    LLAMACPP_CPU_AVX512_INVARIANT,
    LLAMACPP_CPU_INVARIANT,
    BatchProfile,
)
from copygram.errors import BackendError, missing_dependency

try:
    import llama_cpp
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_dependency("llama_cpp", "llamacpp") from exc

__all__ = [
    "PROBE_BATCH",
    "PROBE_PREFIX",
    "PROBE_TEXT",
    "TILED_MATMUL_ENV",
    "build_features",
    "chat_formatter",
    "check_invariance_build",
    "cpu_profiles",
    "eos_ids",
    "has_llamafile",
    "open_model",
    "parse_system_info",
    "rows_equal_steps",
]

# Tokens of the invariance probe: a prefix, then 21 tokens (every path of the repacked kernels
# and above the tiled kernel's threshold of 8 rows).
PROBE_TEXT = ("def add(x, y):\n    return x + y\n\n\ndef mul(x, y):\n    return x * y\n\n\n"
               "print(add(1, 2), mul(3, 4))\n")
PROBE_PREFIX = 3
PROBE_BATCH = 21
_model_params_lock = threading.Lock()


@contextlib.contextmanager
def _model_params(**fields: object) -> Iterator[None]:
    """Loads inside this block get llama.cpp model params with ``fields`` set: llama-cpp-python
    0.3.36's ``Llama`` has no argument for ``use_extra_bufts`` and reads the defaults from
    ``llama_cpp.llama_cpp.llama_model_default_params`` at load time."""
    module = llama_cpp.llama_cpp
    with _model_params_lock:
        original = module.llama_model_default_params

        def with_fields() -> Any:
            params = original()
            for name, value in fields.items():
                setattr(params, name, value)
            return params

        module.llama_model_default_params = with_fields
        try:
            yield
        finally:
            module.llama_model_default_params = original


def parse_system_info(info: str) -> frozenset[str]:
    """The features that ``llama_print_system_info`` reports as on: from ``"CPU : SSE3 = 1 |
    AVX512 = 0 | REPACK = 1 |"``, ``{"SSE3", "REPACK"}`` (a backend's name precedes its first)."""
    found = (part.split("=") for part in info.replace("|", "\n").splitlines())
    return frozenset(name.split(":")[-1].strip() for name, *value in found
                     if value and value[0].strip() == "1")


def build_features() -> frozenset[str]:
    """What this llama-cpp-python build compiled in (``AVX2``, ``AVX512``, ``LLAMAFILE``,
    ``REPACK``, ...). O(1)."""
    return parse_system_info(
        bytes(llama_cpp.llama_print_system_info()).decode("utf-8", "replace"))


def has_llamafile() -> bool:
    """Whether this build runs llamafile's sgemm, whose results change with the batch size."""
    return "LLAMAFILE" in build_features()


def cpu_profiles(features: frozenset[str]) -> tuple[BatchProfile, BatchProfile]:
    """The CPU cost curve of a build with ``features``, for the default kernels and the invariant
    ones: a build for an AVX-512 CPU batches ~1.4-1.7x cheaper (``LLAMACPP_CPU_AVX512``)."""
    if "AVX512" in features:
        return LLAMACPP_CPU_AVX512, LLAMACPP_CPU_AVX512_INVARIANT
    return LLAMACPP_CPU, LLAMACPP_CPU_INVARIANT


def check_invariance_build(offloads: bool) -> None:
    """Refuse ``batch_invariant`` where the build cannot give it, before the model loads (O(1))."""
    if offloads:
        raise BackendError(
            "batch_invariant needs device 'cpu': this llama-cpp-python build offloads to a GPU, "
            "whose kernels change with the batch size; set device = 'cpu' or batch_invariant = "
            "false")
    if has_llamafile():
        raise BackendError(
            "batch_invariant needs llama-cpp-python built without llamafile's sgemm, whose "
            "results change with the batch size; rebuild it with CMAKE_ARGS=\"-DGGML_LLAMAFILE=OFF\" "
            "pip install --no-cache-dir --force-reinstall "
            "llama-cpp-python==0.3.36 (make bootstrap builds it so), or set batch_invariant = "
            "false")


def open_model(path: Path, *, n_ctx: int | None, n_batch: int, threads: int, offloads: bool,
               repacked: bool, rpc_servers: Sequence[str] = ()) -> llama_cpp.Llama:
    """Load the GGUF at ``path`` with ``n_ctx`` capped at its trained context, read from the
    GGUF header before the KV cache is allocated (a huge n_ctx is capped before it costs
    memory); ``repacked``: with llama.cpp's repacked weights (its default); ``rpc_servers``:
    every layer on those servers (:mod:`~copygram.backends.llamacpp_rpc`). Seconds, plus the
    weights' transfer to RPC servers."""
    fields: dict[str, object] = {} if repacked else {"use_extra_bufts": False}
    devices = None
    if rpc_servers or llamacpp_rpc.registered():
        # The devices named, never every device the process knows (llama.cpp's default).
        devices = llamacpp_rpc.devices_for(rpc_servers, offloads=offloads)
        fields["devices"] = ctypes.cast(devices, ctypes.c_void_p).value
    offloaded = offloads or bool(rpc_servers)

    def open_llama(context: int) -> llama_cpp.Llama:
        params = _model_params(**fields) if fields else contextlib.nullcontext()
        try:
            with params:
                return llama_cpp.Llama(
                    str(path),
                    n_ctx=context,
                    n_batch=n_batch,
                    n_ubatch=n_batch,
                    n_threads=threads,
                    n_threads_batch=threads,
                    n_gpu_layers=-1 if offloaded else 0,
                    logits_all=False,
                    verbose=False,
                )
        except (ValueError, RuntimeError) as exc:
            raise BackendError(f"llama.cpp could not load {path}: {exc}") from exc

    trained = gguf_context_length(path)
    context = cap_context(n_ctx, trained, path.name)
    llm = open_llama(context)
    if trained is None:  # a header this reader did not understand: ask the loaded model
        capped = cap_context(n_ctx, int(llama_cpp.llama_model_n_ctx_train(llm.model)), path.name)
        if capped != context:
            llm.close()
            llm = open_llama(capped)
    return llm


def chat_formatter(template: str | None, bos_id: int, eos_id: int, text: Callable[[int], str],
                   model_name: str) -> tuple[Jinja2ChatFormatter, str]:
    """The GGUF's chat ``template`` compiled (~20 ms) with the model's BOS and EOS text, and the
    BOS text; a :class:`BackendError` for a model without one (a base model)."""
    if not template:
        raise BackendError(f"{model_name} has no chat template in its GGUF metadata; use an "
                           "instruction-tuned (chat) model")
    bos = text(bos_id) if bos_id >= 0 else ""
    return Jinja2ChatFormatter(template=template, eos_token=text(eos_id), bos_token=bos,
                               add_generation_prompt=True), bos


def rows_equal_steps(tokenize: Callable[[str], list[int]],
                     forward: Callable[[Sequence[int], Sequence[int]], npt.NDArray[np.float32]],
                     truncate: Callable[[int], None]) -> bool:
    """Whether 21 tokens in one forward give, bit for bit, the logits of one step and then a
    forward of 20 (``forward(ids, rows)`` appends ``ids`` and returns those rows' logits); leaves
    the cache empty. 21 rows take every path of the repacked kernels (16-row gemm, 4-row gemm,
    one-row gemv), and each of those positions takes another in the second split. Cost: two
    forwards of ~20 tokens (~15 decode steps)."""
    ids = tokenize(PROBE_TEXT)[: PROBE_PREFIX + PROBE_BATCH]
    prefix, batch = ids[:PROBE_PREFIX], ids[PROBE_PREFIX:]
    forward(prefix, [])
    whole = forward(batch, range(len(batch)))
    truncate(len(prefix))
    split = np.concatenate([forward(batch[:1], (0,)), forward(batch[1:], range(len(batch) - 1))])
    truncate(0)
    return bool(np.array_equal(whole, split))


def eos_ids(vocab: Any, tokenize: Callable[..., list[int]],
            is_control: Callable[[int], bool]) -> frozenset[int]:
    """Every id that ends generation in ``vocab``: EOS, EOT, and the chat templates' end-of-turn
    markers that are one control token here."""
    ids = {int(llama_cpp.llama_vocab_eos(vocab))}
    eot = int(llama_cpp.llama_vocab_eot(vocab))
    if eot >= 0:
        ids.add(eot)
    for text in END_OF_TURN_TOKENS:
        found = tokenize(text, special=True)
        if len(found) == 1 and is_control(found[0]):
            ids.add(found[0])
    ids.discard(-1)
    return frozenset(ids)
