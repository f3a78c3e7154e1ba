"""Small pieces shared by the backend adapters (no inference stack imported here): the model
setting resolved through the catalog, the context cap, the default thread count, a GGUF header
read, and the checks every adapter makes on spans and truncations."""

from __future__ import annotations

import logging
import math
import os
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from copygram.catalog import resolve_model
from copygram.config import BackendConfig
from copygram.errors import BackendError

logger = logging.getLogger("copygram.backends")
"""Notes about the backend that are not errors (n_ctx capped at the trained context). Python's
last-resort handler prints them on stderr when the application configures no logging."""

MAX_DEFAULT_N_CTX = 32768
"""Most context allocated when the config gives no ``n_ctx``: the model's trained context up to
this. 32768 is Qwen2.5-Coder's trained context, and a program-mode edit needs the prompt plus
the document's tokens again: 32768 holds a document of ~16,300 tokens (1,354 lines of
copygram's own source at 12 tokens a line, ~2,000 at 8). A larger default would cost memory
that no edit uses: llama.cpp allocates and clears the KV cache for the whole context at load
(f16, 28 KiB a token for Qwen2.5-Coder-1.5B: +786 MiB RSS and ~2 s more load at 32768 than at
4096 on a 2-vCPU VM; Llama-3.1-8B, trained on 131072, would take 16 GiB there). A decode step
reads only the cells in use, so a short edit costs the same at any n_ctx (docs/config.md). An
explicit ``n_ctx`` may go up to the trained context."""

FALLBACK_N_CTX = 4096
"""The default context where the trained context is unknown: a Transformers model whose config
has no ``max_position_embeddings`` (llama.cpp is asked when a GGUF header gives none)."""


def model_source(config: BackendConfig) -> str | Path:
    """What the adapter loads: a catalog name or alias becomes its GGUF path
    (:func:`copygram.catalog.resolve_model`: a stat when present, a verified download on first
    use); a path is returned with ``~`` expanded (the adapter checks that it exists); anything
    else (a Hugging Face hub name, which config.py admits for Transformers only) as given."""
    if config.is_catalog_model:
        return resolve_model(config.model)
    path = Path(config.model).expanduser()
    if config.model.lower().endswith(".gguf") or path.exists():
        return path
    return config.model


def cap_context(requested: int | None, trained: int | None, model: str) -> int:
    """The context to allocate: ``requested``, but never more than the ``trained`` context of the
    model (unknown: ``None``). A request above it is capped with a warning on :data:`logger`:
    positions past the training length give garbage. No request: the trained context up to
    :data:`MAX_DEFAULT_N_CTX` (a file of real size fits with no config), or
    :data:`FALLBACK_N_CTX` where the trained context is unknown."""
    if trained is None or trained <= 0:
        return requested or FALLBACK_N_CTX
    if requested is None:
        return min(trained, MAX_DEFAULT_N_CTX)
    if requested > trained:
        logger.warning(
            "n_ctx = %d is more than %s was trained on; using its trained context, n_ctx = %d",
            requested, model, trained,
        )
        return trained
    return requested


def _physical_cores(cpus: set[int]) -> int:
    """Distinct (package, core) pairs among ``cpus`` (hyper-threads of one core count once);
    ``len(cpus)`` where the topology is not readable (not Linux)."""
    cores = set()
    for cpu in cpus:
        topology = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            package = (topology / "physical_package_id").read_text().strip()
            core = (topology / "core_id").read_text().strip()
        except OSError:
            return len(cpus)
        cores.add((package, core))
    return len(cores) or len(cpus)


def _cgroup_cpu_limit() -> float | None:
    """The CPUs a cgroup v2 quota allows this process (``cpu.max``), or None for no quota."""
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        return None


# ggml reads this once per process, at the first matmul that could take the tiled kernel
# (copygram.backends.llamacpp_build: batch invariance).
TILED_MATMUL_ENV = "GGML_CPU_TILED_MM"


def usable_cores() -> int:
    """The physical cores this process may use: its CPU affinity, hyper-threads of one core
    counted once, capped by a cgroup quota. Deterministic; reads /sys once per call."""
    try:
        cpus = os.sched_getaffinity(0)
    except (AttributeError, OSError):  # not Linux
        cpus = set(range(os.cpu_count() or 1))
    cores = _physical_cores(cpus)
    limit = _cgroup_cpu_limit()
    if limit is not None:
        cores = min(cores, max(1, math.ceil(limit)))
    return cores


def default_threads() -> int:
    """The default ``n_threads`` for llama.cpp: :func:`usable_cores` minus one, at least one.

    Why not every CPU: llama.cpp's threads spin-wait for each other at every layer, so one thread
    that has to wait for a core stalls them all. On 2 cores beside one busy process, 64 decode
    steps of SmolLM2-135M took 1.3-7.4 s with 1 thread and 3.3 to over 90 s with 2; in the
    quietest runs both took about 1.0 s (docs/config.md). Deterministic (no load average): the
    thread count is the same every run."""
    return max(1, usable_cores() - 1)


_GGUF_SCALARS = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_GGUF_STRING, _GGUF_ARRAY = 8, 9


def _gguf_skip(f: BinaryIO, kind: int) -> None:
    if kind in _GGUF_SCALARS:
        f.seek(_GGUF_SCALARS[kind], os.SEEK_CUR)
    elif kind == _GGUF_STRING:
        (n,) = struct.unpack("<Q", f.read(8))
        f.seek(n, os.SEEK_CUR)
    elif kind == _GGUF_ARRAY:
        item, count = struct.unpack("<IQ", f.read(12))
        if item in _GGUF_SCALARS:
            f.seek(_GGUF_SCALARS[item] * count, os.SEEK_CUR)
        else:
            for _ in range(count):
                _gguf_skip(f, item)
    else:
        raise ValueError(f"unknown GGUF value type {kind}")


def gguf_context_length(path: Path) -> int | None:
    """``{architecture}.context_length`` from a GGUF file's header (the model's trained context),
    or None if the file is not a readable GGUF v2/v3. Reads only the metadata, which converters
    write before the tokenizer's arrays: ~0.1 ms, no model loaded."""
    wanted: str | None = None
    try:
        with path.open("rb") as f:
            magic, version = struct.unpack("<4sI", f.read(8))
            if magic != b"GGUF" or version < 2:
                return None
            _, n_kv = struct.unpack("<QQ", f.read(16))
            for _ in range(n_kv):
                (n,) = struct.unpack("<Q", f.read(8))
                key = f.read(n).decode("utf-8", errors="replace")
                (kind,) = struct.unpack("<I", f.read(4))
                if key == "general.architecture" and kind == _GGUF_STRING:
                    (n,) = struct.unpack("<Q", f.read(8))
                    wanted = f.read(n).decode("utf-8", errors="replace") + ".context_length"
                elif key == wanted and kind in (4, 10):  # u32 or u64
                    value: int = struct.unpack("<I" if kind == 4 else "<Q", f.read(
                        _GGUF_SCALARS[kind]))[0]
                    return value
                else:
                    _gguf_skip(f, kind)
    except (OSError, struct.error, ValueError):
        return None
    return None

END_OF_TURN_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<end_of_turn>", "<|end|>")
"""Special-token texts that end an assistant turn in common chat templates; each one the vocabulary
has as a single special token joins ``eos_token_ids``."""


def check_context(n_cached: int, n_new: int, n_ctx: int) -> None:
    """Raise :class:`BackendError` when appending ``n_new`` tokens would overflow the context."""
    if n_new < 0 or n_cached + n_new > n_ctx:
        raise BackendError(
            f"appending {n_new} tokens to {n_cached} cached ones exceeds the context of {n_ctx} "
            "tokens; raise n_ctx in the backend config or edit a shorter document"
        )


def check_ids(ids: Sequence[int], vocab_size: int) -> None:
    """Raise :class:`BackendError` on an empty span or an id outside the vocabulary."""
    if len(ids) == 0:
        raise BackendError("cannot splice an empty token sequence; pass at least one token id")
    bad = [i for i in ids if not 0 <= i < vocab_size]
    if bad:
        raise BackendError(
            f"token id {bad[0]} is outside the vocabulary (0..{vocab_size - 1}); "
            "tokenize with this backend's tokenizer"
        )


def truncate_target(n_tokens: int, n_cached: int) -> int:
    """Validate a truncate request; raise :class:`BackendError` unless 0 <= n <= n_cached."""
    if not 0 <= n_tokens <= n_cached:
        raise BackendError(
            f"cannot truncate the cache to {n_tokens} tokens: it holds {n_cached}; "
            "pass a value between 0 and n_tokens"
        )
    return n_tokens


def with_bos(prompt: str, bos_text: str | None, add_bos: bool) -> str:
    """``prompt`` with the BOS text in front when the model wants a BOS and the template left it out.

    Backends never add BOS while tokenizing (spliced spans must not get one); the chat prompt is the
    one place a sequence starts, so it carries the BOS as special-token text instead.
    """
    if add_bos and bos_text and not prompt.startswith(bos_text):
        return bos_text + prompt
    return prompt


def output_rows(rows: Sequence[int] | None, n_ids: int) -> list[int]:
    """The positions ``splice_all`` must return logits for (default: all); each in ``[0, n_ids)``."""
    if rows is None:
        return list(range(n_ids))
    out = [int(r) for r in rows]
    bad = [r for r in out if not 0 <= r < n_ids]
    if bad:
        raise BackendError(
            f"splice_all row {bad[0]} is outside the span of {n_ids} tokens; "
            "rows index the ids passed to splice_all"
        )
    return out
