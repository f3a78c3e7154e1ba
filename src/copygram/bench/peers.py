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
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from copygram.backends.base import Backend
from copygram.bench.baselines import baseline_prompt
from copygram.bench.data import EditRow
from copygram.catalog import resolve_model
from copygram.config import BackendConfig
from copygram.errors import ConfigError, missing_dependency


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


def _llama_generate(llm: Any, prompt: Sequence[int], max_new: int, eos: frozenset[int]
                    ) -> tuple[list[int], float]:
    """Greedy tokens after ``prompt`` and the seconds from the first new token to the end."""
    llm.reset()
    out: list[int] = []
    first = 0.0
    for token in llm.generate(list(prompt), temp=0.0, top_k=1, reset=True):
        if not out:
            first = time.perf_counter()
        if token in eos:
            break
        out.append(int(token))
        if len(out) >= max_new:
            break
    return out, (time.perf_counter() - first) if out else 0.0


def _gguf(config: BackendConfig) -> Path | None:
    """The GGUF file ``config`` names (a catalog model or a path), or None for a Hugging Face
    folder or hub name."""
    if config.is_catalog_model or config.model.lower().endswith(".gguf"):
        return resolve_model(config.model, progress=None)
    return None


def run_llamacpp_peers(backend: Backend, config: BackendConfig, rows: Sequence[EditRow],
                       k: int = 10) -> list[PeerRun]:
    """``LlamaPromptLookupDecoding`` vs plain greedy, both in llama-cpp-python."""
    try:
        import llama_cpp
        from llama_cpp.llama_speculative import LlamaPromptLookupDecoding
    except ImportError as exc:
        raise missing_dependency("llama_cpp", "llamacpp") from exc
    path = _gguf(config)
    if path is None:
        raise ConfigError(f"llama.cpp peers need a GGUF model, not {config.model!r}")
    # The backend's own thread count (the same default), so the peers and the e2e runs compare.
    threads = config.n_threads or os.cpu_count() or 1
    options: dict[str, Any] = {"n_ctx": backend.context_length, "n_threads": threads,
                               "n_threads_batch": threads, "verbose": False}
    plain = llama_cpp.Llama(str(path), **options)
    peer = llama_cpp.Llama(str(path), draft_model=LlamaPromptLookupDecoding(
        num_pred_tokens=k), **options)
    runs = []
    for row, prompt, max_new in _fitting(backend, rows):
        base_out, base_s = _llama_generate(plain, prompt, max_new, backend.eos_token_ids)
        try:
            peer_out, peer_s = _llama_generate(peer, prompt, max_new, backend.eos_token_ids)
        except ValueError as exc:
            # llama-cpp-python 0.3.x can overrun its score buffer while verifying a draft.
            print(f"peer failed on {row.id}: {exc}", file=sys.stderr)
            peer = llama_cpp.Llama(str(path), draft_model=LlamaPromptLookupDecoding(
                num_pred_tokens=k), **options)
            continue
        runs.append(PeerRun("llama.cpp LlamaPromptLookupDecoding", row.id, k, len(base_out),
                            base_s, len(peer_out), peer_s, peer_out == base_out))
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


def run_transformers_peers(backend: Backend, config: BackendConfig, rows: Sequence[EditRow],
                           k: int = 10) -> list[PeerRun]:
    """``generate(prompt_lookup_num_tokens=k)`` vs plain ``generate``, greedy, same model."""
    model = _hf_model(config)
    import torch

    device = next(model.parameters()).device
    eos = sorted(backend.eos_token_ids)

    def timed(ids: Any, max_new: int, lookup: int | None) -> tuple[list[int], float]:
        extra = {} if lookup is None else {"prompt_lookup_num_tokens": lookup}
        start = time.perf_counter()
        with torch.no_grad():
            out = model.generate(ids, attention_mask=torch.ones_like(ids),
                                 max_new_tokens=max_new, do_sample=False, eos_token_id=eos,
                                 pad_token_id=eos[0], **extra)
        return [int(t) for t in out[0, ids.shape[1]:] if int(t) not in eos], \
            time.perf_counter() - start

    runs = []
    for row, prompt, max_new in _fitting(backend, rows):
        ids = torch.tensor([prompt], device=device)
        _, prefill_s = timed(ids, 1, None)
        base_out, base_s = timed(ids, max_new, None)
        peer_out, peer_s = timed(ids, max_new, k)
        runs.append(PeerRun("transformers prompt_lookup_num_tokens", row.id, k, len(base_out),
                            max(base_s - prefill_s, 1e-9), len(peer_out),
                            max(peer_s - prefill_s, 1e-9), peer_out == base_out))
    return runs


def run_peers(backend: Backend, config: BackendConfig, rows: Sequence[EditRow], k: int = 10
              ) -> list[PeerRun]:
    """The peer of ``config``'s stack; ``backend`` (loaded from ``config``) builds the prompts."""
    if config.backend == "transformers":
        return run_transformers_peers(backend, config, rows, k)
    return run_llamacpp_peers(backend, config, rows, k)


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
