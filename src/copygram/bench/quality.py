"""``copygram bench quality``: the model's own greedy edits, judged by the rows' tests.

Unlike ``bench e2e`` (teacher-forced: a perfect model), every approach here produces whatever the
model writes. Per row, on one loaded model, the approaches run interleaved (their order rotated
row by row):

* ``program``: copygram's program mode, ``EditSession.edit(before, instruction)``. A
  :class:`~copygram.errors.CopygramError` makes the row *invalid* (its message recorded); any
  other exception is a *crash* (recorded apart: a bug, never a way for one row to end the run).
* ``rewrite``: the baseline, the same model asked to rewrite the whole file: the rewrite prompt
  (:class:`~copygram.decode.prompt.RewritePromptBuilder`), a plain greedy decode one token per forward
  with no grammar and no drafting, a token budget from the document's size
  (:func:`rewrite_budget`), and the file taken from the output by :func:`extract_document`.

Beside them, ``copy_unchanged`` is the floor every edit should beat: the file returned as it
came (its tests run too; its ``wall_s`` is 0).

Metrics per row (:class:`RowQuality`): ``valid`` (the approach returned a document), ``passed``
(the row's tests pass on it, run by :func:`copygram.bench.testrun.run_tests` in a subprocess;
``None`` on a set without tests), ``exact`` (equal to ``after``), ``unchanged`` (equal to
``before``), ``similarity`` (:func:`line_similarity` to ``after``), ``wall_s`` (the approach's
call, prompt prefill included; tests excluded), ``decoded_tokens`` (tokens the model chose one
forward at a time). ``exact`` and ``unchanged`` ignore trailing newlines at the end of the file:
a chat model ends its turn without the file's last newline.

Pooled per dataset and approach, the ``--json`` layout is::

    {dataset: {approach: {"pass": n, "exact": n, "valid": n, "rows": n, "sim": x, "wall_s": x,
                          "unchanged": n, "crashed": n, "decoded_tokens": n, "sim_valid": x}}}

``sim`` is the mean similarity over all rows with an invalid row counting 0, ``sim_valid`` the
mean over valid rows only, ``wall_s`` the sum over rows; ``pass`` is ``null`` for a set without
tests.

Cost: with the default model, ``--limit 3`` on one set takes well under a minute on 2 CPU cores;
a capable model (1.5B) takes ~6 s a row and approach.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import re
import shutil
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import numpy as np

from copygram.bench.data import DATA_ENV, EditRow, data_dir
from copygram.bench.testrun import DEFAULT_TIMEOUT_S, TestOutcome, has_tests, run_tests
from copygram.errors import ConfigError, CopygramError

if TYPE_CHECKING:
    from copygram.backends.base import Backend, Logits
    from copygram.decode.prompt import PromptBuilder
    from copygram.session import EditSession

__all__ = [
    "APPROACHES",
    "DATA_ENV",
    "QUALITY_DATASETS",
    "UNCHANGED",
    "Approach",
    "ApproachResult",
    "RewriteBaseline",
    "RewriteOutput",
    "RowQuality",
    "evaluate_row",
    "exact_match",
    "extract_document",
    "floor_row",
    "line_similarity",
    "markdown_table",
    "pool",
    "program_approach",
    "rewrite_budget",
    "rewrite_decode",
    "run_rows",
    "score",
    "write_plot",
]

PROGRAM = "program"
REWRITE = "rewrite"
UNCHANGED = "copy_unchanged"
APPROACHES = (PROGRAM, REWRITE)
QUALITY_DATASETS: tuple[str, ...] = (
    "humanevalfix_docs_python",
    "humanevalfix_docs_js",
    "quixbugs_python",
)
"""The default sets: bug fixes whose rows carry tests (HumanEvalFix Python and JS, QuixBugs)."""

ApproachResult = tuple[str | None, Mapping[str, object], str | None]
"""``(document or None, stats, error or None)``: what an approach returns for one row."""

Approach = Callable[[EditRow], ApproachResult]


# --- metrics ------------------------------------------------------------------------------------


def _canonical(text: str) -> str:
    return text.rstrip("\r\n")


def line_similarity(candidate: str, reference: str) -> float:
    """``difflib.SequenceMatcher`` ratio over lines: ``2 * M / T`` with ``M`` the lines in
    matching blocks and ``T`` the line count of both texts; 1.0 for identical texts (two empty
    texts included), 0.0 for texts with no line in common.

    Lines are compared without their endings (``str.splitlines()``) and trailing newlines at the
    end of the file are ignored (as :func:`exact_match` does), so CRLF vs LF and a missing or
    extra final newline cost nothing; any other change to a line makes it a different line. The
    ``autojunk`` heuristic is off: it would treat frequent lines (blank ones) of a file over 200
    lines as junk and understate the matches.
    """
    a, b = _canonical(candidate).splitlines(), _canonical(reference).splitlines()
    if not a and not b:
        return 1.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def exact_match(candidate: str, reference: str) -> bool:
    """Equal, up to trailing newlines at the end of the file."""
    return _canonical(candidate) == _canonical(reference)


@dataclass(frozen=True)
class RowQuality:
    """One approach on one row (see the module doc for each metric)."""

    dataset: str
    row_id: str
    approach: str
    valid: bool
    passed: bool | None
    exact: bool
    unchanged: bool
    similarity: float
    wall_s: float
    decoded_tokens: int
    error: str | None = None
    crashed: bool = False
    test_status: str | None = None  # TestOutcome.status, None when no test ran

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def _decoded(stats: Mapping[str, object]) -> int:
    value = stats.get("decoded_tokens", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _crash_text(exc: BaseException) -> str:
    where = traceback.extract_tb(exc.__traceback__)
    place = f" at {Path(where[-1].filename).name}:{where[-1].lineno}" if where else ""
    message = str(exc).strip() or "(no message)"
    return f"{type(exc).__name__}{place}: {message}"


def score(row: EditRow, approach: str, text: str | None, *, wall_s: float = 0.0,
          decoded_tokens: int = 0, error: str | None = None, crashed: bool = False,
          timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[RowQuality, TestOutcome | None]:
    """The metrics of ``text`` (``None``: no document came back) as ``approach``'s output."""
    if text is None:
        return RowQuality(row.dataset, row.id, approach, valid=False,
                          passed=False if has_tests(row) else None, exact=False,
                          unchanged=False, similarity=0.0, wall_s=wall_s,
                          decoded_tokens=decoded_tokens,
                          error=error or "no document returned", crashed=crashed), None
    outcome = run_tests(row, text, timeout_s=timeout_s) if has_tests(row) else None
    return RowQuality(
        row.dataset, row.id, approach, valid=True,
        passed=outcome.passed if outcome is not None else None,
        exact=exact_match(text, row.after), unchanged=exact_match(text, row.before),
        similarity=line_similarity(text, row.after), wall_s=wall_s,
        decoded_tokens=decoded_tokens, error=error, crashed=crashed,
        test_status=outcome.status if outcome is not None else None,
    ), outcome


def evaluate_row(row: EditRow, name: str, approach: Approach, *,
                 timeout_s: float = DEFAULT_TIMEOUT_S
                 ) -> tuple[RowQuality, ApproachResult]:
    """Run ``approach`` on ``row`` (timed) and score what it returned.

    An exception out of the approach never propagates (``KeyboardInterrupt`` aside): the row is
    recorded invalid with ``crashed=True`` and the exception's type, place and message.
    Returns the row's metrics and the approach's raw return value.
    """
    start = time.perf_counter()
    crashed = False
    try:
        result: ApproachResult = approach(row)
    except Exception as exc:  # noqa: BLE001 - a crash is recorded, never fatal to the run
        result = (None, {}, _crash_text(exc))
        crashed = True
    wall = time.perf_counter() - start
    text, stats, error = result
    quality, _ = score(row, name, text, wall_s=wall, decoded_tokens=_decoded(stats),
                       error=error, crashed=crashed, timeout_s=timeout_s)
    return quality, result


def floor_row(row: EditRow, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> RowQuality:
    """The copy-unchanged floor: ``before`` scored as if an approach had returned it."""
    quality, _ = score(row, UNCHANGED, row.before, timeout_s=timeout_s)
    return quality


# --- pooling and rendering ----------------------------------------------------------------------


Pooled = dict[str, dict[str, dict[str, float | int | None]]]


def pool(rows: Sequence[RowQuality]) -> Pooled:
    """``{dataset: {approach: {...}}}`` (module doc), in order of first appearance."""
    groups: dict[str, dict[str, list[RowQuality]]] = {}
    for quality in rows:
        groups.setdefault(quality.dataset, {}).setdefault(quality.approach, []).append(quality)
    pooled: Pooled = {}
    for dataset, approaches in groups.items():
        pooled[dataset] = {}
        for name, group in approaches.items():
            valid = [q for q in group if q.valid]
            tested = [q for q in group if q.passed is not None]
            pooled[dataset][name] = {
                "pass": sum(bool(q.passed) for q in tested) if tested else None,
                "exact": sum(q.exact for q in group),
                "valid": len(valid),
                "rows": len(group),
                "sim": sum(q.similarity for q in group) / len(group),
                "wall_s": sum(q.wall_s for q in group),
                "unchanged": sum(q.unchanged for q in group),
                "crashed": sum(q.crashed for q in group),
                "decoded_tokens": sum(q.decoded_tokens for q in group),
                "sim_valid": (sum(q.similarity for q in valid) / len(valid)) if valid else None,
            }
    return pooled


def _count(entry: Mapping[str, float | int | None], key: str) -> str:
    value, rows = entry.get(key), entry.get("rows")
    if value is None or not rows:
        return "-"
    return f"{int(value)}/{int(rows)}"


def markdown_table(pooled: Pooled) -> str:
    """One line per dataset and approach: pass, exact, valid, unchanged, crashes (as n/rows),
    mean similarity and the summed wall time."""
    lines = ["| dataset | approach | pass | exact | valid | unchanged | crashed | sim | wall s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for dataset, approaches in pooled.items():
        for name, entry in approaches.items():
            sim = entry.get("sim")
            wall = entry.get("wall_s")
            lines.append(
                f"| {dataset} | {name} | {_count(entry, 'pass')} | {_count(entry, 'exact')} "
                f"| {_count(entry, 'valid')} | {_count(entry, 'unchanged')} "
                f"| {_count(entry, 'crashed')} "
                f"| {'-' if sim is None else f'{sim:.3f}'} "
                f"| {'-' if wall is None else f'{wall:.1f}'} |")
    return "\n".join(lines) + "\n"


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


# --- the rewrite baseline -----------------------------------------------------------------------


_FENCE_OPEN = re.compile(r"(`{3,}|~{3,})[^\n`]*\n")


def extract_document(output: str) -> str:
    """The file in a rewrite's raw model output, deterministically.

    If the output (after any blank lines that lead it) opens with a code fence line (three or
    more backticks or tildes, then an optional language tag: ```` ```python ````), the file is
    what follows that line up to the *last* line holding just the same fence marker (trailing
    spaces allowed); the newline before the closing line belongs to the file's last line, and
    whatever follows the closing line (a model's explanation) is dropped. A fence never closed
    (the budget ran out) loses only its opening line. Any other output is the file as it
    stands. Fences inside the file stay: only one surrounding fence goes.
    """
    start = 0
    while True:
        end = output.find("\n", start)
        if end < 0 or output[start:end].strip():
            break
        start = end + 1
    opening = _FENCE_OPEN.match(output, start)
    if opening is None:
        return output
    marker = opening.group(1)
    body = output[opening.end():]
    closing = None
    offset = 0
    for line in body.splitlines(keepends=True):
        if line.rstrip() == marker:
            closing = offset
        offset += len(line)
    return body if closing is None else body[:closing]


def rewrite_budget(document_tokens: int) -> int:
    """The rewrite baseline's output budget: 1.5x the document's tokens plus 64 (a bug fix
    barely changes a file's length; the slack covers fences and a few new lines)."""
    return document_tokens + document_tokens // 2 + 64


@dataclass(frozen=True)
class RewriteOutput:
    """A plain greedy rewrite: ``text`` (:func:`extract_document` of ``raw``) and what it cost.

    ``stop`` is ``"eos"``, ``"budget"`` (``budget`` tokens decoded) or ``"context"`` (the
    context filled first).
    """

    text: str
    raw: str
    prompt_tokens: int
    decoded_tokens: int
    budget: int
    stop: str
    prefill_s: float
    decode_s: float

    def stats(self) -> dict[str, object]:
        return {"decoded_tokens": self.decoded_tokens, "prompt_tokens": self.prompt_tokens,
                "budget": self.budget, "stop": self.stop, "prefill_s": self.prefill_s,
                "decode_s": self.decode_s, "raw": self.raw}


def _prefill(backend: Backend, prompt_ids: Sequence[int]) -> Logits:
    """Splice the prompt, reusing the prefix of it the cache already holds (as the session does)."""
    cached = backend.cached_ids
    common = 0
    limit = min(len(cached), len(prompt_ids) - 1)
    while common < limit and cached[common] == prompt_ids[common]:
        common += 1
    backend.truncate(common)
    return backend.splice(prompt_ids[common:])


def rewrite_decode(backend: Backend, document: str, instruction: str, *,
                   prompt_builder: PromptBuilder | None = None,
                   max_new_tokens: int | None = None) -> RewriteOutput:
    """Ask the model to rewrite ``document`` and decode greedily, one token per forward.

    The prompt is ``prompt_builder`` (default :class:`~copygram.decode.prompt.RewritePromptBuilder`);
    greedy is ``argmax`` (ties to the lowest id); decoding stops at an end-of-generation id, at
    ``max_new_tokens`` (default :func:`rewrite_budget` of the document), or when the context is
    full. Raises :class:`~copygram.errors.DocumentError` if the prompt alone fills the context.
    """
    from copygram.decode.prompt import RewritePromptBuilder
    from copygram.errors import DocumentError

    builder: PromptBuilder = prompt_builder or RewritePromptBuilder()
    prompt_ids = backend.tokenize(builder.build(document, instruction, backend), special=True)
    budget = (max_new_tokens if max_new_tokens is not None
              else rewrite_budget(len(backend.tokenize(document))))
    if not prompt_ids or len(prompt_ids) >= backend.context_length:
        raise DocumentError(
            f"the rewrite prompt takes {len(prompt_ids)} tokens, n_ctx is "
            f"{backend.context_length}; raise n_ctx or edit a smaller document")
    eos = backend.eos_token_ids
    tick = time.perf_counter()
    logits = _prefill(backend, prompt_ids)
    prefill_s = time.perf_counter() - tick
    tick = time.perf_counter()
    out: list[int] = []
    stop = "budget"
    while len(out) < budget:
        token = int(np.argmax(logits))
        if token in eos:
            stop = "eos"
            break
        out.append(token)
        if len(out) >= budget:
            break
        if backend.n_tokens + 1 > backend.context_length:
            stop = "context"
            break
        logits = backend.decode(token)
    decode_s = time.perf_counter() - tick
    raw = backend.detokenize(out) if out else ""
    return RewriteOutput(text=extract_document(raw), raw=raw, prompt_tokens=len(prompt_ids),
                         decoded_tokens=len(out), budget=budget, stop=stop,
                         prefill_s=prefill_s, decode_s=decode_s)


@dataclass
class RewriteBaseline:
    """The rewrite baseline as an :data:`Approach` over a loaded backend."""

    backend: Backend
    prompt_builder: PromptBuilder | None = None
    max_new_tokens: int | None = None

    def __call__(self, row: EditRow) -> ApproachResult:
        try:
            output = rewrite_decode(self.backend, row.before, row.instruction,
                                    prompt_builder=self.prompt_builder,
                                    max_new_tokens=self.max_new_tokens)
        except CopygramError as exc:
            return None, {}, f"{type(exc).__name__}: {exc}"
        return output.text, output.stats(), None


def program_approach(session: EditSession) -> Approach:
    """copygram's program mode as an :data:`Approach`: a ``CopygramError`` makes the row invalid
    (any other exception propagates, for :func:`evaluate_row` to record as a crash)."""

    def run(row: EditRow) -> ApproachResult:
        try:
            result = session.edit(row.before, row.instruction)
        except CopygramError as exc:
            stats: dict[str, object] = {}
            partial = getattr(exc, "partial_program", None)
            if isinstance(partial, str):
                stats["partial_program"] = partial
            return None, stats, f"{type(exc).__name__}: {exc}"
        return result.text, {"decoded_tokens": result.stats.decoded_tokens,
                             "program": result.program_text,
                             "prompt_tokens": result.stats.prompt_tokens,
                             "forwards": result.stats.forwards}, None

    return run


# --- the command --------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="default",
                        help="a catalog model name or a .gguf path (default: the default model)")
    parser.add_argument("--backend", default="llamacpp", choices=("llamacpp", "transformers"))
    parser.add_argument("--n-ctx", type=int, default=4096, help="context length (default 4096)")
    parser.add_argument("--n-threads", type=int, default=None,
                        help="CPU threads (default: the backend's)")
    parser.add_argument("--data", default=None,
                        help=f"folder of *.dev.jsonl edit sets (default: ${DATA_ENV})")
    parser.add_argument("--datasets", default=None,
                        help="comma-separated dataset names, or 'all' "
                             f"(default: {','.join(QUALITY_DATASETS)})")
    parser.add_argument("--limit", type=int, default=None,
                        help="first N rows of each dataset (default: all)")
    parser.add_argument("--approaches", default=",".join(APPROACHES),
                        help=f"comma-separated, from {', '.join(APPROACHES)} (default: both)")
    parser.add_argument("--test-timeout", type=float, default=DEFAULT_TIMEOUT_S,
                        help=f"seconds a row's tests may run (default {DEFAULT_TIMEOUT_S:g})")
    parser.add_argument("--json", default=None, help="write the pooled results here")
    parser.add_argument("--rows", default=None,
                        help="write one JSON line per row and approach here (with the output)")
    parser.add_argument("--plot", default=None, help="write quality_pass_rate.png into this folder")


def data_path(value: str | None) -> Path:
    """The data folder: ``--data``, else ``$COPYGRAM_DATA``; a :class:`ConfigError` naming both
    when neither is given (or the folder does not exist)."""
    return data_dir(value or None)


def parse_approaches(spec: str) -> list[str]:
    names = [name.strip() for name in spec.split(",") if name.strip()]
    unknown = [name for name in names if name not in APPROACHES]
    if not names or unknown:
        raise ConfigError(f"--approaches takes a comma-separated list from "
                          f"{', '.join(APPROACHES)}; got {spec!r}")
    return list(dict.fromkeys(names))


def _progress(elapsed: float, row: EditRow, results: Sequence[RowQuality]) -> None:
    parts = []
    for quality in results:
        if quality.crashed:
            state = "CRASH"
        elif not quality.valid:
            state = "invalid"
        elif quality.passed is None:
            state = "exact" if quality.exact else f"sim={quality.similarity:.2f}"
        else:
            state = quality.test_status or ("pass" if quality.passed else "fail")
        wall = f" {quality.wall_s:.1f}s" if quality.approach != UNCHANGED else ""
        parts.append(f"{quality.approach}={state}{wall}")
    print(f"[{elapsed:6.0f}s] {row.dataset} {row.id}: " + " ".join(parts), file=sys.stderr,
          flush=True)
    for quality in results:
        if quality.error:
            print(f"          {quality.approach}: {quality.error[:300]}", file=sys.stderr,
                  flush=True)


def run_rows(rows: Sequence[EditRow], runners: Mapping[str, Approach], *,
             timeout_s: float = DEFAULT_TIMEOUT_S, sink: TextIO | None = None,
             progress: bool = True) -> list[RowQuality]:
    """Every approach on every row, interleaved row by row (the order rotated by one each row,
    so that no approach always runs on a cache the other left), then the copy-unchanged floor.

    ``sink`` gets one JSON line per row and approach (the metrics, the document and the
    approach's scalar stats); ``progress`` prints a line per row on stderr.
    """
    results: list[RowQuality] = []
    started = time.perf_counter()
    names = list(runners)
    for index, row in enumerate(rows):
        shift = index % len(names) if names else 0
        by_name: dict[str, RowQuality] = {}
        for name in names[shift:] + names[:shift]:
            quality, (text, stats, _) = evaluate_row(row, name, runners[name],
                                                     timeout_s=timeout_s)
            by_name[name] = quality
            if sink is not None:
                scalars = {k: v for k, v in stats.items()
                           if isinstance(v, (str, int, float, bool))}
                sink.write(json.dumps({**quality.as_json(), "text": text, "stats": scalars})
                           + "\n")
        floor = floor_row(row, timeout_s=timeout_s)
        if sink is not None:
            sink.write(json.dumps(floor.as_json()) + "\n")
            sink.flush()
        in_order = [by_name[name] for name in names] + [floor]
        results += in_order
        if progress:
            _progress(time.perf_counter() - started, row, in_order)
    return results


def run(args: argparse.Namespace) -> int:
    from copygram.bench.data import load_rows, parse_datasets

    path = data_path(args.data)
    names = parse_datasets(args.datasets or ",".join(QUALITY_DATASETS), path)
    approaches = parse_approaches(args.approaches)
    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {args.limit}")
    if args.test_timeout <= 0:
        raise ConfigError(f"--test-timeout must be > 0, got {args.test_timeout}")
    for name in names:
        if not has_tests(name):
            print(f"{name} carries no tests: pass is reported as '-'", file=sys.stderr)
        elif name.endswith("_js") and shutil.which("node") is None:
            raise ConfigError(f"{name} needs node to run its tests, and node is not on PATH; "
                              "install Node.js or leave the JS sets out of --datasets")
    rows = load_rows(names, path, limit=args.limit)
    from copygram.session import EditSession

    config: dict[str, object] = {"backend": args.backend, "model": args.model,
                                 "n_ctx": args.n_ctx}
    if args.n_threads:
        config["n_threads"] = args.n_threads
    session = EditSession.from_config(config)
    runners: dict[str, Approach] = {}
    for name in approaches:
        runners[name] = (program_approach(session) if name == PROGRAM
                         else RewriteBaseline(session.backend))
    with contextlib.ExitStack() as stack:
        sink = stack.enter_context(Path(args.rows).open("w", encoding="utf-8")) if args.rows \
            else None
        results = run_rows([row for dataset_rows in rows.values() for row in dataset_rows],
                           runners, timeout_s=args.test_timeout, sink=sink)
    pooled = pool(results)
    print(markdown_table(pooled), end="")
    if args.json:
        Path(args.json).write_text(json.dumps(pooled, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}", file=sys.stderr)
    if args.plot:
        print(f"wrote {write_plot(args.plot, pooled)}", file=sys.stderr)
    return 0
