"""``copygram bench kinds`` in C++ (:mod:`copygram.bench.kinds_cpp`): files assembled from
HumanEvalFix-shaped C++ problems, every kind and size, each row's after passing its whole-file
test program (compiled by g++) and its before failing it where the kind changes behaviour.

The problems are synthetic (written below), shaped like HumanEvalFix's C++ rows: the doc comment
above the includes, ``using namespace std;``, one function, a test of ``assert``s in ``main``."""

from __future__ import annotations

import re
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copygram.bench.data import EditRow
from copygram.bench.kinds import build_rows
from copygram.bench.kinds_cpp import CPP, _signature, _split_params
from copygram.bench.testrun import run_tests
from tests.bench.rows import assert_rows_hold, row_meta

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
PROBLEMS = 60


def _cpp_problem(i: int) -> EditRow:
    name = f"scale_{i}"
    extra = "#include<algorithm>\n" if i % 3 == 0 else ""
    body = (f"/*\nMultiply every value by factor and add {i + 1}.\n"
            f">>> {name}({{1, 2}}, 3)\n{{{4 + i}, {7 + i}}}\n*/\n"
            f"#include<stdio.h>\n#include<vector>\n#include<string>\nusing namespace std;\n{extra}"
            f"vector<int> {name}(vector<int> values, int factor){{\n"
            f"    vector<int> out;\n    for (int i=0;i<values.size();i++)\n"
            f"        out.push_back(values[i]*factor+{i + 1}{{bug}});\n    return out;\n}}\n")
    test = ("#undef NDEBUG\n#include<assert.h>\n"
            "bool issame(vector<int> a,vector<int>b){\n    return a==b;\n}\n"
            f"int main(){{\n    assert (issame({name}({{1, 2}}, 3), {{{4 + i}, {7 + i}}}));\n"
            f"    assert (issame({name}({{}}, 5), {{}}));\n}}\n")
    return EditRow("humanevalfix_docs_cpp", f"synthetic/CPP/{i}",
                   before=body.replace("{bug}", "-1"), after=body.replace("{bug}", ""),
                   instruction=f"Fix bugs in {name}.", lang="cpp",
                   meta={"entry_point": name, "test": test})


SOURCES = {"humanevalfix_docs_cpp": [_cpp_problem(i) for i in range(PROBLEMS)]}


def _built(**options: object) -> list[dict[str, object]]:
    rows, dropped = build_rows(SOURCES, langs=("cpp",), per_cell=1, check=False,
                               **options)  # type: ignore[arg-type]
    assert not dropped
    return rows["kinds_cpp"]


@needs_gxx
def test_every_kind_and_size_holds() -> None:
    assert_rows_hold(_built(), "cpp")


@needs_gxx
def test_the_kinds_own_checks_fail_the_wrong_edit() -> None:
    rows = {str(row_meta(r)["kind"]): r for r in _built(sizes=("medium",))}
    # A damaged neighbour fails the whole file.
    bugfix = rows["bugfix"]
    ids = row_meta(bugfix)["source_ids"]
    assert isinstance(ids, list) and len(ids) > 2
    last = next(p for p in SOURCES["humanevalfix_docs_cpp"] if p.id == ids[-1])
    damaged = str(bugfix["after"]).replace(last.after.splitlines()[-3],
                                           last.before.splitlines()[-3])
    assert damaged != bugfix["after"] and not run_tests(bugfix, damaged).passed
    # A rename that keeps the old function beside the new one fails (the old name must go),
    # as does one that renames the definition and misses a caller.
    rename = rows["rename"]
    old, new = (str(n) for n in row_meta(rename)["targets"])  # type: ignore[attr-defined]
    after = str(rename["after"])
    assert after.index(f" {new}(") < after.index("caller1(") < after.index("caller2(")
    definition = next(line for line in after.splitlines() if line.startswith(f"vector<int> {new}("))
    start = after.index(definition)
    old_copy = after[start:after.index("\n}\n", start) + 3].replace(new, old)
    both = after + "\n" + old_copy
    outcome = run_tests(rename, both)
    assert not outcome.passed and "different kind" in outcome.tail
    missed = re.sub(rf"(caller2\(.*\n.*?){new}\(", rf"\g<1>{old}(", after, count=1)
    assert missed != after and not run_tests(rename, missed).passed
    # add_parameter: the spy fails a caller that does not pass calls on.
    param = rows["add_parameter"]
    assert "int* calls = nullptr" in str(param["after"])
    unpassed = re.sub(r"(caller1\(int\* calls, .*return \w+\(.*), calls\)", r"\1)",
                      str(param["after"]))
    assert unpassed != param["after"] and not run_tests(param, unpassed).passed
    # top_level: the constant's value (or the list of functions) is checked.
    for seed in range(3):
        top = next(r for r in _built(sizes=("small",), kinds=("top_level",), seed=seed)
                   if r["meta"])
        after = str(top["after"])
        if "FUNCTIONS" in after:
            wrong = re.sub(r'\n    "\w+",', "", after, count=1)
        else:
            wrong = re.sub(r"(const (?:int|string) \w+ = )", r"\g<1>1 + ", after)
            wrong = wrong.replace('1 + "', '"x')
        assert wrong != after and not run_tests(top, wrong).passed


def test_signatures_and_parameter_lists() -> None:
    assert _split_params("map<string,int> m, vector<pair<int,int>> v") == [
        "map<string,int> m", "vector<pair<int,int>> v"]
    sig = _signature("vector<string> by_length(vector<int> arr, const string& sep){")
    assert sig is not None and sig.ret == "vector<string>" and sig.name == "by_length"
    assert sig.types == ("vector<int>", "const string&") and sig.params == ("arr", "sep")
    assert sig.declare("f", extra_first="int* calls") == (
        "vector<string> f(int* calls, vector<int> arr, const string& sep)")
    assert sig.call("g", extra_last="calls") == "g(arr, sep, calls)"
    assert _signature("bool issame(vector<int> a,vector<int>b){") is not None
    assert _signature("    int nested(int a){") is None  # indented: not a top-level definition
    assert _signature("int with_default(int a = 2){") is None


def test_parse_moves_the_doc_above_the_code_and_keeps_includes_apart() -> None:
    problem = CPP.parse(_cpp_problem(3))
    assert problem is not None and problem.name == "scale_3"
    assert problem.fixed.startswith("/*\nMultiply") and "#include" not in problem.fixed
    assert problem.imports == ("#include<stdio.h>", "#include<vector>", "#include<string>",
                               "using namespace std;", "#include<algorithm>")
    text = CPP.render(problem.imports, ["const int LIMIT = 3;"], [problem.fixed])
    head = text.split("\n\n")[0].splitlines()
    assert head[-2:] == ["using namespace std;", "const int LIMIT = 3;"]  # includes first
    assert CPP.parse(EditRow("humanevalfix_docs_cpp", "x", "", "", meta={})) is None


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["int", "string", "vector<int>", "map<string,int>",
                                 "const vector<string>&", "double*"]), max_size=4),
       st.sampled_from(["int", "vector<string>", "bool", "map<int,vector<int>>"]))
def test_signature_round_trip(types: list[str], ret: str) -> None:
    params = ", ".join(f"{t} p{i}" for i, t in enumerate(types))
    sig = _signature(f"{ret} func({params}){{")
    assert sig is not None
    assert sig.declare("func") == f"{ret} func({params})"
    assert sig.call("other") == f"other({', '.join(f'p{i}' for i in range(len(types)))})"


def test_rows_are_the_same_for_a_seed_in_one_process() -> None:
    first = build_rows(SOURCES, langs=("cpp",), seed=3, per_cell=1, check=False,
                       sizes=("small",))
    assert first == build_rows(SOURCES, langs=("cpp",), seed=3, per_cell=1, check=False,
                               sizes=("small",))
    program = str(first[0]["kinds_cpp"][0]["meta"]["test_program"])  # type: ignore[index]
    assert "@SERIAL@" not in program and "namespace test_" in program
