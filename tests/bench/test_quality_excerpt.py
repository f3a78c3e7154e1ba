"""``bench quality --approaches rewrite-excerpt``: the redo of a missed program run alone, over
a scripted model (copygram.bench.quality.excerpt)."""

from __future__ import annotations

import pytest

from copygram.bench.data import EditRow
from copygram.bench.quality.excerpt import excerpt_approach
from copygram.bench.quality.scoring import EXCERPT, evaluate_row
from copygram.decode.prompt import REWRITE_SYSTEM
from copygram.session import EditSession
from copygram.testing import PromptedBackend
from tests.decode.test_scoped import BUG, FIX, FIXED, INSTRUCTION, STATS, WHOLE_ONLY, _excerpt

ROW = EditRow("kinds_python", "stats/median", STATS, FIXED, INSTRUCTION, lang="python")


def _session(scoped: str, focus_tokens: int = 64) -> EditSession:
    backend = PromptedBackend(STATS, replies=((WHOLE_ONLY, FIXED), (REWRITE_SYSTEM, scoped)))
    return EditSession(backend, mode="rewrite", focus_tokens=focus_tokens)


def test_the_excerpt_is_rewritten_and_spliced_back() -> None:
    quality, _ = evaluate_row(ROW, EXCERPT, excerpt_approach(_session(_excerpt().replace(BUG, FIX))))
    assert quality.valid and quality.exact


def test_an_excerpt_rewrite_that_misses_is_an_invalid_row_that_says_why() -> None:
    text, _, error = excerpt_approach(_session(_excerpt()))(ROW)
    assert text is None and error is not None and "left its definition as it was" in error


def test_a_short_file_is_rewritten_whole() -> None:
    text, stats, error = excerpt_approach(_session(_excerpt(), focus_tokens=0))(ROW)
    assert (text, stats["scope_lines"], error) == (FIXED, 0, None)
    text, stats, _ = excerpt_approach(_session(_excerpt().replace(BUG, FIX)))(ROW)
    assert text == FIXED and isinstance(stats["scope_lines"], int) and stats["scope_lines"] > 0


def test_it_needs_a_rewrite_mode_session() -> None:
    with pytest.raises(ValueError, match="rewrite mode"):
        excerpt_approach(EditSession(PromptedBackend(STATS), mode="program"))
