"""``copygram bench e2e``: copygram vs full regeneration vs prompt lookup, on real edits.

Per row, in one process and one backend, interleaved row by row:

1. ``copygram``: ``EditSession(backend).replay(before, oracle(before, after))``: the oracle
   program teacher-forced through the real decode loop (constraint, splices), after copygram's
   own prompt;
2. ``full``: the baseline prompt (a chat prompt asking to rewrite the document) is prefilled
   once, then ``after`` is decoded token by token (:func:`~copygram.bench.baselines.full_regeneration`);
3. ``lookup_k{K}``: prompt lookup decoding of ``after`` after the same cached prompt, for each
   ``--k`` (the cache is cut back to the prompt between runs, so each prompt is prefilled once).

Every ``wall_s`` is the generation phase only (prefill excluded). Speedups are over ``full``.
``--repeats R`` runs each row's round R times and keeps each approach's fastest run.
The modelled bound per row is ``(G + sum N_k) / (G + sum N_k / s(N_k))`` with ``G`` the program
tokens copygram decoded, ``N_k`` its copy spans in tokens and ``s(N)`` the kernel curve (one splice
of N tokens vs N decode steps; docs/kernel.json, interpolated in log N).

Cost: with ``--limit 20`` over the five default datasets, ~10 minutes with llama.cpp on 2 CPU
cores. ``--formats-only`` prints the edit-format table of docs/formats.md instead (seconds).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import itertools
import json
import math
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from copygram.bench.baselines import full_regeneration, prompt_lookup
from copygram.bench.data import EditRow, add_data_arguments, rows_from_args
from copygram.errors import ConfigError, CopygramError
from copygram.oracle import CharCost, TokenCost, oracle
from copygram.program import Program
from copygram.stats import RunStats

if TYPE_CHECKING:
    from copygram.backends.base import Backend
    from copygram.session import EditSession

FULL = "full"
COPYGRAM = "copygram"
DEFAULT_KS = (10, 32)
DEFAULT_KERNEL = "docs/kernel.json"

REWRITE_SYSTEM = (
    "You edit documents. Apply the instruction to the document and reply with the whole edited "
    "document, and nothing else."
)


def lookup_name(k: int) -> str:
    return f"lookup_k{k}"


def baseline_prompt(backend: Backend, document: str, instruction: str) -> list[int]:
    """Token ids of the rewrite prompt the baselines start from (the chat template applied)."""
    messages = [
        {"role": "system", "content": REWRITE_SYSTEM},
        {"role": "user", "content": f"Instruction: {instruction.strip()}\n\nDocument:\n{document}"},
    ]
    return backend.tokenize(backend.chat_prompt(messages), special=True)


# --- kernel curve and modelled bound --------------------------------------------------------------


KernelCurve = Mapping[int, float]


def load_curve(path: str | Path, backend: str) -> dict[int, float] | None:
    """``{N: s(N)}`` for ``backend`` from the kernel bench's JSON, or None when absent.

    Uses ``copygram.bench.kernel.load_kernel_curve`` when that module provides it.
    """
    if not Path(path).is_file():
        return None
    try:
        kernel: object = importlib.import_module("copygram.bench.kernel")
    except ImportError:
        kernel = None
    loader = getattr(kernel, "load_kernel_curve", None)
    if callable(loader):
        try:
            curve: dict[int, float] = loader(path, backend)
        except CopygramError as exc:
            print(f"kernel curve: {exc}", file=sys.stderr)
            return None
        return curve
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    table = data.get(backend, data.get("backends", {}).get(backend)) if isinstance(data, dict) \
        else None
    if isinstance(table, dict) and "speedup" in table:
        table = table["speedup"]
    if not isinstance(table, dict):
        return None
    return {int(n): float(s) for n, s in table.items()}


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
    """(numerator, denominator) of the modelled bound for one copygram run."""
    g = float(stats.decoded_tokens)
    spans = stats.copy_span_tokens
    return (g + sum(spans), g + sum(n / curve_at(curve, n) for n in spans if n > 0))


def forward_cost(stats: RunStats, curve: KernelCurve) -> float:
    """The run's modelled time in decode steps: each forward of ``m`` tokens costs
    ``m / s(m)``. Unlike the paper's bound it charges forced markup, verified drafts (accepted or
    not) and every decode, so it says where measured time goes beyond the bound."""
    return sum(m / curve_at(curve, m) for m in stats.forward_tokens)


# --- one row ------------------------------------------------------------------------------------


@dataclass
class RowResult:
    """Every approach's stats on one row (``skipped`` says why a row could not run)."""

    dataset: str
    id: str
    stats: dict[str, RunStats] = field(default_factory=dict)
    skipped: str | None = None
    bound: tuple[float, float] | None = None

    def speedup(self, approach: str) -> float:
        return self.stats[approach].speedup_over(self.stats[FULL])

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {"dataset": self.dataset, "id": self.id}
        if self.skipped:
            out["skipped"] = self.skipped
            return out
        out["output_tokens"] = self.stats[FULL].output_tokens
        out["speedup"] = {name: self.speedup(name) for name in self.stats}
        if self.bound is not None:
            out["modelled_bound"] = self.bound[0] / self.bound[1] if self.bound[1] else None
        out["stats"] = {name: stats.as_dict() for name, stats in self.stats.items()}
        return out


VARIANTS: dict[str, dict[str, object]] = {
    # EditSession keyword arguments of each copygram variant beside the default one; "oracle"
    # picks the program: "tokens" (TokenCost, the default's) or "chars" (CharCost).
    "paper": {"splice_forced": False, "draft": "off", "oracle": "chars"},  # as the paper has it
    "forced": {"draft": "off", "oracle": "chars"},  # + forced markup spliced
    "drafts": {"oracle": "chars"},  # + speculative drafts, still the character oracle
    "compact": {"syntax": "compact"},  # everything, in the compact syntax
    "draft32": {"draft_tokens": 32},  # drafts may grow to 32 tokens, as lookup's k=32
    "noexample": {"prompt_example": False},  # no worked example: a shorter context
}


def variant_name(variant: str) -> str:
    return COPYGRAM if variant == "default" else f"{COPYGRAM}_{variant}"


def make_sessions(backend: Backend, variants: Sequence[str]) -> dict[str, EditSession]:
    """The default copygram session and one per extra variant (see :data:`VARIANTS`)."""
    from copygram.drafting import DraftConfig
    from copygram.prompt import DefaultPromptBuilder
    from copygram.session import EditSession

    sessions = {COPYGRAM: EditSession(backend)}
    for variant in variants:
        if variant not in VARIANTS:
            raise ConfigError(f"unknown variant {variant!r}; choose from {sorted(VARIANTS)}")
        kwargs = {k: v for k, v in VARIANTS[variant].items() if k != "oracle"}
        if kwargs.get("draft") == "off":
            kwargs["draft"] = DraftConfig(max_tokens=0)
        if "draft_tokens" in kwargs:
            kwargs["draft"] = DraftConfig(max_tokens=int(str(kwargs.pop("draft_tokens"))))
        if "prompt_example" in kwargs:
            kwargs["prompt_builder"] = DefaultPromptBuilder(
                with_example=bool(kwargs.pop("prompt_example")))
        sessions[variant_name(variant)] = EditSession(backend, **kwargs)  # type: ignore[arg-type]
    return sessions


def oracle_kind(name: str) -> str:
    """Which oracle the session called ``name`` replays: "tokens" or "chars"."""
    variant = name.removeprefix(f"{COPYGRAM}_") if name != COPYGRAM else "default"
    return str(VARIANTS.get(variant, {}).get("oracle", "tokens"))


def check_repeats(repeats: int) -> None:
    if repeats < 1:
        raise ConfigError(f"repeats must be >= 1, got {repeats}")


def run_row(backend: Backend, session: EditSession | Mapping[str, EditSession], row: EditRow,
            ks: Sequence[int], curve: KernelCurve | None = None, rotate: int = 0,
            repeats: int = 1) -> RowResult:
    """All approaches on one row. The copygram sessions first (each prefills its own prompt),
    then the baseline prompt is prefilled once and the baselines run in an order rotated by
    ``rotate``. With ``repeats`` > 1 the whole round runs again (the baselines' order rotated
    once more each time) and each approach keeps its fastest run: timing noise on a shared
    machine only ever adds time, and a round takes seconds, so every approach sees the same
    machine. The modelled bound is that of the default copygram session's kept run."""
    check_repeats(repeats)
    sessions = session if isinstance(session, Mapping) else {COPYGRAM: session}
    result = RowResult(row.dataset, row.id)
    target = backend.tokenize(row.after) if row.after else []
    prompt = baseline_prompt(backend, row.before, row.instruction)
    if len(prompt) + len(target) + 1 > backend.context_length:
        result.skipped = (f"prompt {len(prompt)} + output {len(target)} tokens exceed n_ctx "
                          f"{backend.context_length}")
        return result
    programs: dict[tuple[str, str], Program] = {}
    runners: list[tuple[str, Callable[[], RunStats]]] = [
        (FULL, functools.partial(full_regeneration, backend, target))]
    runners += [(lookup_name(k), functools.partial(prompt_lookup, backend, prompt, target, k=k))
                for k in ks]

    def keep_fastest(name: str, stats: RunStats) -> None:
        if name not in result.stats or stats.wall_s < result.stats[name].wall_s:
            result.stats[name] = stats

    for attempt in range(repeats):
        for name, variant in sessions.items():
            key = (oracle_kind(name), variant.syntax)
            if key not in programs:
                cost = (TokenCost(backend.tokenize, variant.syntax) if key[0] == "tokens"
                        else CharCost(variant.syntax))
                programs[key] = oracle(row.before, row.after, cost=cost)
            try:
                replay = variant.replay(row.before, programs[key], instruction=row.instruction,
                                        measure_plain=False)
            except CopygramError as exc:
                result.skipped = f"{name} replay failed: {exc}"
                result.stats.clear()
                return result
            keep_fastest(name, replay.copygram)
        shift = (rotate + attempt) % len(runners)
        backend.truncate(0)
        backend.splice(prompt)
        for name, runner in runners[shift:] + runners[:shift]:
            keep_fastest(name, runner())
            backend.truncate(len(prompt))
    if curve is not None:
        result.bound = bound_terms(result.stats[COPYGRAM], curve)
    return result


# --- summary ------------------------------------------------------------------------------------


def approaches(ks: Sequence[int], variants: Sequence[str] = ()) -> list[str]:
    return [FULL, COPYGRAM, *(variant_name(v) for v in variants), *(lookup_name(k) for k in ks)]


def summarize(results: Sequence[RowResult], ks: Sequence[int], variants: Sequence[str] = (),
              curve: KernelCurve | None = None) -> dict[str, object]:
    """One dataset's summary in the ``--json`` layout (see module doc)."""
    done = [r for r in results if not r.skipped]
    summary: dict[str, object] = {}
    full_wall = sum(r.stats[FULL].wall_s for r in done)
    for name in approaches(ks, variants):
        wall = sum(r.stats[name].wall_s for r in done)
        copies = sum(r.stats[name].copy_ops for r in done)
        modelled = (sum(forward_cost(r.stats[name], curve) for r in done)
                    if curve is not None else 0.0)
        summary[name] = {
            "forward_model_speedup": (sum(len(r.stats[FULL].forward_tokens) for r in done)
                                      / modelled if modelled else None),
            "markup_forwards_per_copy": (sum(r.stats[name].markup_forwards for r in done) / copies
                                         if copies else None),
            "pooled_speedup": full_wall / wall if wall > 0 else None,
            "median_speedup": statistics.median(r.speedup(name) for r in done) if done else None,
            "forwards": sum(r.stats[name].forwards for r in done),
            "decoded_tokens": sum(r.stats[name].decoded_tokens for r in done),
            "output_tokens": sum(r.stats[name].output_tokens for r in done),
            "wall_s": wall,
            "rows": len(done),
        }
    lookups = [lookup_name(k) for k in ks]
    beats = [all(r.stats[COPYGRAM].wall_s < r.stats[name].wall_s for name in lookups)
             for r in done]
    summary["copygram_beats_lookup_share"] = sum(beats) / len(beats) if beats else None
    bounds = [r.bound for r in done if r.bound is not None]
    summary["modelled_bound"] = (sum(b[0] for b in bounds) / sum(b[1] for b in bounds)
                                 if bounds and sum(b[1] for b in bounds) else None)
    summary["skipped_rows"] = len(results) - len(done)
    return summary


def summary_table(summaries: Mapping[str, Mapping[str, object]], ks: Sequence[int],
                  variants: Sequence[str] = ()) -> str:
    """Markdown: pooled (median) speedup over full, per dataset and approach."""
    names = approaches(ks, variants)[1:]
    lines = ["| dataset | rows | " + " | ".join(names)
             + " | copygram beats lookup | modelled bound |",
             "|" + "---|" * (len(names) + 4)]
    for dataset, summary in summaries.items():
        cells = []
        for name in names:
            entry = summary[name]
            assert isinstance(entry, dict)
            pooled, median = entry["pooled_speedup"], entry["median_speedup"]
            cells.append(f"{pooled:.2f}x ({median:.2f}x)" if pooled and median else "-")
        full = summary[FULL]
        assert isinstance(full, dict)
        share, bound = summary["copygram_beats_lookup_share"], summary["modelled_bound"]
        share_text = f"{share:.0%}" if isinstance(share, float) else "-"
        bound_text = f"{bound:.2f}x" if isinstance(bound, float) else "-"
        lines.append(f"| {dataset} | {full['rows']} | " + " | ".join(cells)
                     + f" | {share_text} | {bound_text} |")
    return "\n".join(lines) + "\n"


# --- plots --------------------------------------------------------------------------------------


def write_plots(directory: Path, results: Mapping[str, Sequence[RowResult]],
                summaries: Mapping[str, Mapping[str, object]], ks: Sequence[int]) -> list[Path]:
    """``speedup_by_dataset.png`` and ``speedup_vs_length.png`` (matplotlib, Agg)."""
    try:
        import matplotlib
    except ImportError as exc:
        from copygram.errors import missing_dependency

        raise missing_dependency("matplotlib", "bench") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    names = approaches(ks)[1:]
    datasets = list(summaries)
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(datasets)), 4))
    width = 0.8 / len(names)
    for index, name in enumerate(names):
        values = []
        for dataset in datasets:
            entry = summaries[dataset][name]
            assert isinstance(entry, dict)
            values.append(entry["pooled_speedup"] or 0.0)
        ax.bar([d + index * width for d in range(len(datasets))], values, width, label=name)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks([d + width * (len(names) - 1) / 2 for d in range(len(datasets))])
    ax.set_xticklabels(datasets, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("pooled speedup over full regeneration")
    ax.legend(fontsize=8)
    fig.tight_layout()
    by_dataset = directory / "speedup_by_dataset.png"
    fig.savefig(by_dataset, dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    for name in names:
        points = [(r.stats[FULL].output_tokens, r.speedup(name))
                  for rows in results.values() for r in rows if not r.skipped]
        ax.scatter([p[0] for p in points], [p[1] for p in points], s=10, label=name, alpha=0.7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xlabel("output tokens (after)")
    ax.set_ylabel("speedup over full regeneration")
    ax.legend(fontsize=8)
    fig.tight_layout()
    by_length = directory / "speedup_vs_length.png"
    fig.savefig(by_length, dpi=120)
    plt.close(fig)
    return [by_dataset, by_length]


# --- command ------------------------------------------------------------------------------------


def _parse_ks(text: str) -> list[int]:
    try:
        ks = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(f"--k takes comma-separated positive ints, got {text!r}") from None
    if not ks or any(k <= 0 for k in ks):
        raise ConfigError(f"--k takes comma-separated positive ints, got {text!r}")
    return ks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # 120 lines keeps `--limit 20` over the five default sets within ~15 minutes on 2 cores.
    add_data_arguments(parser, default_max_lines=120)
    parser.add_argument("--backend", default="llamacpp", choices=("llamacpp", "transformers"))
    parser.add_argument("--model", default="default", help="GGUF path (default: SmolLM2-135M)")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--n-threads", type=int, default=None,
                        help="CPU threads (default: the backend's). On a busy machine use 1: "
                             "llama.cpp threads that wait for a core slow decoding ~30x")
    parser.add_argument("--k", default="10,32", help="prompt lookup draft sizes (default 10,32)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="run every row this many times, approaches interleaved, and keep "
                             "each approach's fastest run (default 1; the time grows with it)")
    parser.add_argument("--variants", default="",
                        help="extra copygram variants run beside the default one, comma-separated: "
                             + ", ".join(f"{k} ({v})" for k, v in VARIANTS.items()))
    parser.add_argument("--kernel", default=DEFAULT_KERNEL,
                        help=f"kernel curve JSON for the modelled bound (default {DEFAULT_KERNEL})")
    parser.add_argument("--json", default=None, help="write the per-dataset summary here")
    parser.add_argument("--out", default=None, help="write rows.jsonl (one line per row) here")
    parser.add_argument("--plots", default=None, help="write PNG plots into this folder")
    parser.add_argument("--formats-only", action="store_true",
                        help="print the edit-format table (docs/formats.md) and exit")
    parser.add_argument("--peers", type=int, default=0, metavar="N",
                        help="also run real peer implementations on the first N rows per dataset")


def run(args: argparse.Namespace) -> int:
    rows = rows_from_args(args)
    if args.formats_only:
        return _run_formats(args, rows)
    ks = _parse_ks(args.k)
    check_repeats(args.repeats)  # before the model loads
    from copygram.backends import load

    config: dict[str, object] = {"backend": args.backend, "model": args.model,
                                 "n_ctx": args.n_ctx}
    if args.n_threads:
        config["n_threads"] = args.n_threads
    backend = load(config)
    variants = [v for v in args.variants.split(",") if v.strip()]
    sessions = make_sessions(backend, variants)
    curve = load_curve(args.kernel, backend.name)
    if curve is None:
        print(f"no kernel curve for {backend.name} in {args.kernel}: modelled bound omitted",
              file=sys.stderr)
    out_dir = Path(args.out) if args.out else None
    rows_file = None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        rows_file = (out_dir / "rows.jsonl").open("w", encoding="utf-8")
    results: dict[str, list[RowResult]] = {}
    summaries: dict[str, dict[str, object]] = {}
    started = time.perf_counter()
    try:
        for dataset, dataset_rows in rows.items():
            results[dataset] = []
            for index, row in enumerate(dataset_rows):
                result = run_row(backend, sessions, row, ks, curve, rotate=index,
                                 repeats=args.repeats)
                results[dataset].append(result)
                if rows_file is not None:
                    rows_file.write(json.dumps(result.as_json()) + "\n")
                    rows_file.flush()
                _progress(result, ks, time.perf_counter() - started)
            summaries[dataset] = summarize(results[dataset], ks, variants, curve)
    finally:
        if rows_file is not None:
            rows_file.close()
    print(summary_table(summaries, ks, variants), end="")
    if args.json:
        Path(args.json).write_text(json.dumps(summaries, indent=1) + "\n", encoding="utf-8")
    if args.plots:
        for path in write_plots(Path(args.plots), results, summaries, ks):
            print(f"wrote {path}", file=sys.stderr)
    if args.peers:
        from copygram.bench.peers import peer_table, run_peers

        peer_rows = [row for dataset_rows in rows.values() for row in dataset_rows[:args.peers]]
        print(peer_table(run_peers(backend, peer_rows, ks[0])), end="")
    return 0


def _progress(result: RowResult, ks: Sequence[int], elapsed: float) -> None:
    if result.skipped:
        text = f"skipped: {result.skipped}"
    else:
        text = " ".join(f"{name}={result.speedup(name):.2f}x" for name in result.stats
                        if name != FULL)
        text += f" N={result.stats[FULL].output_tokens}"
    print(f"[{elapsed:6.0f}s] {result.dataset} {result.id}: {text}", file=sys.stderr)


def _run_formats(args: argparse.Namespace, rows: Mapping[str, Sequence[EditRow]]) -> int:
    from dataclasses import asdict

    from copygram.bench import formats

    count = formats.vocab_token_counter(None if args.model == "default" else args.model)
    summaries = [formats.summarize(dataset, [formats.compare_formats(r.before, r.after, count)
                                             for r in dataset_rows])
                 for dataset, dataset_rows in rows.items()]
    print(formats.markdown_table(summaries), end="")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(s) for s in summaries], indent=1) + "\n",
                                   encoding="utf-8")
    return 0
