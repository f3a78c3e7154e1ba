"""The metrics of ``bench quality``: one approach's output on one row scored against the row's
``after`` and tests (:class:`RowQuality`), an approach run and scored (:func:`evaluate_row`), and
the copy-unchanged floor (:func:`floor_row`). :mod:`copygram.bench.quality` describes each metric.
"""

from __future__ import annotations

import difflib
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from copygram.bench.data import EditRow
from copygram.bench.testrun import DEFAULT_TIMEOUT_S, TestOutcome, has_tests, run_tests
from copygram.language.damage import find_damage

__all__ = ["APPROACHES", "AUTO", "DEFAULT_APPROACHES", "EXCERPT", "LOOKUP", "PROGRAM", "QUALITY_DATASETS", "REWRITE",
           "REWRITE_MODE", "UNCHANGED", "Approach",
           "ApproachResult", "RowQuality", "evaluate_row", "exact_match", "floor_row",
           "line_similarity", "repeat_row", "score"]

PROGRAM = "program"
AUTO = "auto"
REWRITE = "rewrite"
REWRITE_MODE = "rewrite-mode"
EXCERPT = "rewrite-excerpt"
LOOKUP = "lookup"
UNCHANGED = "copy_unchanged"
APPROACHES = (PROGRAM, REWRITE, REWRITE_MODE, AUTO, LOOKUP, EXCERPT)
DEFAULT_APPROACHES = (AUTO, PROGRAM, REWRITE, REWRITE_MODE)
"""``lookup`` is left out by default: it loads a second model and decodes every row once more
(about as long again as the baseline's decode), for a speed comparison, not a quality one."""
QUALITY_DATASETS: tuple[str, ...] = (
    "humanevalfix_docs_python",
    "humanevalfix_docs_js",
    "quixbugs_python",
)
"""The default sets: bug fixes whose rows carry tests (HumanEvalFix Python and JS, QuixBugs)."""

ApproachResult = tuple[str | None, Mapping[str, object], str | None]
"""``(document or None, stats, error or None)``: what an approach returns for one row."""

Approach = Callable[[EditRow], ApproachResult]


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
    forwards: int = 0  # forwards after the prompt, where the approach reports them
    accepted_prediction_tokens: int = 0  # rewrite mode: drafted tokens the output took
    rejected_prediction_tokens: int = 0  # rewrite mode: drafted tokens verified and dropped
    same_as_rewrite: bool | None = None  # rewrite mode, lookup: raw output == the baseline's
    unchanged_retries: int = 0  # program mode: blocks that changed nothing, written again
    # The generation phase of wall_s: from the end of the prompt's forward, where the approach
    # reports it (the prompt costs every approach the same and no draft can shorten it).
    gen_s: float | None = None
    # Rewrite mode: the output's tokens and the decode steps a perfect drafter would spend on
    # them (copygram.bench.quality.bound), for the measured / bound ratio.
    output_tokens: int = 0
    bound_steps: float | None = None
    # ``bench quality --repeats``: runs of the approach on this row; wall_s and gen_s are the
    # fastest run's, and ``reproduced`` says whether every later run wrote the first run's output
    # (None after one run).
    repeats: int = 1
    reproduced: bool | None = None
    # What copygram's damage check (copygram.language.damage) finds in the output: its kinds,
    # comma-joined ("" none); the same check `copygram edit` refuses a file by, read here on
    # every approach's output, the baselines' too.
    damage: str = ""
    # Program mode: the damage kinds that made the session redo the edit in rewrite mode.
    redone: str = ""

    def as_json(self) -> dict[str, object]:
        return asdict(self)


_LANGUAGES = {"python": "python", "python3": "python", "py": "python", "js": "javascript",
              "javascript": "javascript", "ts": "typescript", "java": "java", "go": "go",
              "c": "c", "cpp": "cpp", "rust": "rust"}


def row_language(row: EditRow) -> str | None:
    """The language of ``row``'s file as the damage check names it (``None``: guessed)."""
    return _LANGUAGES.get(row.lang.lower())


def _decoded(stats: Mapping[str, object], key: str = "decoded_tokens") -> int:
    value = stats.get(key, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _seconds(stats: Mapping[str, object], key: str) -> float | None:
    value = stats.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


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
    damage = find_damage(row.before, text, language=row_language(row))
    return RowQuality(
        row.dataset, row.id, approach, valid=True,
        passed=outcome.passed if outcome is not None else None,
        exact=exact_match(text, row.after), unchanged=exact_match(text, row.before),
        similarity=line_similarity(text, row.after), wall_s=wall_s,
        decoded_tokens=decoded_tokens, error=error, crashed=crashed,
        test_status=outcome.status if outcome is not None else None,
        damage=",".join(sorted({d.kind for d in damage})),
    ), outcome


def _timed(row: EditRow, approach: Approach) -> tuple[ApproachResult, float, bool]:
    """``approach(row)``, its wall time, and whether it crashed (its result then carries the
    exception's type, place and message as the error; ``KeyboardInterrupt`` propagates)."""
    start = time.perf_counter()
    crashed = False
    try:
        result: ApproachResult = approach(row)
    except Exception as exc:  # noqa: BLE001 - a crash is recorded, never fatal to the run
        result = (None, {}, _crash_text(exc))
        crashed = True
    return result, time.perf_counter() - start, crashed


def evaluate_row(row: EditRow, name: str, approach: Approach, *,
                 timeout_s: float = DEFAULT_TIMEOUT_S
                 ) -> tuple[RowQuality, ApproachResult]:
    """Run ``approach`` on ``row`` (timed) and score what it returned.

    An exception out of the approach never propagates (``KeyboardInterrupt`` aside): the row is
    recorded invalid with ``crashed=True`` and the exception's type, place and message.
    Returns the row's metrics and the approach's raw return value.
    """
    result, wall, crashed = _timed(row, approach)
    text, stats, error = result
    quality, _ = score(row, name, text, wall_s=wall, decoded_tokens=_decoded(stats),
                       error=error, crashed=crashed, timeout_s=timeout_s)
    quality = replace(quality, forwards=_decoded(stats, "forwards"),
                      accepted_prediction_tokens=_decoded(stats, "accepted_prediction_tokens"),
                      rejected_prediction_tokens=_decoded(stats, "rejected_prediction_tokens"),
                      gen_s=_seconds(stats, "gen_s"),
                      output_tokens=_decoded(stats, "output_tokens"),
                      unchanged_retries=_decoded(stats, "unchanged_retries"),
                      redone=str(stats.get("redone", "")),
                      bound_steps=_seconds(stats, "bound_steps"))
    return quality, result


_OUTPUT_KEYS = ("raw", "program")
"""The stats that hold what the model wrote (rewrites' raw text, program mode's program)."""


def repeat_row(quality: RowQuality, first: ApproachResult, row: EditRow,
               approach: Approach) -> RowQuality:
    """``quality`` (the first run's, whose result was ``first``) after one more run of
    ``approach`` on ``row``: timed, not scored again (its tests are the first run's).

    The times become the faster of the two (the run the machine disturbed least: a
    ``bench quality`` row is deterministic, so its runs differ only by noise, and the minimum
    estimates its cost best, as ``timeit`` reports it); ``reproduced`` stays true while the run
    returns the first run's document, error and model output (``raw``, ``program``). A run that
    crashes, or follows a crashed first run, is no measure of speed: the times stay."""
    result, wall, crashed = _timed(row, approach)
    same = (result[0] == first[0] and result[2] == first[2]
            and all(result[1].get(k) == first[1].get(k) for k in _OUTPUT_KEYS))
    reproduced = same and quality.reproduced is not False
    quality = replace(quality, repeats=quality.repeats + 1, reproduced=reproduced)
    if crashed or quality.crashed:
        return quality
    gen = _seconds(result[1], "gen_s")
    return replace(quality, wall_s=min(quality.wall_s, wall),
                   gen_s=(min(quality.gen_s, gen) if quality.gen_s is not None and gen is not None
                          else quality.gen_s))


def floor_row(row: EditRow, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> RowQuality:
    """The copy-unchanged floor: ``before`` scored as if an approach had returned it."""
    quality, _ = score(row, UNCHANGED, row.before, timeout_s=timeout_s)
    return quality
