"""``copygram bench repeat`` (issue 42, point 4): chains of edits on one file, each applied to
the result of the one before, timed cold and warm. The problems are synthetic
(tests/bench/test_kinds.py); the model is scripted."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copygram.bench import repeat
from copygram.bench.chains import build_chain, build_chains
from copygram.bench.data import EditRow
from copygram.bench.kinds import languages
from copygram.bench.kinds_edits import Problem
from copygram.bench.quality.scoring import ApproachResult
from copygram.bench.repeat import (
    Run,
    parse_approaches,
    run_chain,
    run_interleaved,
    summarise,
)
from copygram.bench.testrun import run_tests
from copygram.errors import ConfigError
from copygram.session import EditSession
from copygram.testing import PromptedBackend, SplitPromptBackend
from tests.bench.test_kinds import _py_problem

PYTHON = languages()["python"]


def _problems(count: int = 24) -> list[Problem]:
    parsed = [PYTHON.parse(_py_problem(i)) for i in range(count)]
    return [p for p in parsed if p is not None]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), steps=st.integers(1, 4), lines=st.integers(60, 200))
def test_a_chain_applies_each_step_to_the_result_of_the_one_before(seed: int, steps: int,
                                                                   lines: int) -> None:
    rows = build_chain(PYTHON, _problems(), lines=lines, steps=steps,
                       rng=random.Random(seed), name="c")
    if rows is None:  # too few buggy functions in this draw: build_chains draws again
        return
    assert len(rows) == steps
    for before, after in itertools.pairwise(rows):
        assert before["after"] == after["before"]
    targets = [row["meta"]["targets"][0] for row in rows]  # type: ignore[index]
    assert len(set(targets)) == steps  # each step fixes another function
    for row, target in zip(rows, targets, strict=True):
        assert row["instruction"] == f"Fix bugs in {target}."
        assert row["before"] != row["after"]
        # The step's tests run the fixed function and every neighbour the step leaves fixed,
        # never one still buggy.
        program = str(row["meta"]["test_program"])  # type: ignore[index]
        assert f"check({target})" in program
        for later in targets[targets.index(target) + 1:]:
            assert f"check({later})" not in program


def test_every_steps_reference_passes_and_its_document_fails() -> None:
    chains, dropped = build_chains({"python": _problems()}, chains=1, lines=120, steps=3, seed=1)
    assert len(chains) == 1 and not dropped
    for row in chains[0]:
        assert run_tests(row, str(row["after"])).passed
        assert not run_tests(row, str(row["before"])).passed
    again, _ = build_chains({"python": _problems()}, chains=1, lines=120, steps=3, seed=1)
    assert again == chains  # deterministic for a seed


def test_the_approaches_and_their_conditions() -> None:
    assert parse_approaches("program, rewrite:warm") == {"program": ("warm", "cold"),
                                                          "rewrite": ("warm",)}
    for bad in ("", "program:hot", "magic"):
        with pytest.raises(ConfigError):
            parse_approaches(bad)


@dataclass
class _Recorder:
    log: list[str]

    def prime(self, row: EditRow) -> None:
        self.log.append(f"prime {row.id}")

    def __call__(self, row: EditRow) -> ApproachResult:
        self.log.append(f"edit {row.id}")
        return row.after, {"prompt_tokens": 10, "cached_prompt_tokens": 4,
                           "decoded_tokens": 3}, None


def test_a_chain_runs_warm_then_cold_at_each_step_and_never_warm_first() -> None:
    rows = [EditRow("repeat", f"s{i}", f"v{i}", f"v{i + 1}", "do", meta={"chain": "c",
                                                                          "step": i, "lines": 9})
            for i in range(3)]
    recorder = _Recorder([])
    reported: list[Run] = []
    runs = run_chain(rows, recorder, ("warm", "cold"), name="a", prime=recorder.prime,
                     judge=lambda row, text: text == row.after, report=reported.append)
    assert reported == runs
    assert recorder.log == ["prime s0", "edit s0", "edit s1", "prime s1", "edit s1",
                            "edit s2", "prime s2", "edit s2"]
    assert [(r.step, r.condition) for r in runs] == [(0, "cold"), (1, "warm"), (1, "cold"),
                                                     (2, "warm"), (2, "cold")]
    assert all(r.passed and r.cached_tokens == 4 and r.lines == 9 for r in runs)


def test_warm_only_caches_the_first_steps_prompt_instead_of_running_it() -> None:
    rows = [EditRow("repeat", f"s{i}", f"v{i}", f"v{i + 1}", "do") for i in range(3)]
    recorder = _Recorder([])
    runs = run_chain(rows, recorder, ("warm",), name="a", prime=recorder.prime,
                     judge=lambda row, text: True,
                     warm_up=lambda row: recorder.log.append(f"cache {row.id}"))
    assert recorder.log == ["cache s0", "edit s1", "edit s2"]
    assert [(r.step, r.condition) for r in runs] == [(1, "warm"), (2, "warm")]


def test_interleaved_chains_take_their_steps_in_turn_warm_only() -> None:
    chains = [[EditRow("repeat", f"{c}{i}", f"v{i}", f"v{i + 1}", "do",
                       meta={"chain": c, "step": i, "lines": 9}) for i in range(steps)]
              for c, steps in (("a", 3), ("b", 2))]
    recorder = _Recorder([])
    reported: list[Run] = []
    runs = run_interleaved(chains, recorder, name="x", judge=lambda row, text: True,
                           warm_up=lambda row: recorder.log.append(f"cache {row.id}"),
                           report=reported.append)
    assert recorder.log == ["cache a0", "cache b0", "edit a1", "edit b1", "edit a2"]
    assert reported == runs
    assert [(r.chain, r.step, r.condition) for r in runs] == [
        ("a", 1, "warm"), ("b", 1, "warm"), ("a", 2, "warm")]


def _run(approach: str, condition: str, step: int, seconds: float) -> Run:
    return Run(approach, condition, "c", step, 300, seconds, 100, 10, 5, True)


def test_the_summary_compares_the_same_steps_with_plain_rewriting() -> None:
    runs = [_run("rewrite", "warm", step, 30.0) for step in (1, 2)]
    runs += [_run("program", "cold", step, 10.0) for step in (0, 1, 2)]
    runs += [_run("program", "warm", step, 5.0) for step in (1, 2)]
    summary = {(e["approach"], e["condition"]): e for e in summarise(runs)}
    assert summary[("program", "warm")]["speedup"] == 6.0
    # Cold at step 0 has no baseline run: only the steps both ran count.
    assert summary[("program", "cold")]["edits"] == 2
    assert summary[("program", "cold")]["speedup"] == 3.0
    assert summary[("rewrite", "warm")]["speedup"] == 1.0


@dataclass
class _Backend(SplitPromptBackend, PromptedBackend):
    """Replies by its prompt (the step's instruction), whatever forwards bring the prompt."""


@pytest.mark.parametrize("order", ["instruction_first", "document_first"])
def test_the_command_times_each_edit_and_a_warm_edit_reuses_the_document(
        order: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    data.mkdir()
    with (data / "humanevalfix_docs_python.dev.jsonl").open("w") as handle:
        for i in range(24):
            row = _py_problem(i)
            handle.write(json.dumps({"id": row.id, "lang": "python", "before": row.before,
                                     "after": row.after, "instruction": row.instruction,
                                     "meta": row.meta}) + "\n")
    chains, _ = build_chains({"python": _problems()}, chains=1, lines=60, steps=3, seed=0)
    replies = tuple((str(r["instruction"]), f"```python\n{r['after']}```") for r in chains[0])
    configs: list[dict[str, object]] = []

    def from_config(config: dict[str, object]) -> EditSession:
        configs.append(config)
        return EditSession(_Backend(replies=replies), mode="rewrite", prompt_order=order)

    monkeypatch.setattr(EditSession, "from_config", from_config)
    out = tmp_path / "repeat.json"
    parser = argparse.ArgumentParser()
    repeat.add_arguments(parser)  # the flags bench quality shares (bench.model_args)
    args = parser.parse_args([
        "--data", str(data), "--model", "m", "--lines", "60", "--steps", "3",
        "--approaches", "rewrite-mode,rewrite:warm", "--route", f"prompt_order={order}",
        "--json", str(out)])
    assert repeat.run(args) == 0
    assert configs[0]["route"] == {"prompt_order": order, "batch_invariant": "auto"}
    result = json.loads(out.read_text())
    runs = [Run(**r) for r in result["runs"]]
    assert all(r.passed for r in runs)
    assert {(r.approach, r.condition) for r in runs} == {
        ("rewrite-mode", "cold"), ("rewrite-mode", "warm"), ("rewrite", "warm")}
    cold = {r.step: r for r in runs if r.condition == "cold"}
    for r in runs:
        if r.condition == "warm":
            # Warm, the cache holds the step before's prompt: with the document first it keeps
            # the document up to the line that step changed; otherwise the fixed prefix and
            # what two instructions share (this byte-level model: one token a byte).
            if order == "document_first":
                assert r.cached_tokens > cold[r.step].cached_tokens + 100
            else:
                shared = os.path.commonprefix([str(chains[0][r.step - i]["instruction"])
                                               for i in (0, 1)])
                assert 0 <= r.cached_tokens - cold[r.step].cached_tokens <= len(shared)
    assert "| rewrite-mode | warm | 2 | 2 | 0 |" in capsys.readouterr().out
