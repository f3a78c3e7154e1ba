"""``copygram bench kernel``: N greedy decode steps vs one splice of the same N tokens.

After a cached prompt (200 tokens by default), for each N the benchmark times N ``decode`` calls
and one ``splice`` of the same N tokens, truncating back to the prompt between runs; everything
goes through the :class:`~copygram.backends.base.Backend` protocol. The speedup
``s(N) = decode / splice`` is the kernel curve the end-to-end benchmark reuses
(:func:`load_kernel_curve`, :func:`curve_at`) to model what a run's forwards should cost.

Results merge into ``docs/kernel.json`` (keyed by backend); ``docs/kernel.md`` and
``docs/kernel.png`` are regenerated from that file, so each backend's section is replaced in place.
Cost: ~1 min for llama.cpp and ~3 min for transformers on 2 CPU cores with the defaults.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from copygram.backends import BACKENDS, Backend, load
from copygram.backends.curves import read_kernel_points
from copygram.bench.plots import kernel_plot
from copygram.config import BackendConfig
from copygram.decode.stats import RunStats
from copygram.errors import ConfigError
from copygram.host import cpu_info

DEFAULT_NS = (8, 32, 128, 512)
PROMPT_TOKENS = 200
JSON_NAME, MD_NAME, PNG_NAME = "kernel.json", "kernel.md", "kernel.png"


@dataclass(frozen=True)
class KernelRow:
    """Medians over the repeats for one span length ``n`` (seconds; RSS in MiB)."""

    n: int
    decode_s: float
    splice_s: float
    speedup: float
    """``decode_s / splice_s``: how much faster one splice is than N decode steps."""
    peak_rss_mib: float
    """Process peak RSS after this row (``ru_maxrss``; monotone, includes the loaded model)."""
    verify_s: float | None = None
    """One forward of the same N tokens keeping every row's logits (``splice_all``), as a draft's
    verification does; ``None`` in files written before it was measured. It costs more than a
    splice where the LM head is dear (SmolLM2-135M on Transformers: a vocabulary of 49152 over
    576 dimensions, ~0.65 ms a row on 2 vCPUs), and it is what a draft's forward costs."""


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
    build: str = ""
    """What the backend's build compiled in, where it says (llama.cpp: ``AVX2 AVX512 ...``): a
    build for the CPU's widest instructions batches cheaper than a portable one."""

    def curve(self) -> dict[int, float]:
        """The kernel curve ``s(N)``: span length -> speedup of one splice over N decodes."""
        return {row.n: row.speedup for row in self.rows}

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KernelResult:
        # Files written before a column was dropped (the bare stack call) still read.
        fields = {f.name for f in dataclasses.fields(KernelRow)}
        rows = tuple(KernelRow(**{k: v for k, v in row.items() if k in fields})
                     for row in data["rows"])
        load = tuple(data.get("load_average", (0.0, 0.0)))
        return cls(**{**data, "rows": rows, "load_average": (float(load[0]), float(load[1]))})


def _peak_rss_mib() -> float:
    # ru_maxrss is KiB on Linux and bytes on macOS.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def text_token_ids(backend: Backend) -> npt.NDArray[np.int64]:
    """The ids of ordinary text tokens: every id with bytes (special tokens have none)."""
    return np.flatnonzero([bool(piece) for piece in backend.token_bytes()]).astype(np.int64)


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
    """Time N decode steps, one splice and one verify forward (every row's logits) for each N in
    ``ns``; medians of ``repeats`` runs.

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
    vocabulary = text_token_ids(backend)

    def random_ids(n: int) -> list[int]:
        return [int(i) for i in rng.choice(vocabulary, n)]

    prompt = random_ids(prompt_tokens)
    backend.truncate(0)
    backend.splice(prompt)

    def reset() -> None:
        backend.truncate(prompt_tokens)

    # Warm-up: first calls allocate buffers and compute graphs.
    warm = random_ids(8)
    _time(lambda: backend.splice(warm), reset)
    _time(lambda: backend.decode(warm[0]), reset)

    rows = []
    for n in ns:
        span = random_ids(n)
        decode_t, splice_t, verify_t = [], [], []
        for _ in range(repeats):
            # Interleaved, so that a slow stretch of the machine hits all three alike.
            decode_t.append(_time(partial(_decode_each, backend, span), reset))
            splice_t.append(_time(partial(backend.splice, span), reset))
            verify_t.append(_time(partial(backend.splice_all, span), reset))
        d, s = statistics.median(decode_t), statistics.median(splice_t)
        row = KernelRow(n, d, s, d / s, _peak_rss_mib(), statistics.median(verify_t))
        rows.append(row)
        if progress is not None:
            progress(_md_row(row))
    described = backend.describe()
    return KernelResult(
        backend=backend.name,
        model=model,
        prompt_tokens=prompt_tokens,
        repeats=repeats,
        threads=threads or os.cpu_count() or 1,
        # A GPU's forwards are the GPU's: name it, not the host CPU that fed it.
        machine=str(described.get("accelerator") or cpu_info().describe()),
        rows=tuple(rows),
        load_average=(round(load_start, 2), round(os.getloadavg()[0], 2)),
        build=_build(described),
    )


def _build(described: Mapping[str, object]) -> str:
    """The build's features, and whether the kernels run batch-invariant (their cost differs)."""
    build = str(described.get("build", ""))
    if "batch_invariant" not in described or not build:
        return build
    return f"{build}; batch-invariant {'on' if described['batch_invariant'] else 'off'}"


# -- the curve and the costs modelled with it ------------------------------------------------------


KernelCurve = Mapping[int, float]


def curve_at(curve: KernelCurve, n: int) -> float:
    """``s(n)``, linear in ``log n`` between measured points; ``s(1) = 1`` (a one-token splice
    is a decode step); flat beyond the last point."""
    points = sorted({1: 1.0, **curve}.items())
    if n <= points[0][0]:
        return points[0][1]
    for (n0, s0), (n1, s1) in itertools.pairwise(points):
        if n <= n1:
            t = (math.log(n) - math.log(n0)) / (math.log(n1) - math.log(n0))
            return s0 + t * (s1 - s0)
    return points[-1][1]


def bound_terms(stats: RunStats, curve: KernelCurve) -> tuple[float, float]:
    """(numerator, denominator) of the paper's modelled bound for one copygram run:
    ``(G + sum N_k, G + sum N_k / s(N_k))``, ``G`` the decoded tokens, ``N_k`` the copy spans."""
    g = float(stats.decoded_tokens)
    spans = stats.copy_span_tokens
    return (g + sum(spans), g + sum(n / curve_at(curve, n) for n in spans if n > 0))


def forward_cost(stats: RunStats, curve: KernelCurve) -> float:
    """The run's modelled time in decode steps: each forward of ``m`` tokens costs
    ``m / s(m)``. Unlike the paper's bound it charges forced markup, verified drafts (accepted or
    not) and every decode, so it says where measured time goes beyond the bound."""
    return sum(m / curve_at(curve, m) for m in stats.forward_tokens)


# -- files ---------------------------------------------------------------------------------------


def read_results(path: Path) -> dict[str, KernelResult]:
    """The results stored in a ``kernel.json`` (``{}`` when the file does not exist)."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {name: KernelResult.from_json(value) for name, value in data.items()}


def load_kernel_curve(path: str | Path, backend: str) -> dict[int, float]:
    """``s(N)`` (N decodes over one splice of N tokens) for ``backend`` from a ``kernel.json``
    (or a directory holding one), read by the one reader of that file's rows
    (:func:`~copygram.backends.curves.read_kernel_points`)."""
    return {p.n: p.decode_s / p.splice_s for p in read_kernel_points(path, backend)}


def _md_row(row: KernelRow) -> str:
    verify = "-" if row.verify_s is None else f"{row.verify_s * 1e3:.1f}"
    return (
        f"| {row.n} | {row.decode_s * 1e3:.1f} | {row.splice_s * 1e3:.1f} | "
        f"**{row.speedup:.1f}x** | {row.n / row.splice_s:.0f} | {verify} | "
        f"{row.peak_rss_mib:.0f} |"
    )


_MD_HEADER = """# Kernel benchmark: N decode steps vs one splice of N tokens

Produced by `copygram bench kernel` (`src/copygram/bench/kernel.py`); do not edit by hand, rerun
it. After a cached {prompt}-token prompt, for each N: N `decode` calls and one `splice` of the
same N tokens, each from the same cache state (truncated back to the prompt between runs); medians
of the repeats. **speedup** = decode / splice is the kernel curve s(N) that `copygram bench e2e`
reads from `docs/kernel.json`. **verify** is one forward of the same N tokens that keeps every
row's logits (`splice_all`), as a draft's verification does: the cost curve (config key
`cost_curve`) prices drafts on it.
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
        parts.append(
            f"\n## {name}\n\nModel: {r.model}; {r.repeats} repeats; {r.threads} threads; "
            f"machine: {r.machine}; {f'build: {r.build}; ' if r.build else ''}"
            f"load average {r.load_average[0]:.1f} -> "
            f"{r.load_average[1]:.1f}.\n\n"
            "| N | N decodes (ms) | splice (ms) | speedup | splice tok/s | verify (ms) | "
            "peak RSS (MiB) |\n"
            "|---|---|---|---|---|---|---|\n"
            + "\n".join(_md_row(row) for row in r.rows)
            + "\n"
        )
    return "".join(parts)


def write_outputs(result: KernelResult, out: Path) -> dict[str, KernelResult]:
    """Merge ``result`` into ``out/kernel.json`` and regenerate ``kernel.md`` and ``kernel.png``."""
    out.mkdir(parents=True, exist_ok=True)
    results = read_results(out / JSON_NAME)
    results[result.backend] = result
    payload = {name: results[name].to_json() for name in sorted(results)}
    (out / JSON_NAME).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    (out / MD_NAME).write_text(render_markdown(results), encoding="utf-8")
    kernel_plot({name: [(row.n, row.speedup, row.decode_s / row.n * 1e3,
                         row.splice_s / row.n * 1e3) for row in r.rows]
                 for name, r in results.items()}, out / PNG_NAME)
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
    parser.add_argument("--model", default="default",
                        help="a catalog name ('default': SmolLM2-135M) or a model path")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--n", type=_ns, default=DEFAULT_NS, help="span lengths, e.g. 8,32,128,512")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="default: every CPU")
    parser.add_argument("--prompt-tokens", type=int, default=PROMPT_TOKENS)
    parser.add_argument("--batch-invariant", choices=("auto", "true", "false"), default="auto",
                        help="llama.cpp on a CPU: batch-invariant kernels (config key "
                             "batch_invariant; default auto): their forwards cost differently")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("docs"),
        help="directory for kernel.json/.md/.png (default: docs)",
    )


def model_label(config: BackendConfig) -> str:
    """How results name the model: the file name of a catalog model, else the setting."""
    if config.is_catalog_model:
        from copygram.catalog import resolve_model

        return resolve_model(config.model, progress=None).name
    return Path(config.model).name


def run(args: argparse.Namespace) -> int:
    choice = getattr(args, "batch_invariant", "auto")
    invariant: bool | Literal["auto"] = "auto" if choice == "auto" else choice == "true"
    config = BackendConfig(backend=args.backend, model=args.model, device=args.device,
                           n_threads=args.threads,
                           batch_invariant=invariant if args.backend == "llamacpp" else "auto")
    backend = load(config)
    print(
        f"copygram bench kernel: {args.backend}, prompt {args.prompt_tokens} tokens, "
        f"{args.repeats} repeats",
        file=sys.stderr,
    )
    result = measure_kernel(
        backend,
        args.n,
        args.repeats,
        prompt_tokens=args.prompt_tokens,
        model=model_label(config),
        threads=args.threads,
        progress=lambda line: print(line, file=sys.stderr),
    )
    results = write_outputs(result, args.out)
    print(render_markdown({args.backend: results[args.backend]}))
    return 0
