"""``copygram bench e2e``: copygram vs full regeneration vs prompt lookup, on real edits.

Per row, in one process and one backend, interleaved row by row:

1. ``copygram``: ``replay(EditSession(backend, syntax="lines"), before, oracle(before,
   after))``: the oracle program (copy tags) teacher-forced through the real decode loop
   (constraint, splices), after copygram's own prompt;
2. ``full``: the baseline prompt (a chat prompt asking to rewrite the document) is prefilled
   once, then ``after`` is decoded token by token (:func:`~copygram.bench.baselines.full_regeneration`);
3. ``lookup_k{K}``: prompt lookup decoding of ``after`` after the same cached prompt, for each
   ``--k`` (the cache is cut back to the prompt between runs, so each prompt is prefilled once);
4. ``rewrite_mode``: copygram's rewrite mode writing ``after`` after the same prompt (rewrite
   mode's prompt is the baseline's), the document as its draft
   (:func:`~copygram.bench.replay.replay_rewrite`: its real loop, teacher-forced).

Every ``wall_s`` is the generation phase only (prefill excluded). Speedups are over ``full``.
``--repeats R`` runs each row's round R times and keeps each approach's fastest run.
The modelled bound per row is ``(G + sum N_k) / (G + sum N_k / s(N_k))`` with ``G`` the program
tokens copygram decoded, ``N_k`` its copy spans in tokens and ``s(N)`` the kernel curve (one splice
of N tokens vs N decode steps; docs/kernel.json, interpolated in log N).

The rows come from ``--data DIR`` or ``$COPYGRAM_DATA`` (:mod:`copygram.bench.data`). Cost: with
``--limit 20`` over the five default datasets, ~10 minutes with llama.cpp on 2 CPU cores.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from copygram.bench.baselines import baseline_prompt, full_regeneration, prompt_lookup
from copygram.bench.data import EditRow, add_data_arguments, rows_from_args
from copygram.bench.kernel import KernelCurve, bound_terms, forward_cost, load_kernel_curve
from copygram.bench.model_args import add_device_arguments
from copygram.bench.plots import speedup_plots
from copygram.bench.replay import replay, replay_rewrite
from copygram.config import BackendConfig
from copygram.decode.stats import RunStats
from copygram.errors import ConfigError, CopygramError
from copygram.language.ops import Program
from copygram.language.oracle import CharCost, TokenCost, oracle
from copygram.language.syntaxes import DEFAULT_TAGS

if TYPE_CHECKING:
    from copygram.backends.base import Backend
    from copygram.session import EditSession

FULL = "full"
COPYGRAM = "copygram"
REWRITE_MODE = "rewrite_mode"
DEFAULT_KS = (10, 32)
DEFAULT_KERNEL = "docs/kernel.json"


def lookup_name(k: int) -> str:
    return f"lookup_k{k}"


def load_curve(path: str | Path, backend: str) -> dict[int, float] | None:
    """``{N: s(N)}`` for ``backend`` from the kernel bench's JSON, or None when the file is absent
    or has no curve for ``backend`` (said on stderr)."""
    if not Path(path).is_file():
        return None
    try:
        return load_kernel_curve(path, backend)
    except CopygramError as exc:
        print(f"kernel curve: {exc}", file=sys.stderr)
        return None


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
    # The options of each copygram variant beside the default one; "oracle" picks the program:
    # "tokens" (TokenCost, the default's) or "chars" (CharCost).
    "paper": {"splice_forced": False, "draft_tokens": 0, "oracle": "chars"},  # the paper's
    "forced": {"draft_tokens": 0, "oracle": "chars"},  # + forced markup spliced
    "drafts": {"oracle": "chars"},  # + speculative drafts, still the character oracle
    "compact": {"syntax": "compact"},  # everything, in the compact syntax
    "draft32": {"draft_tokens": 32},  # drafts may grow to 32 tokens, as lookup's k=32
    "noexample": {"prompt_example": False},  # no worked example: a shorter context
}


def variant_name(variant: str) -> str:
    return COPYGRAM if variant == "default" else f"{COPYGRAM}_{variant}"


def make_sessions(backend: Backend, variants: Sequence[str]) -> dict[str, EditSession]:
    """The default copygram session and one per extra variant (see :data:`VARIANTS`)."""
    from copygram.config import SessionConfig
    from copygram.session import EditSession

    # The oracle writes copy tags, and replay teacher-forces them: every session writes the tag
    # syntax (unless a variant names another), not program mode's default, head blocks.
    sessions = {COPYGRAM: EditSession(backend, syntax=DEFAULT_TAGS)}
    for variant in variants:
        if variant not in VARIANTS:
            raise ConfigError(f"unknown variant {variant!r}; choose from {sorted(VARIANTS)}")
        options = {"syntax": DEFAULT_TAGS,
                   **{k: v for k, v in VARIANTS[variant].items() if k != "oracle"}}
        sessions[variant_name(variant)] = EditSession(backend, SessionConfig().replace(**options))
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
    rewriter = next(iter(sessions.values())).derive(mode="rewrite")

    def rewrite_mode() -> RunStats:
        return replay_rewrite(rewriter, row.before, row.after,
                              instruction=row.instruction).stats

    runners.append((REWRITE_MODE, rewrite_mode))

    def keep_fastest(name: str, stats: RunStats) -> None:
        if name not in result.stats or stats.wall_s < result.stats[name].wall_s:
            result.stats[name] = stats

    for attempt in range(repeats):
        for name, variant in sessions.items():
            key = (oracle_kind(name), variant.options.syntax)
            if key not in programs:
                cost = (TokenCost(backend.tokenize, key[1]) if key[0] == "tokens"
                        else CharCost(key[1]))
                programs[key] = oracle(row.before, row.after, cost=cost)
            try:
                replayed = replay(variant, row.before, programs[key],
                                  instruction=row.instruction, measure_plain=False)
            except CopygramError as exc:
                result.skipped = f"{name} replay failed: {exc}"
                result.stats.clear()
                return result
            keep_fastest(name, replayed.copygram)
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
    return [FULL, COPYGRAM, *(variant_name(v) for v in variants), *(lookup_name(k) for k in ks),
            REWRITE_MODE]


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


def write_plots(directory: Path, results: Mapping[str, Sequence[RowResult]],
                summaries: Mapping[str, Mapping[str, object]], ks: Sequence[int]) -> list[Path]:
    """``speedup_by_dataset.png`` and ``speedup_vs_length.png`` in ``directory``."""
    pooled: dict[str, dict[str, float]] = {}
    points: dict[str, list[tuple[int, float]]] = {}
    for name in approaches(ks)[1:]:
        pooled[name] = {}
        for dataset, summary in summaries.items():
            entry = summary[name]
            assert isinstance(entry, dict)
            pooled[name][dataset] = float(entry["pooled_speedup"] or 0.0)
        points[name] = [(r.stats[FULL].output_tokens, r.speedup(name))
                        for rows in results.values() for r in rows if not r.skipped]
    return speedup_plots(directory, pooled, points)


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
    add_device_arguments(parser)
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
    parser.add_argument("--peers", type=int, default=0, metavar="N",
                        help="also run real peer implementations on the first N rows per dataset")


def run(args: argparse.Namespace) -> int:
    rows = rows_from_args(args)
    ks = _parse_ks(args.k)
    check_repeats(args.repeats)  # before the model loads
    from copygram.backends import load

    config = BackendConfig(backend=args.backend, model=args.model, device=args.device,
                           dtype=args.dtype, n_ctx=args.n_ctx, n_threads=args.n_threads)
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
        print(peer_table(run_peers(backend, config, peer_rows, ks[0])), end="")
    return 0


def _progress(result: RowResult, ks: Sequence[int], elapsed: float) -> None:
    if result.skipped:
        text = f"skipped: {result.skipped}"
    else:
        text = " ".join(f"{name}={result.speedup(name):.2f}x" for name in result.stats
                        if name != FULL)
        text += f" N={result.stats[FULL].output_tokens}"
    print(f"[{elapsed:6.0f}s] {result.dataset} {result.id}: {text}", file=sys.stderr)
