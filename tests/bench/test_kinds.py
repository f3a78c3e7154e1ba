"""``copygram bench kinds`` (issue 40): edit rows of many kinds and sizes assembled from
HumanEvalFix-shaped problems, each judged by a test program that sees the whole file.

The inputs here are synthetic problems written below (the shared data is read only by the last
test, skipped where it is absent)."""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copygram.bench import kinds
from copygram.bench.data import EditRow, read_edit_rows
from copygram.bench.kinds import KINDS, SIZES, build_rows
from copygram.bench.kinds_edits import CODE_KINDS, first_sentence
from copygram.bench.quality.command import parse_group_by, regroup
from copygram.bench.quality.report import pool
from copygram.bench.quality.scoring import RowQuality
from copygram.bench.testrun import harness_program, has_tests, run_tests, text_check
from copygram.cli import build_parser
from copygram.errors import ConfigError
from copygram.language.lines import count_lines
from copygram.language.passages import named_passages
from tests.bench.rows import assert_rows_hold, row_meta

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

PROBLEMS = 60


def _py_problem(i: int) -> EditRow:
    name = f"scale_{i}"
    imports = "from typing import List\n\n\n" if i % 2 else ""
    helper = "def _shared():\n    return 0\n\n\n" if i in (3, 4) else ""  # 3 and 4 collide
    ann = "List[int]" if imports else "list[int]"  # a file of even problems only imports nothing
    body = (f"{imports}{helper}def {name}(values: {ann}, factor: int) -> {ann}:\n"
            f'    """Multiply every value by factor and add {i + 1}.\n\n'
            f"    >>> {name}([1, 2], 3)\n    [{3 + i + 1}, {6 + i + 1}]\n    \"\"\"\n"
            f"    result = []\n    for value in values:\n"
            f"        result.append(value * factor + {i + 1}{{bug}})\n    return result\n")
    test = (f"\n\ndef check({name}):\n    assert {name}([1, 2], 3) == [{4 + i}, {7 + i}]\n"
            f"    assert {name}([], 5) == []\n\ncheck({name})")
    return EditRow("humanevalfix_docs_python", f"synthetic/Python/{i}",
                   before=body.replace("{bug}", " - 1"), after=body.replace("{bug}", ""),
                   instruction=f"Fix bugs in {name}.", lang="python",
                   meta={"entry_point": name, "test": test})


def _js_problem(i: int) -> EditRow:
    name = f"scale{i}"
    body = (f"/* Multiply every value by factor and add {i + 1}.\n"
            f"  >>> {name}([1, 2], 3)\n  [{4 + i}, {7 + i}]\n  */\n"
            f"const {name} = (values, factor) => {{\n  const result = [];\n"
            f"  for (const value of values) {{\n    result.push(value * factor + {i + 1}{{bug}});\n"
            f"  }}\n  return result;\n}}\n")
    test = (f"const testScale{i} = () => {{\n  console.assert(JSON.stringify({name}([1, 2], 3)) "
            f"=== JSON.stringify([{4 + i}, {7 + i}]))\n}}\n\ntestScale{i}()\n")
    return EditRow("humanevalfix_docs_js", f"synthetic/JavaScript/{i}",
                   before=body.replace("{bug}", " - 1"), after=body.replace("{bug}", ""),
                   instruction=f"Fix bugs in {name}.", lang="js",
                   meta={"entry_point": name, "test": test})


def _prose(i: int) -> EditRow:
    lines = [f"Paragraph {i} sentence {k} says something about topic {i * 7 + k}." for k in range(5)]
    after = [*lines[:2], lines[2].replace("says", "clearly states"), *lines[3:]]
    return EditRow(kinds.PROSE_SOURCE, f"synthetic/prose/{i}", before="\n".join(lines) + "\n",
                   after="\n".join(after) + "\n", lang="en",
                   instruction="Revise this text to improve it (clarity).")


SOURCES = {"humanevalfix_docs_python": [_py_problem(i) for i in range(PROBLEMS)],
           "humanevalfix_docs_js": [_js_problem(i) for i in range(PROBLEMS)],
           kinds.PROSE_SOURCE: [_prose(i) for i in range(120)]}


def _built(language: str, **options: object) -> list[dict[str, object]]:
    rows, dropped = build_rows(SOURCES, langs=(language,), per_cell=1, check=False,
                               **options)  # type: ignore[arg-type]
    assert not dropped
    return rows[f"kinds_{language}"]


def test_python_every_kind_and_size_holds() -> None:
    assert_rows_hold(_built("python"), "python")


@needs_node
def test_js_every_kind_and_size_holds() -> None:
    assert_rows_hold(_built("js"), "js")


@pytest.mark.parametrize("language", ["python", pytest.param("js", marks=needs_node)])
def test_a_damaged_neighbour_fails_the_row(language: str) -> None:
    # The whole file is tested: the right edit with one untouched neighbour broken fails.
    for row in _built(language, kinds=("bugfix", "docstring"), sizes=("medium",)):
        ids = row_meta(row)["source_ids"]
        assert isinstance(ids, list) and len(ids) > 2
        problem = next(p for p in SOURCES[f"humanevalfix_docs_{language}"] if p.id == ids[-1])
        good, bad = next((a, b) for a, b in zip(problem.after.splitlines(),
                                                 problem.before.splitlines()) if a != b)
        damaged = str(row["after"]).replace(good, bad)
        assert damaged != row["after"]
        assert not run_tests(row, damaged).passed


@pytest.mark.parametrize("language", ["python", pytest.param("js", marks=needs_node)])
def test_a_docstring_row_fails_the_file_left_as_it_was(language: str) -> None:
    # A documentation edit changes nothing a test can call: the row's text check fails the file
    # as it was, and a file that writes the new comment beside the old one.
    for row in _built(language, kinds=("docstring",), sizes=("small", "medium")):
        check = row_meta(row)["text_check"]
        assert isinstance(check, dict) and check["present"] and check["absent"]
        assert run_tests(row, str(row["after"])).passed
        outcome = run_tests(row, str(row["before"]))
        assert outcome.status == "fail" and "lacks the line" in outcome.tail
        both = str(row["after"]).replace(str(check["present"][0]),
                                          f"{check['present'][0]}\n{check['absent'][0]}", 1)
        assert "still holds the line" in run_tests(row, both).tail


@pytest.mark.parametrize("language", ["python", pytest.param("js", marks=needs_node)])
@pytest.mark.parametrize("kind", ["remove_parameter", "remove_branch"])
def test_a_removal_row_fails_the_file_left_as_it_was(language: str, kind: str) -> None:
    # The parameter no test passes and the branch that never runs: the tests pass the file as
    # it was, the text check does not; removing the whole function fails the tests.
    for row in _built(language, kinds=(kind,), sizes=("small", "medium")):
        check = row_meta(row)["text_check"]
        assert isinstance(check, dict) and check["absent"]
        assert bool(check["present"]) == (kind == "remove_parameter")
        assert run_tests(row, str(row["after"])).passed
        outcome = run_tests(row, str(row["before"]))
        assert outcome.status == "fail"
        assert ("lacks the line" if check["present"] else "still holds the line") in outcome.tail
        target = row_meta(row)["targets"]
        assert isinstance(target, list)
        gone = "\n".join(line for line in str(row["after"]).splitlines()
                         if not re.search(rf"\b{target[0]}\b", line))
        assert not run_tests(row, gone).passed


def test_the_text_check_reads_lines_without_their_whitespace() -> None:
    row = {"meta": {"text_check": kinds.changed_lines("int f(int a, int* calls){\n}\n",
                                                       "int f(int a){\n}\n")}}
    assert text_check(row, "int f(int  a) {\n}\n") is None
    assert text_check(row, "int f(int a,int*calls){\n}\n") is not None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["a", "  b", "c ", "", "d", "e", "f g", "fg"]), max_size=8),
       st.lists(st.sampled_from(["a", "b", "x", "", "  y", "z", "f  g"]), max_size=8))
def test_changed_lines_pass_the_after_and_fail_a_before_that_differs(
        before: list[str], after: list[str]) -> None:
    old, new = "\n".join(before), "\n".join(after)
    row = {"meta": {"text_check": kinds.changed_lines(old, new)}}
    assert text_check(row, new) is None

    def bare(lines: list[str]) -> set[str]:
        return {"".join(line.split()) for line in lines} - {""}

    assert (text_check(row, old) is not None) == (bare(before) != bare(after))


def test_kind_rules() -> None:
    rows = {str(row_meta(r)["kind"]): r for r in _built("python", sizes=("medium",))}
    rename = rows["rename"]
    targets = row_meta(rename)["targets"]
    assert isinstance(targets, list)
    old, new = (str(name) for name in targets)
    assert f"def {old}(" in str(rename["before"])
    assert not re.search(rf"(?<!\w){old}\(", str(rename["after"]))
    assert str(rename["after"]).count(f"{new}(") >= 3  # the definition and both callers
    assert str(rename["instruction"]) == (f"Rename the function {old} to {new} and update "
                                          "every call of it.")
    name = row_meta(rows["remove_function"])["targets"][0]  # type: ignore[index]
    assert f"def {name}(" in str(rows["remove_function"]["before"])
    assert f"def {name}(" not in str(rows["remove_function"]["after"])
    added = row_meta(rows["add_function"])["targets"][0]  # type: ignore[index]
    assert str(rows["add_function"]["instruction"]).startswith(f"Add a function {added}(")
    assert f"def {added}(" in str(rows["add_function"]["after"]).split("\n\n\n")[-1]
    assert "calls=None" in str(rows["add_parameter"]["after"])
    assert "calls" not in str(rows["add_parameter"]["before"])
    assert str(rows["multi_bugfix"]["instruction"]).startswith("Fix bugs in ")
    assert " and " in str(rows["multi_bugfix"]["instruction"])


def test_deterministic_for_a_seed() -> None:
    first = build_rows(SOURCES, seed=7, per_cell=2, check=False)
    assert first == build_rows(SOURCES, seed=7, per_cell=2, check=False)
    assert first != build_rows(SOURCES, seed=8, per_cell=2, check=False)
    assert set(first[0]) == {f"kinds_{language}" for language in kinds.LANGUAGES}


def test_prose_rows() -> None:
    rows = _built("prose")
    assert Counter((row_meta(r)["kind"], row_meta(r)["size"]) for r in rows) == Counter(
        (kind, size) for kind in kinds.PROSE_KINDS for size in SIZES)
    for row in rows:
        meta = row_meta(row)
        assert meta["kind"] in kinds.PROSE_KINDS and "test_program" not in meta
        assert not has_tests(row)
        low, high = SIZES[str(meta["size"])][:2]
        assert low <= count_lines(str(row["before"])) <= high
        before, after = str(row["before"]).split("\n\n"), str(row["after"]).split("\n\n")
        assert len(before) == len(after) and sum(a != b for a, b in zip(before, after)) == 1
        if meta["kind"] == "prose":
            assert "the paragraph that starts with" in str(row["instruction"])
            continue
        # The count (or the part) names the revised paragraph, as the passages reader reads it.
        target = next(i for i, (a, b) in enumerate(zip(before, after)) if a != b)
        if meta["kind"] == "prose_part":
            part = "the introduction" if target == 0 else "the conclusion"
            assert part in str(row["instruction"]) and target in (0, len(before) - 1)
        found = named_passages(str(row["before"]), str(row["instruction"]))
        lines = str(row["before"]).splitlines()
        assert ["\n".join(lines[start - 1:end]) for start, end in found] == [
            before[target].strip("\n")]


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10**6), size=st.sampled_from(("small", "medium")))
def test_python_rows_parse_and_define_each_name_once(seed: int, size: str) -> None:
    for row in _built("python", seed=seed, sizes=(size,)):
        for side in ("before", "after"):
            tree = ast.parse(str(row[side]))
            names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
            assert len(names) == len(set(names)), (row["id"], side)


def test_first_sentence() -> None:
    assert first_sentence("Return x.\n    More text.") == "Return x."
    assert first_sentence(" Check if in given list\n  of numbers. Yes\n  >>> f(1)") == (
        "Check if in given list of numbers.")
    assert first_sentence(">>> f(1)\n1") == ""


def test_whole_file_program_runs_as_it_is() -> None:
    row = {"lang": "python", "meta": {"test_program": "assert f() == 1\n",
                                      "entry_point": "f", "test": "def check(f): pass"}}
    language, program = harness_program(row, "def f():\n    return 1\n")
    assert language == "python" and program.rstrip().endswith("assert f() == 1")
    assert run_tests(row, "def f():\n    return 1\n").passed
    assert not run_tests(row, "def f():\n    return 2\n").passed
    assert has_tests("kinds_python") and has_tests("kinds_js") and not has_tests("kinds_prose")


def test_group_by_rekeys_rows_for_the_report() -> None:
    rows = [EditRow("kinds_python", f"r{i}", "a\n", "b\n", lang="python",
                    meta={"kind": kind, "size": "small", "language": "python"})
            for i, kind in enumerate(("bugfix", "rename", "bugfix"))]
    rows.append(EditRow("humanevalfix_docs_js", "h", "a\n", "b\n", lang="js"))
    results = [RowQuality(r.dataset, r.id, "rewrite", True, i % 2 == 0, False, False, 0.5,
                          1.0, 3) for i, r in enumerate(rows)]
    keys = [q.dataset for q in regroup(results, rows, parse_group_by("dataset,kind,size"))]
    assert keys == ["kinds_python/bugfix/small", "kinds_python/rename/small",
                    "kinds_python/bugfix/small", "humanevalfix_docs_js/-/-"]
    assert [q.dataset for q in regroup(results, rows, ["language"])] == ["python"] * 3 + ["js"]
    pooled = pool(regroup(results, rows, ["kind"]))
    assert {"bugfix", "rename", "-"} <= set(pooled)
    with pytest.raises(ConfigError):
        parse_group_by("kind,colour")


def test_command_is_registered(tmp_path: Path) -> None:
    args = build_parser().parse_args(["bench", "kinds", "--out", str(tmp_path), "--seed", "3"])
    assert args._module == "copygram.bench.kinds" and args.seed == 3 and args.per_cell == 4
    assert set(KINDS) == {*CODE_KINDS, "prose", "prose_counted", "prose_part"}


def _real_data() -> Path | None:
    for candidate in (os.environ.get("COPYGRAM_DATA"), "/work/shared/data/edits"):
        if candidate and (Path(candidate) / "humanevalfix_docs_python.dev.jsonl").is_file():
            return Path(candidate)
    return None


@pytest.mark.skipif(_real_data() is None, reason="no edit data folder ($COPYGRAM_DATA)")
def test_builder_on_the_real_dev_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(data=str(_real_data()), out=str(tmp_path), seed=0,
                              languages="python,js,prose" if shutil.which("node")
                              else "python,prose",
                              kinds=",".join(KINDS), sizes="small,medium", per_cell=1,
                              no_check=False, test_timeout=10.0, indent=None)
    assert kinds.run(args) == 0
    assert "dropped by the self-check:" in capsys.readouterr().out
    python = list(read_edit_rows(tmp_path / "kinds_python.dev.jsonl"))
    assert Counter((r.meta["kind"], r.meta["size"]) for r in python) == Counter(
        {(k, s): 1 for k in CODE_KINDS for s in ("small", "medium")})
    assert all(r.dataset == "kinds_python" and r.meta.get("checked") for r in python)


def test_the_self_check_drops_rows_whose_tests_are_slow(monkeypatch: pytest.MonkeyPatch) -> None:
    # A row whose tests take most of the timeout here would time out beside a model: dropped.
    from copygram.bench import testrun
    from copygram.bench.testrun import TestOutcome

    row = _built("python", kinds=("bugfix",), sizes=("small",))[0]
    seconds = {"after": 0.1}

    def timed(row: dict[str, object], candidate: str, timeout_s: float = 10.0) -> TestOutcome:
        if candidate != row["after"]:
            return TestOutcome(False, "fail", 0.1, "")
        return TestOutcome(True, "pass", seconds["after"], "")

    monkeypatch.setattr(testrun, "run_tests", timed)
    assert kinds.verdict(row, "docstring", 9.0) is None
    seconds["after"] = 3.5
    assert kinds.verdict(row, "docstring", 9.0) == "slow tests"


def test_rows_laid_out_in_tabs_still_hold_and_indent_by_tabs_alone() -> None:
    # --indent tab: files as people indent them, each row's tests still judging it.
    from copygram.language.indent_style import TAB, indent_unit
    from copygram.language.lines import split_lines

    rows = _built("python", indent=TAB, sizes=("small",))
    assert_rows_hold(rows, "python", sizes=("small",))
    for row in rows:
        for side in ("before", "after"):
            assert indent_unit(split_lines(str(row[side]))) == TAB, (row["id"], side)
