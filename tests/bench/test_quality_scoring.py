"""``bench quality``'s metrics, one row's evaluation, pooling and the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copygram.bench.data import EditRow
from copygram.bench.quality import (
    UNCHANGED,
    RowQuality,
    evaluate_row,
    exact_match,
    floor_row,
    line_similarity,
    markdown_table,
    pool,
    repeat_row,
    write_plot,
)
from tests.bench.rows import QUIX_BUGGY, QUIX_FIXED, quix_row


def test_line_similarity() -> None:
    assert line_similarity("a\nb\nc\n", "a\nb\nc\n") == 1.0
    assert line_similarity("", "") == 1.0
    assert line_similarity("x\ny\n", "a\nb\n") == 0.0
    assert line_similarity("a\nb\nc\nd\n", "a\nB\nc\nd\n") == pytest.approx(0.75)
    assert line_similarity("a\nb", "a\r\nb\n") == 1.0  # endings and the last newline are free
    assert line_similarity("a\n", "") == 0.0
    assert line_similarity("a\nb\n\n\n", "a\nb") == 1.0  # consistent with exact_match


def test_exact_match_ignores_only_trailing_newlines() -> None:
    assert exact_match("a\nb", "a\nb\n")
    assert exact_match("a\nb\n\n", "a\nb\n")
    assert not exact_match("a\nb ", "a\nb\n")
    assert not exact_match("a\n\nb\n", "a\nb\n")


class RowApproach:
    """A fake approach: returns the same thing for every row."""

    def __init__(self, text: str | None, error: str | None = None, tokens: int = 7) -> None:
        self.text, self.error, self.tokens = text, error, tokens

    def __call__(self, row: EditRow) -> tuple[str | None, dict[str, object], str | None]:
        return self.text, {"decoded_tokens": self.tokens}, self.error


def test_evaluate_row_valid_invalid_and_crash() -> None:
    row = quix_row()
    good, (text, _, _) = evaluate_row(row, "a", RowApproach(QUIX_FIXED + "\n\n"))
    assert text == QUIX_FIXED + "\n\n"
    assert good.valid and good.passed and good.exact and not good.unchanged
    assert good.similarity == 1.0 and good.decoded_tokens == 7 and good.test_status == "pass"
    assert not good.crashed and good.error is None and good.wall_s >= 0

    same, _ = evaluate_row(row, "a", RowApproach(QUIX_BUGGY))
    assert same.valid and same.unchanged and not same.passed and not same.exact

    invalid, _ = evaluate_row(row, "a", RowApproach(None, "GenerationError: ran out"))
    assert not invalid.valid and invalid.passed is False and invalid.similarity == 0.0
    assert invalid.error == "GenerationError: ran out" and not invalid.crashed

    def boom(row: EditRow) -> tuple[str | None, dict[str, object], str | None]:
        raise AssertionError

    crash, result = evaluate_row(row, "a", boom)
    assert crash.crashed and not crash.valid and result[0] is None
    assert crash.error is not None
    assert crash.error.startswith(f"AssertionError at {Path(__file__).name}:")


class Runs:
    """A fake approach whose runs return the given outputs and report the given times, in
    turn (an output of ``"crash"`` raises)."""

    def __init__(self, *runs: tuple[str, float]) -> None:
        self.runs = list(runs)

    def __call__(self, row: EditRow) -> tuple[str | None, dict[str, object], str | None]:
        text, gen = self.runs.pop(0)
        if text == "crash":
            raise RuntimeError("a crash")
        return text, {"raw": f"```\n{text}```", "gen_s": gen}, None


def test_a_repeated_row_keeps_the_fastest_times_and_checks_the_output() -> None:
    row = quix_row()
    approach = Runs((QUIX_FIXED, 3.0), (QUIX_FIXED, 1.0), (QUIX_FIXED, 2.0))
    first, result = evaluate_row(row, "a", approach)
    assert (first.repeats, first.reproduced, first.gen_s) == (1, None, 3.0)
    quality = first
    for _ in range(2):
        quality = repeat_row(quality, result, row, approach)
    assert (quality.repeats, quality.reproduced, quality.gen_s) == (3, True, 1.0)
    assert quality.wall_s <= first.wall_s
    # The metrics and tests are the first run's.
    assert quality.passed and quality.test_status == first.test_status

    # One different output is enough; the times still count (the run did its work).
    approach = Runs((QUIX_FIXED, 3.0), (QUIX_BUGGY, 1.0), (QUIX_FIXED, 2.0))
    first, result = evaluate_row(row, "a", approach)
    quality = repeat_row(first, result, row, approach)
    assert quality.reproduced is False and quality.gen_s == 1.0 and quality.passed
    assert repeat_row(quality, result, row, approach).reproduced is False

    # A crashed run is no measure of speed, and not a reproduction either.
    approach = Runs((QUIX_FIXED, 3.0), ("crash", 0.0))
    first, result = evaluate_row(row, "a", approach)
    quality = repeat_row(first, result, row, approach)
    assert quality.reproduced is False and quality.gen_s == 3.0
    assert quality.wall_s == first.wall_s

    # The same model output but a different raw text is a different output.
    approach = Runs((QUIX_FIXED, 3.0), (QUIX_FIXED, 1.0))
    first, result = evaluate_row(row, "a", approach)
    changed = (result[0], {**result[1], "raw": "something else"}, result[2])
    assert repeat_row(first, changed, row, approach).reproduced is False


def test_floor_row() -> None:
    floor = floor_row(quix_row())
    assert floor.approach == UNCHANGED and floor.valid and floor.unchanged
    assert floor.passed is False and floor.wall_s == 0.0
    assert floor.similarity == line_similarity(QUIX_BUGGY, QUIX_FIXED)


def _quality(dataset: str, approach: str, *, valid: bool = True, passed: bool | None = True,
             exact: bool = False, sim: float = 0.5, wall: float = 1.0,
             crashed: bool = False, damage: str = "", redone: str = "") -> RowQuality:
    return RowQuality(dataset, "r", approach, valid=valid, passed=passed, exact=exact,
                      unchanged=False, similarity=sim, wall_s=wall, decoded_tokens=3,
                      crashed=crashed, damage=damage, redone=redone)


def test_pool_json_shape_and_table(tmp_path: Path) -> None:
    rows = [
        _quality("d1", "program", passed=True, exact=True, sim=1.0, wall=2.0, redone="duplicate"),
        _quality("d1", "program", valid=False, passed=False, sim=0.0, wall=1.0, crashed=True),
        _quality("d1", "rewrite", passed=False, sim=0.5, wall=4.0, damage="marker,parse"),
        _quality("d2", "rewrite", passed=None, sim=0.25),
    ]
    pooled = json.loads(json.dumps(pool(rows)))
    assert list(pooled) == ["d1", "d2", "all"]
    every = pooled["all"]["rewrite"]  # both sets' rows, pass counted over the tested one
    assert (every["rows"], every["tested"], every["pass"]) == (2, 1, 0)
    assert every["wall_s"] == pytest.approx(4.0 + 1.0) and every["gen_s"] is None
    assert list(pooled["d1"]) == ["program", "rewrite"]
    program = pooled["d1"]["program"]
    required = {"pass", "exact", "valid", "rows", "sim", "wall_s"}
    assert required <= set(program)
    assert (program["pass"], program["exact"], program["valid"], program["rows"]) == (1, 1, 1, 2)
    assert program["sim"] == pytest.approx(0.5)  # the invalid row counts 0
    assert program["sim_valid"] == pytest.approx(1.0)
    assert program["wall_s"] == pytest.approx(3.0)
    assert program["crashed"] == 1 and program["decoded_tokens"] == 6
    assert pooled["d2"]["rewrite"]["pass"] is None  # a set without tests
    table = markdown_table(pool(rows))
    assert "| d1 | program | 1/2 | 1/2 | 1/2 | 0/2 | 1/2 | 0/2 | 1/2 | 0.500 | 3.0 |" in table
    assert "| d1 | rewrite | 0/1 | 0/1 | 1/1 | 0/1 | 0/1 | 1/1 | 0/1 |" in table
    assert (program["damaged"], program["redone"]) == (0, 1)
    assert "| d2 | rewrite | - |" in table
    assert "| all | rewrite | 0/1 | 0/2 |" in table
    assert list(pool(rows[:3])) == ["d1"]  # one set: no pooled entry
    pytest.importorskip("matplotlib")
    path = write_plot(tmp_path / "plots", pool(rows))
    assert path.read_bytes().startswith(b"\x89PNG")


def test_every_output_is_read_by_the_damage_check() -> None:
    from copygram.bench.quality.scoring import score

    row = quix_row()
    clean, _ = score(row, "rewrite", QUIX_FIXED)
    assert clean.damage == ""
    damaged, _ = score(row, "rewrite", QUIX_FIXED + "=======\n")
    assert damaged.damage == "marker,parse"
    assert damaged.passed is False
