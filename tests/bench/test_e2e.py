from __future__ import annotations

import json
from pathlib import Path

import pytest

from copygram.bench.data import (
    DATA_ENV,
    EditRow,
    data_dir,
    iter_rows,
    parse_datasets,
    read_edit_rows,
)
from copygram.bench.e2e import (
    COPYGRAM,
    FULL,
    REWRITE_MODE,
    RowResult,
    approaches,
    load_curve,
    run_row,
    summarize,
    summary_table,
    write_plots,
)
from copygram.bench.kernel import bound_terms, curve_at
from copygram.bench.replay import replay_rewrite
from copygram.ceiling import ceiling
from copygram.decode.stats import RunStats
from copygram.errors import ConfigError, DocumentError
from copygram.language.oracle import oracle
from copygram.session import EditSession
from copygram.testing import ScriptedBackend

BEFORE = "".join(f"line number {i} of a longish document\n" for i in range(1, 31))
AFTER = BEFORE.replace("line number 7 of", "LINE NUMBER SEVEN of")


def _row(i: int = 0) -> EditRow:
    return EditRow("toy", f"toy/{i}", BEFORE, AFTER, instruction="shout line 7")


def _run(rotate: int = 0) -> tuple[ScriptedBackend, RowResult]:
    backend = ScriptedBackend(BEFORE, oracle(BEFORE, AFTER))
    session = EditSession(backend, syntax="lines", mode="program")
    return backend, run_row(backend, session, _row(rotate), [10, 32], {8: 2.0, 64: 3.0},
                            rotate=rotate)


@pytest.mark.parametrize("rotate", [0, 1, 2])
def test_run_row_accounts_every_approach(rotate: int) -> None:
    _, result = _run(rotate)
    assert not result.skipped
    stats = result.stats
    assert set(stats) == set(approaches([10, 32]))
    n = len(AFTER.encode())
    assert stats[FULL].forwards == n == stats[FULL].output_tokens
    for k in (10, 32):
        lookup = stats[f"lookup_k{k}"]
        assert lookup.output_tokens == n
        assert lookup.decoded_tokens + lookup.drafted_tokens == n
        assert lookup.forwards < n / 4  # the document is mostly copied from the prompt
    assert stats[COPYGRAM].forwards < stats[FULL].forwards
    # Rewrite mode writes after's tokens too, the document drafting them (one changed line).
    rewrite = stats[REWRITE_MODE]
    assert rewrite.output_tokens == n == rewrite.decoded_tokens + rewrite.drafted_tokens
    assert rewrite.forwards == rewrite.decoded_tokens < stats["lookup_k10"].forwards
    assert 0 < rewrite.rejected_tokens < n / 10
    line = json.loads(json.dumps(result.as_json()))
    assert line["speedup"][FULL] == pytest.approx(1.0)


def test_repeats_keep_each_approach_fastest_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from copygram.bench import e2e

    walls = iter([0.5, 0.2, 0.9])  # full's three runs: the second is kept

    def full(backend: object, target: list[int]) -> RunStats:
        return RunStats(output_tokens=len(target), wall_s=next(walls))

    monkeypatch.setattr(e2e, "full_regeneration", full)
    backend = ScriptedBackend(BEFORE, oracle(BEFORE, AFTER))
    result = run_row(backend, EditSession(backend, syntax="lines",
                                          mode="program"), _row(), [10], repeats=3)
    assert result.stats[FULL].wall_s == 0.2
    assert next(walls, None) is None  # every repeat ran full once
    assert set(result.stats) == set(approaches([10]))
    with pytest.raises(ConfigError, match="repeats"):
        run_row(backend, EditSession(backend, syntax="lines",
                                     mode="program"), _row(), [10], repeats=0)


def test_summary_layout_and_table(tmp_path: Path) -> None:
    results = [_run(i)[1] for i in range(2)]
    summary = summarize(results, [10, 32])
    for name in approaches([10, 32]):
        entry = summary[name]
        assert isinstance(entry, dict)
        assert set(entry) >= {"pooled_speedup", "median_speedup", "forwards", "rows"}
        assert entry["rows"] == 2
    share = summary["copygram_beats_lookup_share"]
    assert isinstance(share, float) and 0.0 <= share <= 1.0
    assert isinstance(summary["modelled_bound"], float) and summary["modelled_bound"] >= 1.0
    table = summary_table({"toy": summary}, [10, 32])
    assert table.count("\n") == 3 and "| toy | 2 |" in table
    paths = write_plots(tmp_path, {"toy": results}, {"toy": summary}, [10, 32])
    assert all(p.stat().st_size > 0 for p in paths)


def test_context_overflow_is_skipped_not_raised() -> None:
    backend = ScriptedBackend(BEFORE, oracle(BEFORE, AFTER), context_length=200)
    result = run_row(backend, EditSession(backend, syntax="lines", mode="program"), _row(), [10])
    assert result.skipped and "n_ctx" in result.skipped


def test_kernel_curve_interpolates_in_log_n(tmp_path: Path) -> None:
    curve = {8: 2.0, 32: 3.0}
    assert curve_at(curve, 1) == 1.0
    assert curve_at(curve, 16) == pytest.approx(2.5)
    assert curve_at(curve, 1000) == 3.0
    stats = RunStats(decoded_tokens=10, copy_span_tokens=[32, 8])
    num, den = bound_terms(stats, curve)
    assert num == 50.0
    assert den == pytest.approx(10 + 32 / 3 + 8 / 2)
    assert load_curve(tmp_path / "missing.json", "llamacpp") is None


def test_data_loading(tmp_path: Path) -> None:
    rows = [{"id": str(i), "before": "" if i == 1 else f"b{i}\n", "after": f"a{i}\n",
             "instruction": "do"} for i in range(5)]
    (tmp_path / "toy.dev.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    got = list(iter_rows("toy", tmp_path, limit=3))
    assert [r.id for r in got] == ["0", "2", "3"]  # the empty `before` is skipped
    assert parse_datasets("toy", tmp_path) == ["toy"]
    assert parse_datasets("all", tmp_path) == ["toy"]
    with pytest.raises(ConfigError, match="unknown dataset"):
        parse_datasets("nope", tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        list(iter_rows("toy", tmp_path / "absent"))


def test_the_data_folder_comes_from_the_flag_or_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "toy.dev.jsonl").write_text(json.dumps({"before": "b\n", "after": "a\n"}) + "\n")
    monkeypatch.delenv(DATA_ENV, raising=False)
    with pytest.raises(ConfigError) as info:
        data_dir(None)
    assert "--data" in str(info.value) and DATA_ENV in str(info.value)
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    assert data_dir(None) == tmp_path.resolve()
    assert [r.id for r in iter_rows("toy")] == ["toy:1"]
    with pytest.raises(ConfigError, match=DATA_ENV):
        data_dir(tmp_path / "absent")  # the flag wins, and a wrong one says how to fix it


def test_one_jsonl_reader_for_the_benchmarks_and_the_ceiling(tmp_path: Path) -> None:
    good = tmp_path / "set.dev.jsonl"
    good.write_text(json.dumps({"id": "x", "before": "a\n", "after": "b\n", "lang": "py"})
                    + "\n\n")
    assert list(read_edit_rows(good)) == [EditRow("set", "x", "a\n", "b\n", lang="py")]
    assert ceiling(good).rows == 1
    for bad in ('{"before": "a"}', '{"before": 1, "after": "b"}', "not json"):
        path = tmp_path / "bad.jsonl"
        path.write_text('{"before": "", "after": ""}\n' + bad + "\n")
        with pytest.raises(DocumentError, match=r"bad.jsonl:2: .*'before' and 'after'"):
            ceiling(path)


def test_rewrite_replay_is_the_output_through_rewrite_modes_loop() -> None:
    backend = ScriptedBackend(BEFORE, oracle(BEFORE, AFTER))
    session = EditSession(backend, mode="rewrite")
    done = replay_rewrite(session, BEFORE, AFTER, instruction="shout line 7")
    assert done.text == AFTER and done.stop_reason == "eos"
    assert list(done.token_ids) == backend.tokenize(AFTER)
    stats = done.stats
    assert stats.prompt_tokens == len(backend.tokenize(session.prompt(BEFORE, "shout line 7"),
                                                       special=True))
    # A prediction unrelated to the output drafts nothing: only the output's repeats of
    # itself do (its lines share most of their words), in more forwards.
    unrelated = replay_rewrite(session, BEFORE, AFTER, prediction="zzzz\n" * 50)
    assert unrelated.text == AFTER and unrelated.stats.forwards > stats.forwards
    assert unrelated.stats.drafted_tokens < stats.drafted_tokens
    assert replay_rewrite(session, BEFORE, "").token_ids == ()
    with pytest.raises(DocumentError, match="the prompt and the output"):
        replay_rewrite(EditSession(ScriptedBackend(BEFORE, context_length=400), mode="rewrite"),
                       BEFORE, AFTER)
