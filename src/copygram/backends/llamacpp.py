"""The llama.cpp backend (llama-cpp-python 0.3.36): GGUF models on CPU (or a GPU build).

Loading SmolLM2-135M Q4_1: ~0.2 s, ~200 MB RSS + its KV cache (180 MiB at n_ctx 8192, its default).
The adapter owns its loading decisions: the device (all layers offloaded when the build can and
``device`` allows), the model file's check, ``n_ctx`` (capped at the trained context read from the
GGUF header before the KV cache is allocated), the threads (``_common.default_threads``).

Batches are filled through numpy views of one ``llama_batch`` allocated at load time, so building
a 512-token batch costs microseconds, not a Python loop over ctypes fields.

Batch invariance (``batch_invariant``): :mod:`~copygram.backends.llamacpp_build`.

BOS: spans are spliced without BOS. The chat prompt carries the BOS as text only when the GGUF asks
for one (``tokenizer.ggml.add_bos_token``) and the template did not write it; SmolLM2 asks for none.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from copygram.backends._common import (
    check_context,
    check_ids,
    default_threads,
    model_source,
    output_rows,
    truncate_target,
    with_bos,
)
from copygram.backends.base import (
    LLAMACPP_CPU_UNPACKED,
    LLAMACPP_GPU,
    BatchProfile,
    Logits,
)
from copygram.backends.curves import config_costs, with_costs
from copygram.backends.llamacpp_build import (
    PROBE_BATCH,
    PROBE_PREFIX,
    TILED_MATMUL_ENV,
    build_features,
    chat_formatter,
    check_invariance_build,
    cpu_profiles,
    eos_ids,
    has_llamafile,
    open_model,
    rows_equal_steps,
)
from copygram.backends.llamacpp_rpc import local_gpu
from copygram.backends.llamacpp_state import SeqState
from copygram.config import BackendConfig, BatchInvariance, Device
from copygram.errors import BackendError, missing_dependency

try:
    import llama_cpp
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_dependency("llama_cpp", "llamacpp") from exc

if TYPE_CHECKING:
    import llguidance

DEFAULT_N_BATCH = 512

class LlamaCppBackend(SeqState):
    """A llama.cpp model with one KV-cache sequence that copygram appends to and truncates.

    ``splice`` evaluates a span in batches of ``n_batch`` tokens with a logits row requested only
    for the span's last token; ``splice_all`` requests a row for every token.
    """

    name = "llamacpp"

    @classmethod
    def from_config(cls, config: BackendConfig) -> LlamaCppBackend:
        """The backend a checked :class:`~copygram.config.BackendConfig` describes (a catalog
        model fetched on first use: :func:`copygram.catalog.resolve_model`)."""
        source = model_source(config)
        return cls(source, n_ctx=config.n_ctx, n_threads=config.n_threads,
                   device=config.device, batch_invariant=config.batch_invariant,
                   costs=config_costs(config, "llamacpp", source), rpc_servers=config.rpc_servers)

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        n_batch: int = DEFAULT_N_BATCH,
        device: Device = "auto",
        batch_invariant: BatchInvariance = "auto",
        costs: tuple[tuple[int, float], ...] | None = None,
        rpc_servers: Sequence[str] = (),
    ) -> None:
        """Load ``model_path`` (a GGUF file). ``n_ctx``: default the trained context up to 32768,
        capped there (with a warning when asked for more: ``cap_context``); ``n_threads``: default
        :func:`~copygram.backends._common.default_threads`; ``device``: ``"auto"`` offloads every
        layer when this llama-cpp-python build can, ``"cuda"`` requires that, ``"cpu"`` never.

        ``batch_invariant`` (:mod:`~copygram.backends.llamacpp_build`): ``True`` loads so that
        batched rows equal one-token steps bit for bit, or fails; ``"auto"`` does so where it
        costs nothing; ``False`` never asks. Checked at load by a probe (~0.6 s for a 1.5B model
        on 2 cores); :attr:`batch_invariant` says what the loaded model gives. ``costs``: forward
        costs measured on this machine (:mod:`~copygram.backends.curves`), which
        :attr:`batch_profile` then gives in place of the built-in curve. ``rpc_servers``:
        ``copygram rpc-server``s that hold every layer (:mod:`~copygram.backends.llamacpp_rpc`)."""
        self._costs = costs
        self.rpc_servers = tuple(rpc_servers)
        gpu = local_gpu()
        if device == "cuda" and not gpu:
            raise BackendError(
                "device 'cuda' was requested but this llama-cpp-python build has no GPU offload; "
                "use device 'cpu' or 'auto', or install a CUDA build (CMAKE_ARGS=-DGGML_CUDA=on)"
            )
        path = Path(model_path)
        if not path.is_file():
            raise BackendError(f"model file {path} does not exist; pass the path of a GGUF file")
        threads = n_threads or default_threads()
        self.n_threads = threads
        offloads = self.offloads = gpu and device != "cpu"
        if batch_invariant is True:
            check_invariance_build(offloads)
        asks = batch_invariant is True or (
            batch_invariant == "auto" and not offloads and not has_llamafile())
        if asks:
            # Read by ggml at the process's first tiled-eligible matmul; a value the user set
            # stays (the load probe refuses one that breaks invariance).
            os.environ.setdefault(TILED_MATMUL_ENV, "0")

        def open_sized(repacked: bool) -> llama_cpp.Llama:
            return open_model(path, n_ctx=n_ctx, n_batch=n_batch, threads=threads,
                              offloads=offloads, repacked=repacked, rpc_servers=self.rpc_servers)

        self.model_path = path
        self._attach(open_sized(repacked=True))
        self.batch_invariant = False
        features = build_features()
        cpu_profile, invariant_profile = cpu_profiles(features)
        self._profile = with_costs(LLAMACPP_GPU if offloads else cpu_profile, self._costs)
        # What the bench records beside its figures: a forward's cost depends on the build.
        self.build = " ".join(sorted(features))
        probe_fits = self._n_ctx >= PROBE_PREFIX + PROBE_BATCH
        if batch_invariant is True and not probe_fits:
            self.close()
            raise BackendError(
                f"batch_invariant: n_ctx {self._n_ctx} is too small for the load probe "
                f"({PROBE_PREFIX + PROBE_BATCH} tokens); raise n_ctx or set batch_invariant = "
                f"\"auto\"")
        if not asks or not probe_fits:
            return
        try:
            if self._rows_equal_steps():
                self._set_invariant(invariant_profile)
                return
            if batch_invariant == "auto":
                return  # the default kernels, near-ties re-decided
            # Repacked weights run a 4-row gemm and a one-row gemv; a stock build's gemv sums in
            # another order. Without repacking every row is a plain dot product (slower).
            self.close()
            self._attach(open_sized(repacked=False))
            if not self._rows_equal_steps():
                raise BackendError(
                    f"batch_invariant: a batched forward's logits differ from one-token steps in "
                    f"this process. ggml reads {TILED_MATMUL_ENV} once per process, so load the "
                    f"batch-invariant model before any other llama.cpp model runs, or start the "
                    f"process with {TILED_MATMUL_ENV}=0; or set batch_invariant = false")
            warnings.warn(
                "batch_invariant: this llama-cpp-python build's repacked-weight kernels are not "
                "batch-invariant, so the model was loaded without them (a batched token costs up "
                "to ~2x more); `make bootstrap` builds llama-cpp-python with copygram's patch "
                "(scripts/patches), which makes them so", stacklevel=2)
            self._set_invariant(LLAMACPP_CPU_UNPACKED)
        except BaseException:
            self.close()
            raise

    def _attach(self, llm: llama_cpp.Llama) -> None:
        """Take ``llm`` as this backend's model: views of its buffers, a batch of n_batch."""
        self._llm = llm
        self.n_batch: int = llm.n_batch
        self._ctx = llm.ctx
        self._vocab = llama_cpp.llama_model_get_vocab(llm.model)
        self._n_vocab: int = llm.n_vocab()
        # llama.cpp pads n_ctx (to a multiple of 256); the Llama wrapper's buffers keep the size
        # asked.
        self._n_ctx: int = min(llm.n_ctx(), len(llm.input_ids))
        self._ids = llm.input_ids  # the wrapper's buffer of n_ctx ids holds the cached ones
        self._n = 0
        self._token_bytes: list[bytes] | None = None
        self._ll_tokenizer: llguidance.LLTokenizer | None = None

        self._batch = llama_cpp.llama_batch_init(self.n_batch, 0, 1)
        cap = self.n_batch
        self._b_token = np.ctypeslib.as_array(self._batch.token, shape=(cap,))
        self._b_pos = np.ctypeslib.as_array(self._batch.pos, shape=(cap,))
        self._b_logits = np.ctypeslib.as_array(self._batch.logits, shape=(cap,))
        np.ctypeslib.as_array(self._batch.n_seq_id, shape=(cap,))[:] = 1
        for i in range(cap):
            self._batch.seq_id[i][0] = 0
        self._eos_ids = self._find_eos_ids()

    def _set_invariant(self, profile: BatchProfile) -> None:
        self.batch_invariant = True
        self._profile = with_costs(profile, self._costs)

    def _rows_equal_steps(self) -> bool:
        return rows_equal_steps(self.tokenize, self._eval, self.truncate)

    def close(self) -> None:
        """Free the batch and the model (idempotent)."""
        if getattr(self, "_batch", None) is not None:
            llama_cpp.llama_batch_free(self._batch)
            self._batch = None
        if getattr(self, "_llm", None) is not None:
            self._llm.close()

    def __del__(self) -> None:
        # At interpreter shutdown llama_cpp may already be torn down; nothing is left to free.
        with contextlib.suppress(Exception):
            self.close()

    def describe(self) -> dict[str, object]:
        return {"name": self.name, "model": self.model_path.name,
                "device": "gpu" if self.offloads else "cpu", "n_ctx": self._n_ctx,
                "n_threads": self.n_threads, "batch_invariant": self.batch_invariant,
                "build": self.build, "rpc_servers": [*self.rpc_servers]}

    # -- properties ----------------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        return self._n_vocab

    @property
    def eos_token_ids(self) -> frozenset[int]:
        return self._eos_ids

    @property
    def eos_token_id(self) -> int:
        return int(llama_cpp.llama_vocab_eos(self._vocab))

    @property
    def context_length(self) -> int:
        return self._n_ctx

    @property
    def n_tokens(self) -> int:
        return self._n

    @property
    def batch_profile(self) -> BatchProfile:
        return self._profile

    @property
    def cached_ids(self) -> list[int]:
        """The token ids in the KV cache (a copy)."""
        return [int(i) for i in self._ids[: self._n]]

    # -- tokenizer -----------------------------------------------------------------------------

    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        """Ids of ``text``, no BOS. llama.cpp's tokenizer drops some C0 controls (e.g. U+001D)
        and mangles unassigned code points, so those do not round-trip."""
        ids: list[int] = self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=special)
        return ids

    def detokenize(self, ids: Sequence[int]) -> str:
        """Text of ``ids``: their pieces joined, control tokens dropped; invalid UTF-8 (a cut
        multi-byte character) becomes U+FFFD. Not ``llama_detokenize``: with a vocab that asks
        for space clean-up (Qwen2.5's) it rewrites the text, e.g. a 36-space continuation indent
        after a newline came back as one space, so the text was not what the model wrote."""
        if ids:
            check_ids(ids, self._n_vocab)
        pieces = self.token_bytes()
        return b"".join(pieces[i] for i in ids).decode("utf-8", errors="replace")

    def _piece(self, token_id: int, *, special: bool) -> bytes:
        buf = ctypes.create_string_buffer(256)
        n = llama_cpp.llama_token_to_piece(self._vocab, token_id, buf, 256, 0, special)
        if n < 0:  # a piece longer than the buffer: retry with the size llama.cpp asked for
            buf = ctypes.create_string_buffer(-n)
            n = llama_cpp.llama_token_to_piece(self._vocab, token_id, buf, -n, 0, special)
        return bytes(buf.raw[:n])

    def _is_control(self, token_id: int) -> bool:
        attr = int(llama_cpp.llama_vocab_get_attr(self._vocab, token_id))
        return bool(attr & llama_cpp.LLAMA_TOKEN_ATTR_CONTROL)

    def token_bytes(self) -> list[bytes]:
        """Bytes of every id, ``b""`` for control tokens (~0.1 s for 49k ids, cached)."""
        if self._token_bytes is None:
            self._token_bytes = [
                b"" if self._is_control(i) else self._piece(i, special=False)
                for i in range(self._n_vocab)
            ]
        return self._token_bytes

    def ll_tokenizer(self) -> llguidance.LLTokenizer:
        """An llguidance tokenizer over the llama.cpp vocab (~0.25 s, cached)."""
        if self._ll_tokenizer is None:
            from llguidance.llamacpp import lltokenizer_from_vocab

            with warnings.catch_warnings():
                # llguidance calls llama_token_get_attr, deprecated in this llama-cpp-python.
                warnings.simplefilter("ignore", DeprecationWarning)
                self._ll_tokenizer = lltokenizer_from_vocab(
                    self._vocab, n_vocab=self._n_vocab, eos_token=sorted(self._eos_ids)
                )
        return self._ll_tokenizer

    def _find_eos_ids(self) -> frozenset[int]:
        return eos_ids(self._vocab, self.tokenize, self._is_control)

    def chat_prompt(self, messages: Sequence[dict[str, str]]) -> str:
        """The GGUF's chat template (``tokenizer.chat_template``) rendered with jinja2, ending with
        the assistant turn opener. Tokenize the result with ``special=True``. The template is
        compiled on the first call (~20 ms), not per prompt."""
        formatter, bos = self._chat_formatter
        msgs: Any = [dict(m) for m in messages]
        prompt: str = formatter(messages=msgs).prompt
        return with_bos(prompt, bos, bool(llama_cpp.llama_vocab_get_add_bos(self._vocab)))

    @functools.cached_property
    def _chat_formatter(self) -> tuple[Jinja2ChatFormatter, str]:
        def text(token_id: int) -> str:
            return self._piece(token_id, special=True).decode("utf-8", "replace")

        return chat_formatter(self._llm.metadata.get("tokenizer.chat_template"),
                              int(llama_cpp.llama_vocab_bos(self._vocab)), self.eos_token_id,
                              text, self.model_path.name)

    # -- the cache -------------------------------------------------------------------------------

    def _eval(self, ids: Sequence[int], outputs: Sequence[int]) -> npt.NDArray[np.float32]:
        """Append ``ids`` in batches of ``n_batch``; logits after ``ids[i]`` for each ``i`` in
        ``outputs`` (ascending, unique), shape ``(len(outputs), vocab)``. Only those positions
        get logits: the LM head costs a vocab-sized matmul per row."""
        check_ids(ids, self._n_vocab)
        check_context(self._n, len(ids), self._n_ctx)
        arr = np.asarray(ids, dtype=np.int32)
        wanted = np.zeros(len(arr), dtype=np.int8)
        wanted[list(outputs)] = 1
        rows: list[npt.NDArray[np.float32]] = []
        for start in range(0, len(arr), self.n_batch):
            chunk = arr[start : start + self.n_batch]
            k = len(chunk)
            self._b_token[:k] = chunk
            self._b_pos[:k] = np.arange(self._n, self._n + k, dtype=np.int32)
            self._b_logits[:k] = wanted[start : start + k]
            self._batch.n_tokens = k
            rc = llama_cpp.llama_decode(self._ctx, self._batch)
            if rc != 0:
                # The cache may hold part of the batch: drop it so n_tokens stays truthful.
                llama_cpp.llama_memory_seq_rm(llama_cpp.llama_get_memory(self._ctx), 0, self._n, -1)
                raise BackendError(f"llama_decode failed with code {rc} on a batch of {k} tokens")
            self._ids[self._n : self._n + k] = chunk
            self._n += k
            n_out = int(wanted[start : start + k].sum())
            if n_out:  # rows come back in batch order of the flagged tokens
                ptr = llama_cpp.llama_get_logits(self._ctx)
                rows.append(np.ctypeslib.as_array(ptr, shape=(n_out, self._n_vocab)).copy())
        if not rows:
            return np.empty((0, self._n_vocab), dtype=np.float32)
        return rows[0] if len(rows) == 1 else np.concatenate(rows)

    def splice(self, ids: Sequence[int]) -> Logits:
        """Append ``ids`` (chunked by ``n_batch``); logits after the last. ~One forward."""
        logits: Logits = self._eval(ids, [len(ids) - 1] if len(ids) else [])[0]
        return logits

    def splice_all(
        self, ids: Sequence[int], *, rows: Sequence[int] | None = None
    ) -> npt.NDArray[np.float32]:
        """Append ``ids``; logits after ``ids[r]`` for each ``r`` in ``rows`` (default: all)."""
        wanted = output_rows(rows, len(ids))
        flagged = sorted(set(wanted))
        out = self._eval(ids, flagged)
        return out if wanted == flagged else out[np.searchsorted(flagged, wanted)]

    def decode(self, token_id: int) -> Logits:
        return self.splice((token_id,))

    def truncate(self, n_tokens: int) -> None:
        n = truncate_target(n_tokens, self._n)
        memory = llama_cpp.llama_get_memory(self._ctx)
        if not llama_cpp.llama_memory_seq_rm(memory, 0, n, -1):
            raise BackendError(f"llama.cpp could not drop the KV cells from position {n}")
        self._n = n
