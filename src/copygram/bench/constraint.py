"""``copygram bench constraint``: compile time vs document size and per-token cost, per engine.

For each engine and each line count n: the time to compile the per-document grammar (caches
cleared, vocabulary already built), then a seeded random walk over allowed tokens (uniform, with
a share of tag tokens so copies happen), timing ``allowed()`` + ``consume()`` per token, and
separately the base engine's mask alone, so the guards' cost shows. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

import numpy as np

from copygram.config import BackendConfig
from copygram.constraints import compile_constraint, vocab_for
from copygram.constraints.base import GuardedConstraint
from copygram.constraints.document_grammar import literal_bytes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engines", default="llguidance,outlines",
                        help="comma-separated engines (default: %(default)s)")
    parser.add_argument("--sizes", default="10,100,1000,10000",
                        help="document line counts (default: %(default)s)")
    parser.add_argument("--tokens", type=int, default=2000,
                        help="tokens timed per walk (default: %(default)s)")
    parser.add_argument("--tokenizer", default="model", choices=["model", "byte"],
                        help="'model': the default GGUF model's vocabulary; 'byte': llguidance's")
    parser.add_argument("--model", default="default",
                        help="a catalog name or a GGUF path (default: the default model)")
    parser.add_argument("--seed", type=int, default=0)


def _tokenizer(args: argparse.Namespace) -> tuple[Any, str]:
    if args.tokenizer == "byte":
        return "byte", "llguidance byte tokenizer"
    from copygram.backends import load

    config = BackendConfig(backend="llamacpp", model=args.model, n_ctx=256)
    return load(config), f"vocabulary of {config.model}"


def _clear_caches() -> None:
    from copygram.constraints.llguidance import compile_llguidance

    compile_llguidance.cache_clear()
    try:
        from copygram.constraints.outlines import compile_outlines
    except ImportError:
        return
    compile_outlines.cache_clear()


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def _walk(constraint: GuardedConstraint, tag_tokens: np.ndarray, n_tokens: int,
          rng: random.Random) -> tuple[list[float], list[float]]:
    """Per token: seconds for allowed()+consume(), and for the base mask alone."""
    total: list[float] = []
    base: list[float] = []
    scratch = np.empty(constraint.vocab_size, dtype=np.bool_)
    eos = constraint.eos_token_id
    while len(total) < n_tokens:
        t0 = time.perf_counter()
        mask = constraint.allowed()
        t1 = time.perf_counter()
        pool = mask & tag_tokens if rng.random() < 0.3 else mask
        pool[eos] = False
        ids = np.flatnonzero(pool) if pool.any() else np.flatnonzero(mask)
        token = int(ids[rng.randrange(len(ids))])
        t2 = time.perf_counter()
        constraint.consume(token)
        t3 = time.perf_counter()
        total.append((t1 - t0) + (t3 - t2))
        t4 = time.perf_counter()
        constraint._fill_base(scratch)  # private on purpose: the guard-free baseline
        base.append(time.perf_counter() - t4)
        if constraint.done and rng.random() < 0.02:
            constraint.rollback(constraint.n_consumed)  # start a new program, keep the state cheap
    return total, base


def run(args: argparse.Namespace) -> int:
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    tokenizer, described = _tokenizer(args)
    t0 = time.perf_counter()
    vocab = vocab_for(tokenizer)
    vocab_s = time.perf_counter() - t0
    tag_bytes = set(literal_bytes("lines"))
    tag_tokens = np.array(
        [bool(d) and set(d) <= tag_bytes for d in vocab.token_bytes]
        + [False] * (vocab.vocab_size - len(vocab.token_bytes)),
        dtype=np.bool_,
    )
    print(f"tokenizer: {described} ({vocab.vocab_size} tokens; Vocab built in {vocab_s*1e3:.0f} ms)")
    print(f"walk: {args.tokens} tokens per cell, seed {args.seed}\n")
    print("| engine | n lines | compile ms | allowed+consume median us | p99 us "
          "| base mask median us | guard+bookkeeping median us |")
    print("|---|---|---|---|---|---|---|")
    for engine in engines:
        compile_constraint("x\n", tokenizer, engine=engine, max_lines=10**7)  # warm imports
        for n in sizes:
            document = ["x\n"] * n
            _clear_caches()
            t0 = time.perf_counter()
            constraint = compile_constraint(document, tokenizer, engine=engine, max_lines=10**7)
            compile_ms = (time.perf_counter() - t0) * 1e3
            assert isinstance(constraint, GuardedConstraint)
            total, base = _walk(constraint, tag_tokens, args.tokens, random.Random(args.seed))
            med, p99 = statistics.median(total) * 1e6, _percentile(total, 99) * 1e6
            base_med = statistics.median(base) * 1e6
            print(f"| {engine} | {n} | {compile_ms:.1f} | {med:.1f} | {p99:.1f} | "
                  f"{base_med:.1f} | {med - base_med:.1f} |", flush=True)
    return 0
