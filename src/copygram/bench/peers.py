"""Real peer implementations of prompt lookup decoding, on the benchmark's prompts and model.

Free-running greedy decoding (not teacher-forced), each peer against plain greedy decoding by the
same stack with the same ``max_new_tokens``:

* llama.cpp: ``llama_cpp.Llama(..., draft_model=LlamaPromptLookupDecoding(num_pred_tokens=k))``
  vs a plain ``Llama`` (two instances of the config's GGUF with the backend's thread count,
  ~0.2 s and ~0.5 GB each for the default model);
* transformers: ``model.generate(..., prompt_lookup_num_tokens=k, do_sample=False)`` vs plain
  ``model.generate(..., do_sample=False)``, on one stock ``AutoModelForCausalLM`` loaded from the
  config's model (~15 s from the default GGUF).

Each peer is loaded from the benchmark's :class:`~copygram.config.BackendConfig`, as a user of
that stack would load it; copygram's backend only tokenizes the prompts.

Reported: generation-phase tokens/s of each, and whether the peer's tokens equal plain greedy's.
Generation phase: from the first new token on (llama.cpp), or total minus a one-token run's time
(transformers, whose ``generate`` cannot be timed from inside).

``bench quality``'s ``lookup`` approach runs the same peers on its rewrite prompts, loaded once
per run by :func:`lookup_generator`.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from copygram.backends.base import Backend
from copygram.bench.baselines import baseline_prompt
from copygram.bench.data import EditRow
from copygram.catalog import resolve_model
from copygram.config import BackendConfig
from copygram.errors import BackendError, ConfigError, missing_dependency


@dataclass(frozen=True)
class PeerRun:
    """One row: a peer's and plain greedy's generation on the same prompt."""

    stack: str
    id: str
    k: int
    plain_tokens: int
    plain_s: float
    peer_tokens: int
    peer_s: float
    same_output: bool

    @property
    def speedup(self) -> float:
        """Tokens/s of the peer over tokens/s of plain greedy."""
        if self.peer_s <= 0 or self.plain_s <= 0 or self.plain_tokens == 0:
            return float("nan")
        return (self.peer_tokens / self.peer_s) / (self.plain_tokens / self.plain_s)


def _max_new_tokens(backend: Backend, row: EditRow) -> int:
    return len(backend.tokenize(row.after)) + 32 if row.after else 32


# --- llama.cpp ----------------------------------------------------------------------------------


def _fitting(backend: Backend, rows: Sequence[EditRow]
             ) -> Iterator[tuple[EditRow, list[int], int]]:
    """Each row whose baseline prompt and output fit the context, with both."""
    for row in rows:
        prompt = baseline_prompt(backend, row.before, row.instruction)
        max_new = _max_new_tokens(backend, row)
        if len(prompt) + max_new <= backend.context_length:
            yield row, prompt, max_new


@dataclass(frozen=True)
class GreedyRun:
    """A peer's greedy generation after a prompt: its ``tokens`` (no end-of-generation id), its
    ``stop`` (``"eos"``, ``"budget"`` or ``"context"``), ``seconds`` (llama.cpp: from the first
    new token to the end; transformers: the whole ``generate`` call), ``forwards`` (model
    forwards after the prompt's: each one verifies a draft) and ``gen_seconds`` (from the end of
    the prompt's forward to the end, the generation phase of copygram's
    :class:`~copygram.decode.stats.RunStats`)."""

    tokens: list[int]
    stop: str
    seconds: float
    forwards: int
    gen_seconds: float | None = None


def llama_greedy(llm: Any, prompt: Sequence[int], max_new: int, eos: frozenset[int], *,
                 reuse_prefix: bool = False,
                 closes: Callable[[int], bool] | None = None) -> GreedyRun:
    """``llm.generate`` greedy after ``prompt`` up to an end-of-generation id, ``max_new`` tokens,
    the token after which ``closes`` says the output ends (stop ``"stop"``: a rewrite's closing
    fence, :func:`~copygram.decode.rewrite.closes_file`) or a full context (stopped where
    copygram's baseline stops: before a token that would not fit). ``reuse_prefix``: keep the
    prompt prefix llama-cpp-python finds in its cache, as copygram's prefill does; otherwise
    the whole prompt is evaluated."""
    if not reuse_prefix:
        llm.reset()
    evals = 0
    evaluate = llm.eval

    def counted(tokens: Sequence[int]) -> None:
        nonlocal evals
        evals += 1
        evaluate(tokens)

    llm.eval = counted  # generate() calls self.eval once per forward: count them
    out: list[int] = []
    first, stop = 0.0, "budget"
    stream = llm.generate(list(prompt), temp=0.0, top_k=1, reset=True)
    try:
        for token in stream:
            if not out:
                first = time.perf_counter()
            if token in eos:
                stop = "eos"
                break
            out.append(int(token))
            if closes is not None and closes(int(token)):
                stop = "stop"
                break
            if len(out) >= max_new:
                break
            if len(prompt) + len(out) > llm.n_ctx():
                stop = "context"
                break
    finally:
        stream.close()
        del llm.eval
    seconds = (time.perf_counter() - first) if out else 0.0
    # The first token comes out of the prompt's forward: from there on is generation.
    return GreedyRun(out, stop, seconds, max(evals - 1, 0), gen_seconds=seconds)


def _gguf(config: BackendConfig) -> Path | None:
    """The GGUF file ``config`` names (a catalog model or a path), or None for a Hugging Face
    folder or hub name."""
    if config.is_catalog_model or config.model.lower().endswith(".gguf"):
        return resolve_model(config.model, progress=None)
    return None


def llama_model(config: BackendConfig, n_ctx: int, lookup_k: int | None = None) -> Any:
    """A ``llama_cpp.Llama`` of ``config``'s GGUF with the backend's thread count, and with
    ``LlamaPromptLookupDecoding(num_pred_tokens=lookup_k)`` as its draft model unless
    ``lookup_k`` is None. With a draft model it keeps logits for every position: ``n_ctx`` rows
    of the vocabulary (~2.5 GB for a 150k vocabulary at 4096)."""
    try:
        import llama_cpp
        from llama_cpp.llama_speculative import LlamaPromptLookupDecoding
    except ImportError as exc:
        raise missing_dependency("llama_cpp", "llamacpp") from exc
    path = _gguf(config)
    if path is None:
        raise ConfigError(f"llama.cpp peers need a GGUF model, not {config.model!r}")
    # The backend's own thread count (the same default), so the peers and copygram compare.
    threads = config.n_threads or os.cpu_count() or 1
    options: dict[str, Any] = {"n_ctx": n_ctx, "n_threads": threads,
                               "n_threads_batch": threads, "verbose": False}
    if lookup_k is not None:
        options["draft_model"] = LlamaPromptLookupDecoding(num_pred_tokens=lookup_k)
        # A draft model turns on logits for every position, but llama-cpp-python 0.3.x sizes
        # its score buffer from this argument (n_batch rows when False): without it a prompt
        # and output past 512 tokens fail with "could not broadcast ... into shape (0,)".
        options["logits_all"] = True
    return llama_cpp.Llama(str(path), **options)


LOOKUP_MAX_CTX = 8192
"""The context of llama.cpp's prompt-lookup peer at most (its logits buffer: n_ctx x the
vocabulary x 4 bytes, ~5 GB for Qwen2.5 at 8192)."""


def run_llamacpp_peers(backend: Backend, config: BackendConfig, rows: Sequence[EditRow],
                       k: int = 10) -> list[PeerRun]:
    """``LlamaPromptLookupDecoding`` vs plain greedy, both in llama-cpp-python."""
    plain = llama_model(config, backend.context_length)
    peer = llama_model(config, min(backend.context_length, LOOKUP_MAX_CTX), k)
    runs = []
    for row, prompt, max_new in _fitting(backend, rows):
        base = llama_greedy(plain, prompt, max_new, backend.eos_token_ids)
        try:
            lookup = llama_greedy(peer, prompt, max_new, backend.eos_token_ids)
        except ValueError as exc:
            # llama-cpp-python 0.3.x can overrun its score buffer while verifying a draft.
            print(f"peer failed on {row.id}: {exc}", file=sys.stderr)
            peer = llama_model(config, min(backend.context_length, LOOKUP_MAX_CTX), k)
            continue
        runs.append(PeerRun("llama.cpp LlamaPromptLookupDecoding", row.id, k, len(base.tokens),
                            base.seconds, len(lookup.tokens), lookup.seconds,
                            lookup.tokens == base.tokens))
    return runs


# --- transformers -------------------------------------------------------------------------------


def _hf_model(config: BackendConfig) -> Any:
    """A stock ``AutoModelForCausalLM`` for ``config`` (the adapter's device and dtype choice)."""
    try:
        from transformers import AutoModelForCausalLM

        from copygram.backends.transformers import resolve_device, resolve_dtype
    except ImportError as exc:
        raise missing_dependency("transformers", "transformers") from exc
    device = resolve_device(config.device)
    path = _gguf(config)
    source, kwargs = (config.model, {}) if path is None else (str(path.parent),
                                                              {"gguf_file": path.name})
    auto: Any = AutoModelForCausalLM
    model = auto.from_pretrained(source, dtype=resolve_dtype(config.dtype, device), **kwargs)
    return model.to(device).eval()


def hf_greedy(model: Any, prompt: Sequence[int], max_new: int, eos: frozenset[int],
              lookup: int | None = None,
              closes: Callable[[int], bool] | None = None) -> GreedyRun:
    """``model.generate(..., do_sample=False)`` after ``prompt`` (with
    ``prompt_lookup_num_tokens=lookup`` unless None), timed as a whole; its forwards are counted
    with a forward hook. ``closes``: as :func:`llama_greedy`'s, read by a stopping criterion
    (tokens a draft accepted past the end are cut)."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    ids = torch.tensor([list(prompt)], device=next(model.parameters()).device)
    stops = sorted(eos)
    extra: dict[str, Any] = {} if lookup is None else {"prompt_lookup_num_tokens": lookup}
    forwards = 0
    prompt_done: float | None = None

    def hook(*_: object) -> None:
        nonlocal forwards, prompt_done
        forwards += 1
        if prompt_done is None:
            prompt_done = time.perf_counter()

    ended: list[int] = []  # the output's length where ``closes`` ended it

    class Closed(StoppingCriteria):
        def __call__(self, input_ids: Any, scores: Any, **kwargs: object) -> Any:
            for token in input_ids[0].tolist()[ids.shape[1] + len(fed):]:
                fed.append(token)
                if not ended and closes is not None and closes(int(token)):
                    ended.append(len(fed))
            return torch.full((input_ids.shape[0],), bool(ended), device=input_ids.device)

    fed: list[int] = []
    if closes is not None:
        extra["stopping_criteria"] = StoppingCriteriaList([Closed()])
    handle = model.register_forward_hook(hook)
    start = time.perf_counter()
    try:
        with torch.no_grad():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new,
                                 do_sample=False, eos_token_id=stops, pad_token_id=stops[0],
                                 **extra)
    finally:
        handle.remove()
    end = time.perf_counter()
    new = [int(t) for t in out[0, ids.shape[1]:]]
    tokens = new[:next((i for i, t in enumerate(new) if t in eos), len(new))]
    stop = "eos" if len(tokens) < len(new) else "budget"
    if ended and ended[0] <= len(tokens):
        tokens, stop = tokens[:ended[0]], "stop"
    return GreedyRun(tokens, stop, end - start, max(forwards - 1, 0),
                     gen_seconds=None if prompt_done is None else end - prompt_done)


def run_transformers_peers(backend: Backend, config: BackendConfig, rows: Sequence[EditRow],
                           k: int = 10) -> list[PeerRun]:
    """``generate(prompt_lookup_num_tokens=k)`` vs plain ``generate``, greedy, same model."""
    model = _hf_model(config)
    eos = backend.eos_token_ids
    runs = []
    for row, prompt, max_new in _fitting(backend, rows):
        prefill_s = hf_greedy(model, prompt, 1, eos).seconds
        base = hf_greedy(model, prompt, max_new, eos)
        peer = hf_greedy(model, prompt, max_new, eos, k)
        runs.append(PeerRun("transformers prompt_lookup_num_tokens", row.id, k, len(base.tokens),
                            max(base.seconds - prefill_s, 1e-9), len(peer.tokens),
                            max(peer.seconds - prefill_s, 1e-9), peer.tokens == base.tokens))
    return runs


def run_peers(backend: Backend, config: BackendConfig, rows: Sequence[EditRow], k: int = 10
              ) -> list[PeerRun]:
    """The peer of ``config``'s stack; ``backend`` (loaded from ``config``) builds the prompts."""
    if config.backend == "transformers":
        return run_transformers_peers(backend, config, rows, k)
    return run_llamacpp_peers(backend, config, rows, k)


class LookupGenerate(Protocol):
    """A loaded peer's greedy generation after a prompt."""

    def __call__(self, prompt: Sequence[int], max_new: int,
                 closes: Callable[[int], bool] | None = None) -> GreedyRun: ...

    def keep_prefix(self, n_tokens: int) -> None:
        """Reuse at most the first ``n_tokens`` of the cached prompt in the next call (a peer
        that keeps no cache across calls has nothing to drop)."""
        ...


@dataclass
class _LlamaLookup:
    """``LlamaPromptLookupDecoding`` on one loaded ``Llama``, rebuilt after a failed run."""

    config: BackendConfig
    n_ctx: int
    eos: frozenset[int]
    k: int

    def __post_init__(self) -> None:
        self.llm = llama_model(self.config, self.n_ctx, self.k)

    def __call__(self, prompt: Sequence[int], max_new: int,
                 closes: Callable[[int], bool] | None = None) -> GreedyRun:
        try:
            # The prompt prefix cached from the last row is reused, as copygram's prefill does.
            return llama_greedy(self.llm, prompt, max_new, self.eos, reuse_prefix=True,
                                closes=closes)
        except ValueError as exc:
            # llama-cpp-python 0.3.x can overrun its score buffer while verifying a draft, and
            # the instance is unusable after that.
            self.llm = llama_model(self.config, self.n_ctx, self.k)
            raise BackendError(f"llama-cpp-python's prompt lookup failed: {exc}") from exc

    def keep_prefix(self, n_tokens: int) -> None:
        # generate() reuses the longest prefix of the first n_tokens cached ids that the next
        # prompt shares, and its first eval drops the rest from the KV cache.
        self.llm.n_tokens = min(self.llm.n_tokens, max(n_tokens, 0))


@dataclass
class _HfLookup:
    """Transformers' ``generate(prompt_lookup_num_tokens=k)``: each call starts a fresh cache."""

    model: Any
    n_ctx: int
    eos: frozenset[int]
    k: int

    def __call__(self, prompt: Sequence[int], max_new: int,
                 closes: Callable[[int], bool] | None = None) -> GreedyRun:
        # The baseline stops once prompt and output exceed the context: at most this many.
        room = self.n_ctx - len(prompt) + 1
        run = hf_greedy(self.model, prompt, min(max_new, room), self.eos, self.k, closes)
        if run.stop == "budget" and len(run.tokens) == room < max_new:
            return dataclasses.replace(run, stop="context")
        return run

    def keep_prefix(self, n_tokens: int) -> None:
        """Nothing is cached across calls."""


def lookup_generator(backend: Backend, config: BackendConfig, k: int = 10) -> LookupGenerate:
    """The prompt-lookup peer of ``config``'s stack, loaded once (``backend``, loaded from
    ``config``, gives the context length and end-of-generation ids): llama.cpp's
    ``LlamaPromptLookupDecoding(num_pred_tokens=k)``, or Transformers'
    ``generate(prompt_lookup_num_tokens=k, do_sample=False)`` for ``backend="transformers"``.
    Either stops where copygram's rewrite baseline stops: an end-of-generation id, the token
    after which ``closes`` ends the output, ``max_new`` tokens, or a full context."""
    eos = backend.eos_token_ids
    if config.backend != "transformers":
        # Its draft model keeps logits for every position of the context (n_ctx rows of the
        # vocabulary): at a 32k trained context and Qwen2.5's 152k vocabulary ~20 GB. Capped;
        # a row past the cap fails on the peer alone.
        return _LlamaLookup(config, min(backend.context_length, LOOKUP_MAX_CTX), eos, k)
    return _HfLookup(_hf_model(config), backend.context_length, eos, k)


def peer_table(runs: Sequence[PeerRun]) -> str:
    """Markdown: per stack, pooled tokens/s of plain and peer, and the share of equal outputs."""
    lines = ["| peer | k | rows | plain tok/s | peer tok/s | speedup | same output as greedy |",
             "|---|---|---|---|---|---|---|"]
    for stack in sorted({r.stack for r in runs}):
        mine = [r for r in runs if r.stack == stack]
        plain = sum(r.plain_tokens for r in mine) / max(sum(r.plain_s for r in mine), 1e-9)
        peer = sum(r.peer_tokens for r in mine) / max(sum(r.peer_s for r in mine), 1e-9)
        same = sum(r.same_output for r in mine) / len(mine)
        lines.append(f"| {stack} | {mine[0].k} | {len(mine)} | {plain:.1f} | {peer:.1f} | "
                     f"{peer / plain:.2f}x | {same:.0%} |")
    return "\n".join(lines) + "\n"
