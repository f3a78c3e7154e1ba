"""Pooling ``bench quality``'s rows per dataset and approach (the ``--json`` layout), the
per-row speed comparisons (:data:`SPEED_PAIRS`), the markdown tables, and the pass-rate plot.

Rewrite mode's entry also gets ``bound_speedup`` (its outputs' tokens over the steps a perfect
drafter would spend on them, :mod:`copygram.bench.quality.bound`) and ``measured_over_bound``
(its generation speedup against the plain rewrite over that bound)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from copygram.bench.quality.scoring import LOOKUP, REWRITE, REWRITE_MODE, RowQuality

__all__ = ["ALL_DATASETS", "SPEED_PAIRS", "Pooled", "markdown_table", "pool", "write_plot"]

SPEED_PAIRS: tuple[tuple[str, str], ...] = (
    (REWRITE_MODE, REWRITE), (REWRITE_MODE, LOOKUP), (LOOKUP, REWRITE))
"""``(approach, reference)``: the approach's entry gets ``faster_than_<reference>`` (rows where
its wall time was below the reference's on the same row), ``compared_with_<reference>`` (rows
both ran, neither crashing) and ``speedup_vs_<reference>`` (the reference's summed wall time over
the approach's, on those rows), where both ran; and the same on generation time alone (prompt
prefill excluded): ``gen_faster_than_<reference>``, ``gen_speedup_vs_<reference>``, over the rows
where both report it."""


Pooled = dict[str, dict[str, dict[str, float | int | None]]]


ALL_DATASETS = "all"
"""The :func:`pool` entry of every row of every dataset, where rows of more than one ran."""


def pool(rows: Sequence[RowQuality]) -> Pooled:
    """``{dataset: {approach: {...}}}`` (module doc), in order of first appearance, then
    :data:`ALL_DATASETS` (every row pooled) when rows of more than one dataset are given."""
    groups: dict[str, dict[str, list[RowQuality]]] = {}
    for quality in rows:
        groups.setdefault(quality.dataset, {}).setdefault(quality.approach, []).append(quality)
    if len(groups) > 1:
        for quality in rows:
            groups.setdefault(ALL_DATASETS, {}).setdefault(quality.approach, []).append(quality)
    pooled: Pooled = {}
    for dataset, approaches in groups.items():
        pooled[dataset] = {}
        for name, group in approaches.items():
            valid = [q for q in group if q.valid]
            tested = [q for q in group if q.passed is not None]
            compared = [q for q in group if q.same_as_rewrite is not None]
            timed = [q.gen_s for q in group if q.gen_s is not None]
            repeated = [q for q in group if q.reproduced is not None]
            pooled[dataset][name] = {
                "pass": sum(bool(q.passed) for q in tested) if tested else None,
                "exact": sum(q.exact for q in group),
                "valid": len(valid),
                "rows": len(group),
                "tested": len(tested),
                "sim": sum(q.similarity for q in group) / len(group),
                "wall_s": sum(q.wall_s for q in group),
                "gen_s": sum(timed) if timed else None,
                "unchanged": sum(q.unchanged for q in group),
                "crashed": sum(q.crashed for q in group),
                "decoded_tokens": sum(q.decoded_tokens for q in group),
                "sim_valid": (sum(q.similarity for q in valid) / len(valid)) if valid else None,
                "forwards": sum(q.forwards for q in group),
                "unchanged_retries": sum(q.unchanged_retries for q in group),
                "damaged": sum(bool(q.damage) for q in group),
                "redone": sum(bool(q.redone) for q in group),
                "accepted_prediction_tokens": sum(q.accepted_prediction_tokens for q in group),
                "rejected_prediction_tokens": sum(q.rejected_prediction_tokens for q in group),
                "same_as_rewrite": (sum(bool(q.same_as_rewrite) for q in compared)
                                    if compared else None),
                "repeats": max(q.repeats for q in group),
                "reproduced": (sum(bool(q.reproduced) for q in repeated)
                               if repeated else None),
            }
            bounded = [q for q in group if q.bound_steps]
            if bounded:
                pooled[dataset][name]["bound_speedup"] = (
                    sum(q.output_tokens for q in bounded)
                    / sum(q.bound_steps or 0.0 for q in bounded))
        for name, reference in SPEED_PAIRS:
            if name in approaches and reference in approaches:
                pooled[dataset][name].update(
                    _speed(approaches[name], approaches[reference], reference))
        mode = pooled[dataset].get(REWRITE_MODE)
        if mode is not None:
            measured, bound = mode.get(f"gen_speedup_vs_{REWRITE}"), mode.get("bound_speedup")
            if measured is not None and bound:
                mode["measured_over_bound"] = measured / bound
    return pooled


def _speed(mine: Sequence[RowQuality], theirs: Sequence[RowQuality],
           reference: str) -> dict[str, float | int | None]:
    """Wall time and generation time row by row (paired by row id) against ``reference``'s
    (see :data:`SPEED_PAIRS`); a crashed row is no measure of speed and is left out."""
    walls = {(q.dataset, q.row_id): q for q in theirs if not q.crashed}
    pairs = [(q, walls[q.dataset, q.row_id]) for q in mine
             if not q.crashed and (q.dataset, q.row_id) in walls]
    gens = [(q.gen_s, other.gen_s) for q, other in pairs
            if q.gen_s is not None and other.gen_s is not None]
    return {f"faster_than_{reference}": sum(q.wall_s < other.wall_s for q, other in pairs),
            f"compared_with_{reference}": len(pairs),
            f"speedup_vs_{reference}": _ratio([(q.wall_s, other.wall_s) for q, other in pairs]),
            f"gen_faster_than_{reference}": sum(own < other for own, other in gens),
            f"gen_compared_with_{reference}": len(gens),
            f"gen_speedup_vs_{reference}": _ratio(gens)}


def _ratio(pairs: Sequence[tuple[float, float]]) -> float | None:
    """The references' summed time over the approach's (pairs of ``(own, reference)``)."""
    own = sum(mine for mine, _ in pairs)
    return sum(other for _, other in pairs) / own if own > 0 else None


def _count(entry: Mapping[str, float | int | None], key: str, of: str = "rows") -> str:
    value, rows = entry.get(key), entry.get(of)
    if value is None or not rows:
        return "-"
    return f"{int(value)}/{int(rows)}"


def markdown_table(pooled: Pooled) -> str:
    """One line per dataset and approach: pass, exact, valid, unchanged, crashes, outputs the
    damage check flags and program edits it had redone in rewrite mode (as n/rows), mean
    similarity and the summed wall time."""
    lines = [("| dataset | approach | pass | exact | valid | unchanged | crashed | damaged "
              "| redone | sim | wall s |"),
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for dataset, approaches in pooled.items():
        for name, entry in approaches.items():
            sim = entry.get("sim")
            wall = entry.get("wall_s")
            lines.append(
                f"| {dataset} | {name} | {_count(entry, 'pass', 'tested')} | {_count(entry, 'exact')} "
                f"| {_count(entry, 'valid')} | {_count(entry, 'unchanged')} "
                f"| {_count(entry, 'crashed')} | {_count(entry, 'damaged')} "
                f"| {_count(entry, 'redone')} "
                f"| {'-' if sim is None else f'{sim:.3f}'} "
                f"| {'-' if wall is None else f'{wall:.1f}'} |")
    return ("\n".join(lines) + "\n" + _cost_table(pooled) + _speed_table(pooled)
            + _repeat_table(pooled))


def _cost_table(pooled: Pooled) -> str:
    """What each approach that reports forwards spent: forwards, tokens decoded one forward at a
    time, prediction tokens accepted and rejected (rewrite mode), and for rewrite mode how many
    rows wrote exactly the baseline's output. Empty when no approach reports forwards."""
    lines = []
    for dataset, approaches in pooled.items():
        for name, entry in approaches.items():
            if not entry.get("forwards"):
                continue
            same = _count(entry, "same_as_rewrite")
            lines.append(
                f"| {dataset} | {name} | {int(entry.get('forwards') or 0)} "
                f"| {int(entry.get('decoded_tokens') or 0)} "
                f"| {int(entry.get('accepted_prediction_tokens') or 0)} "
                f"| {int(entry.get('rejected_prediction_tokens') or 0)} | {same} |")
    if not lines:
        return ""
    return ("\n| dataset | approach | forwards | decoded | accepted prediction "
            "| rejected prediction | same as rewrite |\n|---|---|---|---|---|---|---|\n"
            + "\n".join(lines) + "\n")


def _speed_table(pooled: Pooled) -> str:
    """Per dataset, each :data:`SPEED_PAIRS` comparison that ran: the rows where the approach was
    faster than the reference (of the rows both ran) and the pooled speedup. Empty if none."""
    lines = []
    for dataset, approaches in pooled.items():
        for name, reference in SPEED_PAIRS:
            entry = approaches.get(name, {})
            compared = entry.get(f"compared_with_{reference}")
            if compared is None:
                continue
            speedup = entry.get(f"speedup_vs_{reference}")
            gen_compared = entry.get(f"gen_compared_with_{reference}") or 0
            gen_speedup = entry.get(f"gen_speedup_vs_{reference}")
            gen_rows = (f"{int(entry.get(f'gen_faster_than_{reference}') or 0)}"
                        f"/{int(gen_compared)}" if gen_compared else "-")
            bound = entry.get("bound_speedup") if reference == REWRITE else None
            share = entry.get("measured_over_bound") if reference == REWRITE else None
            lines.append(
                f"| {dataset} | {name} | {reference} "
                f"| {int(entry.get(f'faster_than_{reference}') or 0)}/{int(compared)} "
                f"| {'-' if speedup is None else f'{speedup:.2f}x'} | {gen_rows} "
                f"| {'-' if gen_speedup is None else f'{gen_speedup:.2f}x'} "
                f"| {'-' if bound is None else f'{bound:.2f}x'} "
                f"| {'-' if share is None else f'{share:.0%}'} |")
    if not lines:
        return ""
    return ("\n| dataset | approach | vs | faster rows | speedup (summed wall) "
            "| faster rows, generation | speedup (summed generation) | bound (kernel curve) "
            "| measured / bound |\n"
            "|---|---|---|---|---|---|---|---|---|\n" + "\n".join(lines) + "\n")


def _repeat_table(pooled: Pooled) -> str:
    """Where approaches ran more than once per row (``--repeats``): the runs per row and the
    rows whose every run wrote the first run's output. Empty otherwise."""
    lines = [f"| {dataset} | {name} | {int(entry.get('repeats') or 1)} "
             f"| {_count(entry, 'reproduced')} |"
             for dataset, approaches in pooled.items() for name, entry in approaches.items()
             if entry.get("reproduced") is not None]
    if not lines:
        return ""
    return ("\n| dataset | approach | runs per row (times: the fastest) "
            "| same output every run |\n|---|---|---|---|\n" + "\n".join(lines) + "\n")


def write_plot(directory: str | Path, pooled: Pooled) -> Path:
    """``quality_pass_rate.png`` in ``directory``: the pass rate of every approach (bars) on
    every dataset (groups). matplotlib (the ``bench`` extra) is imported here, Agg backend."""
    try:
        import matplotlib
    except ImportError as exc:
        from copygram.errors import missing_dependency

        raise missing_dependency("matplotlib", "bench") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    datasets = list(pooled)
    names: list[str] = []
    for approaches in pooled.values():
        names += [name for name in approaches if name not in names]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.8 * len(datasets)), 4))
    width = 0.8 / max(1, len(names))
    for index, name in enumerate(names):
        rates = []
        for dataset in datasets:
            entry = pooled[dataset].get(name, {})
            passed, rows = entry.get("pass"), entry.get("rows")
            rates.append(float(passed) / float(rows) if passed is not None and rows else 0.0)
        ax.bar([d + index * width for d in range(len(datasets))], rates, width, label=name)
    ax.set_xticks([d + width * (len(names) - 1) / 2 for d in range(len(datasets))])
    ax.set_xticklabels(datasets, rotation=20, ha="right", fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("tests pass (share of rows)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / "quality_pass_rate.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
