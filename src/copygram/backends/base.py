"""The backend protocol: what copygram needs from an inference stack."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import llguidance

Logits = npt.NDArray[np.float32]
"""Next-token logits over the vocabulary, on the host: shape ``(vocab_size,)``."""


@dataclass(frozen=True)
class BatchProfile:
    """How a stack's batched forwards behave, fixed per backend and device (measured once with
    ``copygram bench kernel`` and stored here, never learnt from a run's own timings: a decision
    that changes batch shapes must depend only on the tokens, or greedy output varies run to run).

    ``costs``: ``(n_tokens, cost)`` points, the cost of one forward that appends ``n_tokens`` in
    units of one decode step, sizes strictly increasing from ``(1, 1.0)``; :meth:`cost` is
    piecewise linear between them and extrapolates the last segment.

    ``step_tolerance``: how far a batched forward's top-2 logit margin may differ from a one-token
    step's at the same position. A greedy choice from a batched row whose margin is within it is
    re-decided with a one-token step (0 disables that: the stack's rows are exact).

    ``context``: how the costs change with the context the forward attends to, ``(base, kv,
    attention)``, or ``None`` where that was not measured (the costs then hold at any context).
    ``costs`` were measured after ``base`` tokens; each token of context past it adds ``kv``
    (reading its keys and values, once per forward) plus ``attention`` per appended token
    (attending to it), both in decode steps at ``base``. A decode step pays both, so at a long
    context it costs more too, and a batched token costs more decode steps than at ``base``:
    :meth:`at_context`."""

    costs: tuple[tuple[int, float], ...]
    step_tolerance: float
    context: tuple[int, float, float] | None = None

    def __post_init__(self) -> None:
        if not self.costs or self.costs[0] != (1, 1.0):
            raise ValueError("BatchProfile.costs must start at (1, 1.0): a decode step")
        sizes = [n for n, _ in self.costs]
        values = [c for _, c in self.costs]
        if len(self.costs) < 2 or sizes != sorted(set(sizes)):
            raise ValueError("BatchProfile.costs needs two or more points, sizes increasing")
        if any(not math.isfinite(c) or c <= 0 for c in values) or values != sorted(values):
            raise ValueError("BatchProfile.costs must be finite, positive and non-decreasing")
        if not math.isfinite(self.step_tolerance) or self.step_tolerance < 0:
            raise ValueError("BatchProfile.step_tolerance must be finite and >= 0")
        if self.context is not None:
            base, kv, attention = self.context
            if base < 0 or not all(math.isfinite(v) and v >= 0 for v in (kv, attention)):
                raise ValueError("BatchProfile.context needs base >= 0 and finite kv and "
                                 "attention >= 0")

    def cost(self, n_tokens: int) -> float:
        """Modelled cost of a forward appending ``n_tokens``, in decode steps (O(points))."""
        points = self.costs
        for (n0, c0), (n1, c1) in itertools.pairwise(points):
            if n_tokens <= n1:
                return c0 + (c1 - c0) * (max(n_tokens, n0) - n0) / (n1 - n0)
        (n0, c0), (n1, c1) = points[-2:]
        return c1 + (c1 - c0) / (n1 - n0) * (n_tokens - n1)

    def at_context(self, tokens: int) -> BatchProfile:
        """This profile as forwards cost after ``tokens`` of context (:attr:`context`; itself
        where that is ``None`` or ``tokens`` is at most its base): a forward of ``n`` costs
        ``(cost(n) + extra * (kv + n * attention)) / (1 + extra * (kv + attention))`` decode
        steps of that context, ``extra`` the tokens past the base. O(points)."""
        if self.context is None or tokens <= self.context[0]:
            return self
        base, kv, attention = self.context
        extra = tokens - base
        step = 1.0 + extra * (kv + attention)
        costs = ((1, 1.0), *((n, (c + extra * (kv + n * attention)) / step)
                             for n, c in self.costs[1:]))
        return dataclasses.replace(self, costs=costs)


# Measured on a 2-core x86 CPU (`copygram bench kernel`, docs/results.md): a forward of N known tokens on
# llama.cpp costs ~N/1.4 .. N/2.8 decode steps at N = 8..128 (SmolLM2 Q4_1, Qwen2.5-Coder Q4_K_M);
# its batched rows differ from one-token steps by up to 0.6 in the top-2 margin (111 rows, two
# models), so margins within 1.0 are re-decided.
LLAMACPP_CPU = BatchProfile(((1, 1.0), (8, 4.5), (32, 13.0), (128, 50.0), (512, 190.0)), 1.0)
# The same, batch-invariant (LlamaCppBackend(batch_invariant=...)): no tiled K-quant matmul, no
# llamafile sgemm, and repacked weights whose one-row gemv sums as their 4-row gemm does (the
# patch `make bootstrap` applies, scripts/patches): batched rows are one-token steps bit for bit,
# so no near-tie is re-decided, at the default kernels' cost (Qwen2.5-Coder-1.5B Q4_K_M, 2 cores:
# 128 tokens ~40 steps, as with the default kernels).
LLAMACPP_CPU_INVARIANT = BatchProfile(LLAMACPP_CPU.costs, 0.0)
# A build for an AVX-512 CPU (`make bootstrap` builds llama.cpp for the host's CPU): its int8 dot
# products run 512 bits wide, so a batched forward costs ~1.4-1.7x less than with the AVX2 build,
# while a decode step, bound by reading the weights, costs the same (Qwen2.5-Coder-1.5B Q4_K_M, 2
# vCPUs of an AMD EPYC Zen 5, 500-token context: 8 / 32 / 128 tokens cost 4.0 / 10.7 / 37.1 steps
# against 4.5 / 15.0 / 50.4 built for AVX2; docs/results/kernel_llamacpp_qwen1.5b_zen5_native.json).
# The invariant kernels are the same code at this width (the load probe checks it). The gain is
# the model's: Qwen2.5-Coder-0.5B batches at about the AVX2 build's cost on the same host (128
# tokens: 48.9 steps against 51.7); `cost_curve` prices a model measured on the machine.
# At a long context a forward also reads every cached key and value (once per forward) and
# attends to each (per appended token): the same model, 2 vCPUs of an Intel Xeon (AVX-512),
# batch-invariant: a decode step costs 63.0 ms at a 500-token context and 91.6 ms at 6,000, a
# 64-token verify forward 1,339 ms and 2,454 ms (20.8 and 26.8 steps of its context), 16 tokens
# 641 ms at 6,000; fitted, a context token costs 3.3e-5 decode steps (at 500) per forward and
# 5.0e-5 per appended token (docs/quality.md, "Where a long file's time goes").
_QWEN_1_5B_CONTEXT = (500, 3.3e-5, 5.0e-5)
LLAMACPP_CPU_AVX512 = BatchProfile(((1, 1.0), (8, 4.0), (32, 10.7), (128, 37.0), (512, 148.0)),
                                   1.0, _QWEN_1_5B_CONTEXT)
LLAMACPP_CPU_AVX512_INVARIANT = dataclasses.replace(LLAMACPP_CPU_AVX512, step_tolerance=0.0)
# Batch-invariant on a build without that patch: the weights are not repacked, and a batched token
# costs up to ~2x more (the same model: 128 tokens cost 76 steps against 38).
LLAMACPP_CPU_UNPACKED = BatchProfile(((1, 1.0), (8, 5.5), (32, 19.3), (128, 76.0), (512, 324.0)),
                                     0.0)
# GPU offload: a forward is bound by weight reads until the batch is large.
LLAMACPP_GPU = BatchProfile(((1, 1.0), (8, 1.1), (32, 1.3), (128, 2.0), (512, 6.0)), 1.0)
# Transformers fp32 on a CPU (`copygram bench kernel --backend transformers`, SmolLM2-135M, 2
# threads of an AMD EPYC, 300-token context): up to 16 tokens (the backend's small-batch
# matmul, SMALL_BATCH_ROWS) a forward costs about one decode step (8: 1.05, 16: 1.2), then 32 / 64 / 128 tokens cost ~1.9 /
# 2.5 / 3.5 steps; rows equal one-token steps within 6e-5.
TRANSFORMERS_CPU = BatchProfile(((1, 1.0), (8, 1.05), (16, 1.2), (24, 1.7), (32, 1.9), (64, 2.5),
                                 (128, 3.5), (512, 14.7)), 1e-3)
# The same on a CPU whose BLAS is fast for few rows (Intel, MKL: SMALL_BATCH_MIN_ROWS), where
# linear layers keep `linear` up to 4 tokens and take W @ x.T from 5 to 16 (2 vCPUs of an Intel
# Xeon, SmolLM2-135M, a decode step ~61 ms; 300- and 700-token contexts): a decode step is ~35%
# cheaper than with the AMD routing, so drafted tokens cost more steps (8: ~1.55, 16: ~1.7).
TRANSFORMERS_CPU_FEW_ROWS_LINEAR = BatchProfile(
    ((1, 1.0), (2, 1.03), (4, 1.3), (8, 1.55), (16, 1.7), (24, 2.25), (32, 2.5), (64, 3.6),
     (128, 5.6), (512, 21.0)), 1e-3)
# CUDA, bf16/fp16 kernels that pick a different reduction order by batch size.
TRANSFORMERS_CUDA = BatchProfile(((1, 1.0), (8, 1.05), (32, 1.1), (128, 1.3), (512, 2.0)), 0.25)


@runtime_checkable
class Batched(Protocol):
    """A backend that runs a splice in batches of ``n_batch`` tokens (llama.cpp): a prompt spliced
    in pieces of ``n_batch`` runs the same batches as one splice of it, so the cache is the same
    bit for bit, and the decode loop says how far a long prompt has got between them
    (:class:`~copygram.decode.events.PrefillEvent`)."""

    n_batch: int


@runtime_checkable
class Backend(Protocol):
    """A causal LM with a KV cache that copygram can append to.

    The cache holds ``n_tokens`` tokens. ``splice`` appends many known tokens in one batched
    forward pass (chunked only where the stack's batch limit forces it) and returns the logits of
    the last position; ``decode`` appends one token. A prompt prefill is a splice.
    """

    name: str

    @property
    def vocab_size(self) -> int: ...

    @property
    def eos_token_ids(self) -> frozenset[int]:
        """Every id that ends generation (EOS, and end-of-turn tokens of chat models)."""
        ...

    @property
    def eos_token_id(self) -> int: ...

    @property
    def context_length(self) -> int: ...

    @property
    def n_tokens(self) -> int: ...

    @property
    def batch_profile(self) -> BatchProfile:
        """What batched forwards cost here and how close their rows are to one-token steps."""
        ...

    @property
    def cached_ids(self) -> list[int]:
        """The token ids in the cache, oldest first (a copy; for reusing a cached prefix)."""
        ...

    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        """Token ids of ``text`` with no BOS added; ``special`` parses special-token text."""
        ...

    def detokenize(self, ids: Sequence[int]) -> str: ...

    def token_bytes(self) -> list[bytes]:
        """The bytes of every token id (``b""`` for special tokens), for the constraint engines."""
        ...

    def ll_tokenizer(self) -> llguidance.LLTokenizer:
        """An llguidance tokenizer for this vocabulary (built once, cached)."""
        ...

    def chat_prompt(self, messages: Sequence[dict[str, str]]) -> str:
        """The model's chat template applied to ``messages``, ending with the assistant turn."""
        ...

    def splice(self, ids: Sequence[int]) -> Logits:
        """Append ``ids`` in one batched forward; logits after the last one."""
        ...

    def splice_all(self, ids: Sequence[int], *,
                   rows: Sequence[int] | None = None) -> npt.NDArray[np.float32]:
        """Append ``ids`` in one forward; logits after each ``ids[r]`` for ``r`` in ``rows``
        (default: every position), shape ``(len(rows), vocab)``.

        For verifying a speculative draft; costs a logits row per requested position, so ask only
        for the rows the verification reads.
        """
        ...

    def decode(self, token_id: int) -> Logits:
        """Append one token; logits after it."""
        ...

    def truncate(self, n_tokens: int) -> None:
        """Drop every cached token from position ``n_tokens`` on."""
        ...

    def describe(self) -> dict[str, object]:
        """What this loaded model is, for the records a benchmark writes beside its figures:
        ``name``, ``model``, ``device`` and ``batch_invariant`` at least, and what a forward's
        cost depends on besides (llama.cpp: ``build``, the features it compiled in; its
        threads). Microseconds."""
        ...
