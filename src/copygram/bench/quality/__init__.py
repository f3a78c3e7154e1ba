"""``copygram bench quality``: the model's own greedy edits, judged by the rows' tests.

Unlike ``bench e2e`` (teacher-forced: a perfect model), every approach here produces whatever the
model writes. Per row, on one loaded model, the approaches run interleaved (their order rotated
row by row):

* ``auto``: copygram's default, ``mode = "auto"`` (:mod:`copygram.decode.modes`: rewrite mode
  for a short file, program mode for a long one), judged as ``program`` is.
* ``program``: copygram's program mode, ``EditSession.edit(before, instruction)``. A
  :class:`~copygram.errors.CopygramError` makes the row *invalid* (its message recorded); any
  other exception is a *crash* (recorded apart: a bug, never a way for one row to end the run).
* ``rewrite``: the baseline, the same model asked to rewrite the whole file: the rewrite prompt
  (:class:`~copygram.decode.prompt.RewritePromptBuilder`), a plain greedy decode with no grammar
  and no drafting, a token budget from the document's size (:func:`rewrite_budget`), and the file
  taken from the output by :func:`extract_document`. Its decode is the step-by-step reference,
  one token per forward: the prompt but its last token spliced, then that token and every output
  token decoded alone (a batched row differs slightly from a one-token step on llama.cpp).
* ``rewrite-mode``: copygram's rewrite mode (``EditSession(..., mode="rewrite")``): the same
  prompt, budget and fence stripping, the file itself as the speculative draft, verified in the
  forward that appends it. Under greedy decoding it must write the baseline's output token for
  token (``same_as_rewrite``): it reads its first token from the batched prompt row, as every
  verified draft token from a batched row, and re-decides a near-tie there with a one-token step.
* ``lookup`` (not run by default: it loads a second model and decodes every row once more): the
  stack's own prompt lookup decoding, llama-cpp-python's
  ``LlamaPromptLookupDecoding(num_pred_tokens=10)`` or, with ``--backend transformers``,
  ``generate(prompt_lookup_num_tokens=10, do_sample=False)``, loaded once per run
  (:func:`copygram.bench.peers.lookup_generator`), on the baseline's prompt token ids with its
  budget and fence stripping. ``same_as_rewrite`` too: it reads batched rows with no near-tie
  re-decided, so on llama.cpp its output may differ from plain greedy's.

Beside them, ``copy_unchanged`` is the floor every edit should beat: the file returned as it
came (its tests run too; its ``wall_s`` is 0).

Metrics per row (:class:`RowQuality`): ``valid`` (the approach returned a document), ``passed``
(the row's tests pass on it, run by :func:`copygram.bench.testrun.run_tests` in a subprocess;
``None``, shown ``-``, on a set without tests such as ``commits_py_repos``), ``exact`` (equal to
``after``), ``unchanged`` (equal to ``before``), ``similarity`` (:func:`line_similarity` to
``after``), ``wall_s`` (the approach's call, prompt prefill included; tests excluded),
``gen_s`` (its generation phase, from the end of the prompt's forward, where the approach reports
it: the prompt costs every approach the same, and no draft can shorten it),
``decoded_tokens`` (tokens the model chose one forward at a time; for ``lookup`` every output
token, drafted or not). ``exact`` and ``unchanged`` ignore trailing newlines at the end of the
file: a chat model ends its turn without the file's last newline.

The ``--json`` file is ``{"run": {...}, "results": {...}}``. ``run`` says how to reproduce and
compare the figures (:func:`copygram.host.run_record`): the command line, the backend
configuration (with ``cost_curve`` where one was given), the CPU (model, family, the kernel
flags: the same code ran 4x slower per decode step on one 2-vCPU host than on another), the load
average at the start, the source revision, whether the batch-invariant kernels were on, the
parsed arguments (``repeats``, ``limit``, ...), the datasets, each ``--program-config`` route's
text and the run's ``seconds``. ``results``, pooled per dataset and approach, is::

    {dataset: {approach: {"pass": n, "exact": n, "valid": n, "rows": n, "tested": n, "sim": x,
                          "wall_s": x, "gen_s": x,
                          "unchanged": n, "crashed": n, "decoded_tokens": n, "sim_valid": x,
                          "forwards": n, "accepted_prediction_tokens": n,
                          "rejected_prediction_tokens": n, "same_as_rewrite": n,
                          "faster_than_rewrite": n, "compared_with_rewrite": n,
                          "speedup_vs_rewrite": x, "gen_faster_than_rewrite": n,
                          "gen_compared_with_rewrite": n, "gen_speedup_vs_rewrite": x,
                          "repeats": n, "reproduced": n, ...}}}

``sim`` is the mean similarity over all rows with an invalid row counting 0, ``sim_valid`` the
mean over valid rows only, ``wall_s`` the sum over rows; ``pass`` is ``null`` for a set without
tests. ``forwards`` (after the prompt), ``accepted_prediction_tokens`` and
``rejected_prediction_tokens`` are sums (0 where an approach does not report them);
``same_as_rewrite`` counts rewrite-mode (or lookup) rows whose raw output equals the baseline's
on the same row (``null`` unless both ran). The table on stdout shows these in a second table.
Where both ran, ``rewrite-mode`` gets ``faster_than_``, ``compared_with_`` and ``speedup_vs_``
keys for ``rewrite`` and ``lookup``, and ``lookup`` for ``rewrite``
(:data:`~copygram.bench.quality.report.SPEED_PAIRS`): the rows where its wall time was below the
other's on the same row, of the rows both ran without a crash, and the other's summed wall time
over its own on those rows; the ``gen_`` keys say the same of generation time alone (rows where
both report ``gen_s``); a third table shows them.

``--repeats N`` runs every approach N times on each row, in rounds (A B C, A B C, ...), each
run primed alike (every approach's cache holds its prompt's document-free prefix and no more,
the lookup peer's too): the tests and metrics are the first run's, ``wall_s`` and ``gen_s`` the
fastest run's (the output is fixed, so runs differ only by the machine's noise, and the minimum
is the run it disturbed least, as ``timeit`` reports), and ``reproduced`` counts the rows where
every later run wrote the first run's output (``null`` after one run; ``repeats``: runs per
row); a fourth table shows them. With rows of more than one dataset, the entry
``"all"`` (:data:`~copygram.bench.quality.report.ALL_DATASETS`) pools every row; ``pass`` counts
over ``tested`` rows.

Cost: with the default model, ``--limit 3`` on one set takes well under a minute on 2 CPU cores;
a capable model (1.5B) takes ~6 s a row and approach.

The modules: :mod:`~copygram.bench.quality.scoring` (the metrics of one row),
:mod:`~copygram.bench.quality.approaches` (the approaches),
:mod:`~copygram.bench.quality.report` (pooling, the table, the plot) and
:mod:`~copygram.bench.quality.command` (the command); this module re-exports their API.
"""

from __future__ import annotations

from copygram.bench.data import DATA_ENV
from copygram.bench.quality.approaches import (
    LookupPeer,
    RewriteBaseline,
    RewriteOutput,
    extract_document,
    program_approach,
    rewrite_budget,
    rewrite_decode,
    rewrite_mode_approach,
    rewrite_request,
)
from copygram.bench.quality.command import add_arguments, data_path, parse_approaches, run, run_rows
from copygram.bench.quality.report import (
    ALL_DATASETS,
    SPEED_PAIRS,
    Pooled,
    markdown_table,
    pool,
    write_plot,
)
from copygram.bench.quality.scoring import (
    APPROACHES,
    DEFAULT_APPROACHES,
    QUALITY_DATASETS,
    UNCHANGED,
    Approach,
    ApproachResult,
    RowQuality,
    evaluate_row,
    exact_match,
    floor_row,
    line_similarity,
    repeat_row,
    score,
)

__all__ = [
    "ALL_DATASETS",
    "APPROACHES",
    "DATA_ENV",
    "DEFAULT_APPROACHES",
    "QUALITY_DATASETS",
    "SPEED_PAIRS",
    "UNCHANGED",
    "Approach",
    "ApproachResult",
    "LookupPeer",
    "Pooled",
    "RewriteBaseline",
    "RewriteOutput",
    "RowQuality",
    "add_arguments",
    "data_path",
    "evaluate_row",
    "exact_match",
    "extract_document",
    "floor_row",
    "line_similarity",
    "markdown_table",
    "parse_approaches",
    "pool",
    "program_approach",
    "repeat_row",
    "rewrite_budget",
    "rewrite_decode",
    "rewrite_mode_approach",
    "rewrite_request",
    "run",
    "run_rows",
    "score",
    "write_plot",
]
