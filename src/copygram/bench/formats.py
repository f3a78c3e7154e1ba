"""Edit formats compared: how many tokens each spends on an edit, and whether it applies exactly.

For a pair ``(before, after)`` four ways of writing the edit are built and re-applied to ``before``
by a strict applier; ``exact`` says whether that gives back ``after`` character for character:

* ``copygram``: the oracle program in the paper's syntax (``render(oracle(before, after))``);
* ``search_replace``: Aider-style ``<<<<<<< SEARCH`` / ``=======`` / ``>>>>>>> REPLACE`` blocks.
  Each changed hunk's context grows (fewest lines first, above before below) until its SEARCH lines
  occur exactly once in the file as it stands when the block is applied (blocks apply in order);
  a pure insertion therefore gets an anchor line. An edit the format cannot write (a change of the
  final newline alone) counts as a failure.
* ``unified_diff``: ``difflib.unified_diff`` with 3 context lines and GNU diff's no-newline marker,
  applied strictly by line numbers with every context line checked;
* ``whole_file``: ``after`` itself.

The two line formats are made and applied by :mod:`copygram.bench.patches`.

``copygram bench formats`` prints the table in docs/formats.md, tokens counted by the model's own
tokenizer (:func:`token_counter`). Cost: a few ms per row, plus tokenization.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from copygram.backends import BACKENDS, Backend, load
from copygram.bench.data import add_data_arguments, rows_from_args
from copygram.bench.patches import (
    PatchError,
    apply_search_replace,
    apply_unified_diff,
    make_search_replace,
    make_unified_diff,
)
from copygram.config import BackendConfig
from copygram.language.oracle import oracle
from copygram.language.resolve import resolve
from copygram.language.syntaxes import parse, render

TokenCounter = Callable[[str], int]
FORMATS: tuple[str, ...] = ("copygram", "search_replace", "unified_diff", "whole_file")

# --- comparison ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FormatResult:
    """One format's text for an edit, its size in tokens, and whether it applies exactly."""

    format: str
    tokens: int
    chars: int
    exact: bool


def _exact(apply: Callable[[str, str], str], text: str, before: str, after: str) -> bool:
    try:
        return apply(text, before) == after
    except PatchError:
        return False


def _apply_program(text: str, before: str) -> str:
    return resolve(parse(text), before)


def render_formats(before: str, after: str) -> dict[str, str]:
    """The edit in each of :data:`FORMATS`."""
    return {
        "copygram": render(oracle(before, after)),
        "search_replace": make_search_replace(before, after, strict=False),
        "unified_diff": make_unified_diff(before, after),
        "whole_file": after,
    }


_APPLIERS: dict[str, Callable[[str, str], str]] = {
    "copygram": _apply_program,
    "search_replace": apply_search_replace,
    "unified_diff": apply_unified_diff,
    "whole_file": lambda text, _before: text,
}


def compare_formats(before: str, after: str, count_tokens: TokenCounter) -> dict[str, FormatResult]:
    """Size and exactness of the edit in each format (``count_tokens`` counts one text)."""
    return {
        name: FormatResult(name, count_tokens(text), len(text),
                           _exact(_APPLIERS[name], text, before, after))
        for name, text in render_formats(before, after).items()
    }


@dataclass(frozen=True)
class FormatSummary:
    """One dataset's totals: tokens summed over rows, median per row, exact-apply share."""

    dataset: str
    rows: int
    total_tokens: dict[str, int]
    median_tokens: dict[str, float]
    exact_share: dict[str, float]


def summarize(dataset: str, results: Sequence[dict[str, FormatResult]]) -> FormatSummary:
    return FormatSummary(
        dataset=dataset,
        rows=len(results),
        total_tokens={f: sum(r[f].tokens for r in results) for f in FORMATS},
        median_tokens={f: float(statistics.median(r[f].tokens for r in results)) if results
                       else 0.0 for f in FORMATS},
        exact_share={f: sum(r[f].exact for r in results) / len(results) if results else 0.0
                     for f in FORMATS},
    )


def markdown_table(summaries: Sequence[FormatSummary]) -> str:
    """Total tokens per format (and as a share of the whole file) and exact-apply rates."""
    head = ("| dataset | rows | " + " | ".join(f"{f} tokens" for f in FORMATS)
            + " | " + " | ".join(f"{f} exact" for f in FORMATS[:3]) + " |")
    lines = [head, "|" + "---|" * (2 + len(FORMATS) + 3)]
    for s in summaries:
        whole = s.total_tokens["whole_file"] or 1
        cells = [f"{s.total_tokens[f]} ({s.total_tokens[f] / whole:.2f})" for f in FORMATS]
        exact = [f"{s.exact_share[f]:.1%}" for f in FORMATS[:3]]
        lines.append(f"| {s.dataset} | {s.rows} | " + " | ".join(cells + exact) + " |")
    return "\n".join(lines) + "\n"


def token_counter(backend: Backend) -> TokenCounter:
    """Token counts in ``backend``'s vocabulary (no BOS; ``""`` is 0 tokens)."""

    def count(text: str) -> int:
        return len(backend.tokenize(text)) if text else 0

    return count


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_arguments(parser)
    parser.add_argument("--backend", default="llamacpp", choices=BACKENDS,
                        help="the stack whose tokenizer counts tokens (default llamacpp)")
    parser.add_argument("--model", default="default", help="the model whose vocabulary counts "
                        "tokens: a catalog name or a path (default: the SmolLM2 model)")
    parser.add_argument("--json", default=None, help="write the per-dataset summaries here")


def run(args: argparse.Namespace) -> int:
    rows = rows_from_args(args)
    # The context is irrelevant to tokenizing; a small one keeps the load cheap.
    count = token_counter(load(BackendConfig(backend=args.backend, model=args.model, n_ctx=256)))
    summaries = []
    for dataset, dataset_rows in rows.items():
        results = [compare_formats(row.before, row.after, count) for row in dataset_rows]
        summaries.append(summarize(dataset, results))
        print(f"{dataset}: {len(dataset_rows)} rows", file=sys.stderr)
    print(markdown_table(summaries), end="")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(s) for s in summaries], indent=1) + "\n",
                                   encoding="utf-8")
    return 0
