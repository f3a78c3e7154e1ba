"""``bench drafts``: the replay counts the forwards rewrite mode's loop makes, prompt lookup
drafts as the peers do, and the command reads a quality run's rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import assume, given, settings

from copygram import EditSession
from copygram.backends.base import BatchProfile
from copygram.bench.drafts import PromptLookup, read_outputs, replay_drafts
from copygram.cli import main
from copygram.decode.loop import prompt_ids
from copygram.decode.plain_text import prediction_source
from copygram.decode.rewrite import rewrite_budget
from copygram.errors import ConfigError
from copygram.testing import EOS, ScriptedBackend
from tests.strategies import related_documents

FLAT = BatchProfile(((1, 1.0), (64, 1.0)), 0.0)  # every forward one step: cost == forwards


@settings(max_examples=30, deadline=None)
@given(related_documents())
def test_the_replay_makes_the_forwards_rewrite_mode_makes(pair: tuple[str, str]) -> None:
    before, after = pair
    budget = rewrite_budget(len(before.encode()))
    assume(len(after.encode()) < budget)  # the edit's whole reply
    backend = ScriptedBackend(reply=after)
    session = EditSession(backend, on_damage="keep", mode="rewrite")
    stats = session.edit(before, "x").stats
    setup = session.setup()
    prompt = prompt_ids(setup, before, "x")
    output = [*backend.tokenize(after), EOS]
    replayed = replay_drafts(prediction_source(setup, before, prompt), output,
                             backend.batch_profile, budget)
    # The stats count the forwards after the prompt's, as the replay does.
    assert replayed.forwards == stats.forwards
    assert replayed.accepted == stats.drafted_tokens
    assert replayed.drafted - replayed.accepted == stats.rejected_tokens


def test_without_drafts_a_forward_per_token() -> None:
    replayed = replay_drafts(None, [1, 2, 3, 4], FLAT)
    assert (replayed.forwards, replayed.cost, replayed.drafted) == (3, 3.0, 0)
    assert replay_drafts(None, [], FLAT).forwards == 0


def test_prompt_lookup_drafts_after_the_first_match_of_the_last_2_gram_then_1_gram() -> None:
    lookup = PromptLookup([5, 6, 7, 8, 5, 6, 9], k=2)
    # "5 6" is in the prompt twice: the first match's continuation.
    assert lookup.propose([5, 6]).tokens == [7, 8]  # type: ignore[union-attr]
    # No 2-gram "1 6": the 1-gram "6" (first at index 1).
    assert lookup.propose([1, 6]).tokens == [7, 8]  # type: ignore[union-attr]
    # The output is searched too, and a match at the very end has nothing to draft.
    assert lookup.propose([3, 4, 3]).tokens == [4, 3]  # type: ignore[union-attr]
    assert PromptLookup([]).propose([1, 2]) is None
    with pytest.raises(ConfigError, match="k >= 1"):
        PromptLookup([1], k=0)
    # A repeating output: after its first period, drafts are right and cut forwards.
    output = [1, 2, 3, 4, 5] * 6
    assert replay_drafts(PromptLookup([], k=10), output, FLAT).forwards < len(output) / 3


def record(dataset: str, row: str, approach: str, raw: str | None) -> str:
    return json.dumps({"dataset": dataset, "row_id": row, "approach": approach,
                       "stats": {"raw": raw} if raw is not None else None, "error": None})


def test_the_rows_file_gives_rewrite_mode_s_output_else_the_baseline_s() -> None:
    lines = [record("a", "1", "rewrite", "base"), record("a", "1", "rewrite-mode", "mode"),
             record("a", "2", "rewrite", "only base"), record("a", "3", "program", "p"), ""]
    outputs = read_outputs(lines)
    assert [(o.row_id, o.text) for o in outputs] == [("1", "mode"), ("2", "only base")]
    with pytest.raises(ConfigError, match="bench quality --rows"):
        read_outputs(["{not json"])


def test_the_command_refuses_a_missing_or_empty_rows_file(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    assert main(["bench", "drafts", "--rows", str(tmp_path / "none.jsonl")]) == 1
    assert "no such file" in capsys.readouterr().err
    empty = tmp_path / "rows.jsonl"
    empty.write_text(record("a", "1", "program", "p") + "\n", encoding="utf-8")
    assert main(["bench", "drafts", "--rows", str(empty)]) == 1
    assert "no rewrite or rewrite-mode output" in capsys.readouterr().err
