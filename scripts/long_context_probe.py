"""What forwards cost at a long context on llama.cpp, with or without flash attention, and
whether batched rows still equal one-token steps there (docs/quality.md, "Where a long file's
time goes").

    .venv/bin/python scripts/long_context_probe.py --context 6000 [--flash-attn]

Prefills ``--context`` random text tokens, then times 8 decode steps and verify forwards (every
row's logits) of 16 and 64 tokens, each the fastest of two, and compares 21 rows in one forward
with one decode step and a forward of the other 20. Prints one JSON line. copygram itself never
turns flash attention on (its rows differ from one-token steps: the last field), so this script
passes the flag to ``llama_cpp.Llama`` itself. Cost: the prefill (~2 minutes for 6,000 tokens on
2 cores of a 2026 CPU) plus ~150 decode steps.
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from collections.abc import Callable
from typing import Any

import llama_cpp
import numpy as np

from copygram.backends import load
from copygram.bench.kernel import text_token_ids
from copygram.config import BackendConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--context", type=int, default=6000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--flash-attn", action="store_true")
    args = parser.parse_args()

    opened = llama_cpp.Llama.__init__

    @functools.wraps(opened)
    def with_flag(self: llama_cpp.Llama, *a: Any, **k: Any) -> None:
        opened(self, *a, **k, flash_attn=args.flash_attn)

    llama_cpp.Llama.__init__ = with_flag  # type: ignore[method-assign]
    backend = load(BackendConfig(backend="llamacpp", model=args.model, n_threads=args.threads))
    rng = np.random.default_rng(0)
    vocabulary = text_token_ids(backend)
    prompt = [int(i) for i in rng.choice(vocabulary, args.context)]
    span = [int(i) for i in rng.choice(vocabulary, 64)]
    backend.truncate(0)
    start = time.perf_counter()
    backend.splice(prompt)
    prefill = time.perf_counter() - start

    def fastest(run: Callable[[], object]) -> float:
        times = []
        for _ in range(2):
            backend.truncate(args.context)
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        backend.truncate(args.context)
        return min(times)

    step = fastest(lambda: [backend.decode(t) for t in span[:8]]) / 8
    out: dict[str, object] = {"flash_attn": args.flash_attn, "context": args.context,
                              "prefill_s": round(prefill, 2),
                              "prefill_tokens_per_s": round(args.context / prefill, 1),
                              "decode_ms": round(1000 * step, 1)}
    for n in (16, 64):
        verify = fastest(lambda n=n: backend.splice_all(span[:n]))
        out[f"verify{n}_ms"] = round(1000 * verify, 1)
        out[f"verify{n}_steps"] = round(verify / step, 2)
    whole = np.array(backend.splice_all(span[:21]))
    backend.truncate(args.context)
    first = np.array(backend.decode(span[0]))[None, :]
    split = np.concatenate([first, np.array(backend.splice_all(span[1:21]))])
    backend.truncate(0)
    out["rows_equal_steps"] = bool(np.array_equal(whole, split))
    out["largest_difference"] = float(np.max(np.abs(whole - split)))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
