"""``copygram bench kernel``: N greedy decode steps vs one splice of the same N tokens.

After a cached prompt (200 tokens by default), for each N the benchmark times N ``decode`` calls,
one ``splice`` of N tokens, and the bare stack call a splice wraps (llama.cpp: ``Llama.eval``;
transformers: ``model(input_ids, cache=..., logits_to_keep=1)``), truncating back to the prompt
between runs. The speedup ``s(N) = decode / splice`` is the kernel curve the end-to-end benchmark
reuses (:func:`load_kernel_curve`); ``splice / bare - 1`` is copygram's overhead.

Results merge into ``docs/kernel.json`` (keyed by backend); ``docs/kernel.md`` and
``docs/kernel.png`` are regenerated from that file, so each backend's section is replaced in place.
Cost: ~1 min for llama.cpp and ~3 min for transformers on 2 CPU cores with the defaults.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from copygram.backends import BACKENDS, Backend, load
from copygram.errors import ConfigError

DEFAULT_NS = (8, 32, 128, 512)
PROMPT_TOKENS = 200
FIRST_TEXT_ID = 100  # below this SmolLM2 keeps its special tokens; random ids stay ordinary text
JSON_NAME, MD_NAME, PNG_NAME = "kernel.json", "kernel.md", "kernel.png"


@dataclass(frozen=True)
class KernelRow:
    """Medians over the repeats for one span length ``n`` (seconds; RSS in MiB)."""

    n: int
    decode_s: float
    splice_s: float
    bare_s: float
    speedup: float
    """``decode_s / splice_s``: how much faster one splice is than N decode steps."""
    overhead: float
    """``splice_s / bare_s - 1``: what copygram's splice adds over the stack's own call."""
    peak_rss_mib: float
    """Process peak RSS after this row (``ru_maxrss``; monotone, includes the loaded model)."""


@dataclass(frozen=True)
class KernelResult:
    backend: str
    model: str
    prompt_tokens: int
    repeats: int
    threads: int
    machine: str
    rows: tuple[KernelRow, ...]
    load_average: tuple[float, float] = (0.0, 0.0)
    """1-minute load average before and after the run: above the CPU count, other processes
    competed for the cores and the timings (llama.cpp's above all) are inflated and noisy."""

    def curve(self) -> dict[int, float]:
        """The kernel curve ``s(N)``: span length -> speedup of one splice over N decodes."""
        return {row.n: row.speedup for row in self.rows}

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KernelResult:
        rows = tuple(KernelRow(**row) for row in data["rows"])
        load = tuple(data.get("load_average", (0.0, 0.0)))
        return cls(**{**data, "rows": rows, "load_average": (float(load[0]), float(load[1]))})


def _peak_rss_mib() -> float:
    # ru_maxrss is KiB on Linux and bytes on macOS.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _bare_call(backend: Backend, n_prompt: int) -> Callable[[list[int]], None]:
    """The stack's own batched call over a span, followed by a rewind to ``n_prompt`` (the rewind
    is outside the timed region, see :func:`_time`)."""
    if backend.name == "llamacpp":
        llm: Any = getattr(backend, "llm")  # noqa: B009 - not part of the Backend protocol

        def bare(ids: list[int]) -> None:
            llm.eval(ids)

        return bare
    if backend.name == "transformers":
        import torch

        model: Any = getattr(backend, "model")  # noqa: B009
        device = getattr(backend, "device")  # noqa: B009

        def bare_hf(ids: list[int]) -> None:
            with torch.inference_mode():
                out = model(
                    input_ids=torch.tensor([ids], device=device),
                    cache=getattr(backend, "cache"),  # noqa: B009
                    use_cache=True,
                    logits_to_keep=1,
                )
                out.logits[0, -1].float().cpu()  # the host copy a splice makes too

        return bare_hf
    raise ConfigError(f"no bare stack call is known for backend {backend.name!r}")


def _rewind(backend: Backend, n_prompt: int, n_bare: int) -> None:
    """Back to the prompt after a bare call the backend did not see (``n_bare`` extra tokens)."""
    if backend.name == "transformers":
        getattr(backend, "cache").crop(-n_bare)  # noqa: B009
    else:
        backend.truncate(n_prompt)  # llama.cpp's truncate always clears cells from n_prompt on


def _decode_each(backend: Backend, ids: Sequence[int]) -> None:
    for token_id in ids:
        backend.decode(token_id)


def _time(run: Callable[[], object], reset: Callable[[], None]) -> float:
    reset()
    start = time.perf_counter()
    run()
    elapsed = time.perf_counter() - start
    reset()
    return elapsed


def measure_kernel(
    backend: Backend,
    ns: Sequence[int] = DEFAULT_NS,
    repeats: int = 3,
    *,
    prompt_tokens: int = PROMPT_TOKENS,
    seed: int = 0,
    model: str = "default",
    threads: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> KernelResult:
    """Time decode vs splice vs bare call for each N in ``ns``; medians of ``repeats`` runs.

    Uses seeded random text-token ids (the cost of a forward does not depend on which ids). Costs
    about ``repeats * sum(ns)`` decode steps.
    """
    if repeats < 1 or not ns or min(ns) < 1:
        raise ConfigError("repeats and every N must be positive, with at least one N")
    if prompt_tokens + max(ns) > backend.context_length:
        raise ConfigError(
            f"prompt {prompt_tokens} + N {max(ns)} exceeds the context of "
            f"{backend.context_length}; lower --n or raise n_ctx"
        )
    load_start = os.getloadavg()[0]
    rng = np.random.default_rng(seed)
    prompt = rng.integers(FIRST_TEXT_ID, backend.vocab_size, prompt_tokens).tolist()
    backend.truncate(0)
    backend.splice(prompt)
    bare = _bare_call(backend, prompt_tokens)

    def reset() -> None:
        backend.truncate(prompt_tokens)

    # Warm-up: first calls allocate buffers and compute graphs.
    warm = rng.integers(FIRST_TEXT_ID, backend.vocab_size, 8).tolist()
    _time(lambda: backend.splice(warm), reset)
    _time(lambda: backend.decode(warm[0]), reset)

    rows = []
    for n in ns:
        span = rng.integers(FIRST_TEXT_ID, backend.vocab_size, n).tolist()
        decode_t, splice_t, bare_t = [], [], []
        for _ in range(repeats):
            decode_t.append(_time(partial(_decode_each, backend, span), reset))
            splice_t.append(_time(partial(backend.splice, span), reset))
            start = time.perf_counter()
            bare(span)
            bare_t.append(time.perf_counter() - start)
            _rewind(backend, prompt_tokens, n)
        d, s, b = (statistics.median(x) for x in (decode_t, splice_t, bare_t))
        row = KernelRow(n, d, s, b, d / s, s / b - 1, _peak_rss_mib())
        rows.append(row)
        if progress is not None:
            progress(_md_row(row))
    return KernelResult(
        backend=backend.name,
        model=model,
        prompt_tokens=prompt_tokens,
        repeats=repeats,
        threads=threads or os.cpu_count() or 1,
        machine=f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()}",
        rows=tuple(rows),
        load_average=(round(load_start, 2), round(os.getloadavg()[0], 2)),
    )


# -- files ---------------------------------------------------------------------------------------


def read_results(path: Path) -> dict[str, KernelResult]:
    """The results stored in a ``kernel.json`` (``{}`` when the file does not exist)."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {name: KernelResult.from_json(value) for name, value in data.items()}


def load_kernel_curve(path: str | Path, backend: str) -> dict[int, float]:
    """``s(N)`` for ``backend`` from a ``kernel.json`` (or a directory holding one)."""
    p = Path(path)
    if p.is_dir():
        p = p / JSON_NAME
    results = read_results(p)
    if backend not in results:
        raise ConfigError(
            f"{p} has no kernel curve for {backend!r} (it has: {', '.join(results) or 'none'}); "
            f"run: copygram bench kernel --backend {backend}"
        )
    return results[backend].curve()


def _md_row(row: KernelRow) -> str:
    return (
        f"| {row.n} | {row.decode_s * 1e3:.1f} | {row.splice_s * 1e3:.1f} | "
        f"{row.bare_s * 1e3:.1f} | **{row.speedup:.1f}x** | {row.overhead * 100:+.1f}% | "
        f"{row.n / row.splice_s:.0f} | {row.peak_rss_mib:.0f} |"
    )


_MD_HEADER = """# Kernel benchmark: N decode steps vs one splice of N tokens

Produced by `copygram bench kernel` (`src/copygram/bench/kernel.py`); do not edit by hand, rerun
it. After a cached {prompt}-token prompt, for each N: N `decode` calls, one `splice` of the same N
tokens, and the bare stack call a splice wraps, each from the same cache state (truncated back to
the prompt between runs); medians of the repeats. **speedup** = decode / splice is the kernel curve
s(N) that `copygram bench e2e` reads from `docs/kernel.json`; **overhead** = splice / bare - 1 is
what copygram adds on top of the stack (target: <= 5%; at small N it is within timing noise).
Peak RSS is the process's `ru_maxrss` after the row (monotone; includes the loaded model).
A load average above the CPU count means other processes shared the cores: times are inflated and
noisy; measure with `--threads 1` then, since spinning thread pools (llama.cpp, OpenMP) stall when
one of their threads is descheduled, which distorts decode far more than splice.

![s(N)](kernel.png)
"""


def render_markdown(results: dict[str, KernelResult]) -> str:
    prompt = next(iter(results.values())).prompt_tokens if results else PROMPT_TOKENS
    parts = [_MD_HEADER.format(prompt=prompt)]
    for name in sorted(results):
        r = results[name]
        bare = (
            "`Llama.eval(ids)`" if name == "llamacpp" else "`model(ids, cache, logits_to_keep=1)`"
        )
        parts.append(
            f"\n## {name}\n\nModel: {r.model}; {r.repeats} repeats; {r.threads} threads; "
            f"machine: {r.machine}; load average {r.load_average[0]:.1f} -> "
            f"{r.load_average[1]:.1f}; "
            f"bare call: {bare}.\n\n"
            "| N | N decodes (ms) | splice (ms) | bare call (ms) | speedup | overhead | "
            "splice tok/s | peak RSS (MiB) |\n|---|---|---|---|---|---|---|---|\n"
            + "\n".join(_md_row(row) for row in r.rows)
            + "\n"
        )
    return "".join(parts)


def render_plot(results: dict[str, KernelResult], path: Path) -> None:
    """Speedup s(N) and per-token cost for every backend in ``results`` (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for i, name in enumerate(sorted(results)):
        rows = results[name].rows
        ns = [row.n for row in rows]
        colour = f"C{i}"
        left.plot(ns, [row.speedup for row in rows], marker="o", color=colour, label=name)
        right.plot(
            ns,
            [row.decode_s / row.n * 1e3 for row in rows],
            marker="o",
            color=colour,
            label=f"{name}: decode",
        )
        right.plot(
            ns,
            [row.splice_s / row.n * 1e3 for row in rows],
            marker="s",
            color=colour,
            linestyle="--",
            label=f"{name}: splice",
        )
    left.set(
        xscale="log",
        xlabel="N (tokens)",
        ylabel="speedup s(N) = decode / splice",
        title="One splice vs N decode steps",
    )
    right.set(
        xscale="log",
        yscale="log",
        xlabel="N (tokens)",
        ylabel="ms per token",
        title="Cost per token",
    )
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_outputs(result: KernelResult, out: Path) -> dict[str, KernelResult]:
    """Merge ``result`` into ``out/kernel.json`` and regenerate ``kernel.md`` and ``kernel.png``."""
    out.mkdir(parents=True, exist_ok=True)
    results = read_results(out / JSON_NAME)
    results[result.backend] = result
    payload = {name: results[name].to_json() for name in sorted(results)}
    (out / JSON_NAME).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    (out / MD_NAME).write_text(render_markdown(results), encoding="utf-8")
    render_plot(results, out / PNG_NAME)
    return results


# -- CLI -----------------------------------------------------------------------------------------


def _ns(text: str) -> tuple[int, ...]:
    try:
        ns = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--n takes comma-separated integers, got {text!r}"
        ) from None
    if not ns or min(ns) < 1:
        raise argparse.ArgumentTypeError("--n needs at least one positive integer")
    return ns


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", choices=BACKENDS, default="llamacpp")
    parser.add_argument("--model", default="default", help="'default' or a model path")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--n", type=_ns, default=DEFAULT_NS, help="span lengths, e.g. 8,32,128,512")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="default: every CPU")
    parser.add_argument("--prompt-tokens", type=int, default=PROMPT_TOKENS)
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("docs"),
        help="directory for kernel.json/.md/.png (default: docs)",
    )


def run(args: argparse.Namespace) -> int:
    config: dict[str, object] = {
        "backend": args.backend,
        "model": args.model,
        "device": args.device,
    }
    if args.threads:
        config["n_threads"] = args.threads
    backend = load(config)
    print(
        f"copygram bench kernel: {args.backend}, prompt {args.prompt_tokens} tokens, "
        f"{args.repeats} repeats",
        file=sys.stderr,
    )
    model = str(args.model)
    if model == "default":
        from copygram.backends.model import default_model_path

        model = default_model_path().name
    result = measure_kernel(
        backend,
        args.n,
        args.repeats,
        prompt_tokens=args.prompt_tokens,
        model=model,
        threads=args.threads,
        progress=lambda line: print(line, file=sys.stderr),
    )
    results = write_outputs(result, args.out)
    print(render_markdown({args.backend: results[args.backend]}))
    return 0
