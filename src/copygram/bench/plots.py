"""The benchmarks' figures, drawn from plain numbers (matplotlib, Agg: the ``bench`` extra)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from copygram.errors import missing_dependency


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as exc:
        raise missing_dependency("matplotlib", "bench") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(plt: Any, fig: Any, path: Path, dpi: int = 120) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def bar_chart(path: Path, values: Mapping[str, Mapping[str, float]], ylabel: str, *,
              baseline: float | None = None, ylim: tuple[float, float] | None = None) -> Path:
    """Grouped bars: one group per key of the first series' mapping (e.g. a dataset), one bar
    per series (e.g. an approach) with its value for that group; ``baseline`` draws a line."""
    plt = _pyplot()
    names = list(values)
    groups = list(next(iter(values.values()), {}))
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(groups)), 4))
    width = 0.8 / max(len(names), 1)
    for index, name in enumerate(names):
        ax.bar([g + index * width for g in range(len(groups))],
               [values[name].get(group, 0.0) for group in groups], width, label=name)
    if baseline is not None:
        ax.axhline(baseline, color="grey", linewidth=0.8)
    ax.set_xticks([g + width * (len(names) - 1) / 2 for g in range(len(groups))])
    ax.set_xticklabels(groups, rotation=20, ha="right", fontsize=8)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    return _save(plt, fig, path)


def speedup_plots(directory: Path, pooled: Mapping[str, Mapping[str, float]],
                  points: Mapping[str, Sequence[tuple[int, float]]]) -> list[Path]:
    """``speedup_by_dataset.png`` (bars: ``pooled[approach][dataset]``) and
    ``speedup_vs_length.png`` (``points[approach]``: (output tokens, speedup) per row)."""
    directory.mkdir(parents=True, exist_ok=True)
    by_dataset = bar_chart(directory / "speedup_by_dataset.png", pooled,
                           "pooled speedup over full regeneration", baseline=1.0)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, pairs in points.items():
        ax.scatter([p[0] for p in pairs], [p[1] for p in pairs], s=10, label=name, alpha=0.7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xlabel("output tokens (after)")
    ax.set_ylabel("speedup over full regeneration")
    ax.legend(fontsize=8)
    return [by_dataset, _save(plt, fig, directory / "speedup_vs_length.png")]


def kernel_plot(curves: Mapping[str, Sequence[tuple[int, float, float, float]]],
                path: Path) -> None:
    """Speedup s(N) and the cost per token, per backend: ``curves[backend]`` holds
    (N, speedup, decode ms per token, splice ms per token) for each N."""
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for i, name in enumerate(sorted(curves)):
        rows = curves[name]
        ns = [row[0] for row in rows]
        colour = f"C{i}"
        left.plot(ns, [row[1] for row in rows], marker="o", color=colour, label=name)
        right.plot(ns, [row[2] for row in rows], marker="o", color=colour,
                   label=f"{name}: decode")
        right.plot(ns, [row[3] for row in rows], marker="s", color=colour, linestyle="--",
                   label=f"{name}: splice")
    left.set(xscale="log", xlabel="N (tokens)", ylabel="speedup s(N) = decode / splice",
             title="One splice vs N decode steps")
    right.set(xscale="log", yscale="log", xlabel="N (tokens)", ylabel="ms per token",
              title="Cost per token")
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    _save(plt, fig, path, dpi=110)
