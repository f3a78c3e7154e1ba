"""``bench quality --approaches rewrite-excerpt``: the redo of a missed program, run alone.

A program that misses in a long file is redone on an excerpt of it (:mod:`copygram.decode.scoped`);
on a row the redo is seldom reached, so its own pass rate is measured here: every row edited
as that redo would edit it (an excerpt where the document is longer than ``focus_tokens`` and
the instruction names its definitions, else the whole file), in rewrite mode, checked as the
redo is (a result that misses what the instruction names, or damages the file, is refused: the
row is invalid, its error says why)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from copygram.bench.data import EditRow
from copygram.bench.quality.approaches import time_split
from copygram.bench.quality.scoring import Approach, ApproachResult, row_language
from copygram.decode.checked import checked, missed
from copygram.decode.document import EditDocument
from copygram.decode.events import DoneEvent, EditResult
from copygram.decode.policies import SamplingPolicy
from copygram.decode.scoped import scoped_redo
from copygram.errors import CopygramError
from copygram.language.damage import PROSE, guess_language

if TYPE_CHECKING:
    from copygram.session import EditSession


def excerpt_approach(session: EditSession) -> Approach:
    """The redo of a missed program as an :data:`Approach` (``session`` in rewrite mode). Its
    stats: ``scope_lines`` (the excerpt's lines; 0: the whole file), ``prompt_tokens``,
    ``gen_s`` and the time split."""
    if session.mode != "rewrite":
        raise ValueError("excerpt_approach needs a session in rewrite mode")

    def run(row: EditRow) -> ApproachResult:
        language = row_language(row) or guess_language(row.before) or PROSE
        document = EditDocument(row.before, session.backend.tokenize)
        redo = scoped_redo(session.setup(), document, row.instruction,
                           SamplingPolicy(session.sampling), language)
        result: EditResult | None = None
        try:
            for event in checked(redo(), row.before, on_damage="error", language=language):
                if isinstance(event, DoneEvent):
                    result = event.result
        except CopygramError as exc:
            return None, {}, f"{type(exc).__name__}: {exc}"
        assert result is not None, "the redo ended without a result"
        # As the session's redo is checked (decode.checked): one that misses is refused.
        misses = missed(row.before, result.text, row.instruction, language)
        if misses:
            return None, {}, "DamagedEditError: " + "; ".join(str(d) for d in misses)
        stats = result.stats
        return result.text, {"scope_lines": stats.scope_lines, "prompt_tokens": stats.prompt_tokens,
                             "decoded_tokens": stats.decoded_tokens, "gen_s": stats.wall_s,
                             **time_split(stats)}, None

    return run


__all__ = ["excerpt_approach"]
