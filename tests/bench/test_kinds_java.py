"""Java rows of ``copygram bench kinds`` (:mod:`copygram.bench.kinds_java`): problems parsed into
blocks of one ``class Solution``, rows of every kind whose tests hold, and the parts by hand.

The problems are synthetic, shaped as HumanEvalFix's Java ones (the shared data is not read)."""

from __future__ import annotations

import re
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copygram.bench.data import EditRow
from copygram.bench.kinds import build_rows
from copygram.bench.kinds_java import JAVA, signature, split_file
from copygram.bench.kinds_java_scan import members
from copygram.bench.testrun import run_tests
from tests.bench.rows import assert_rows_hold, row_meta

needs_java = pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None,
                                reason="javac / java are not installed")

HEAD = "import java.util.*;\nimport java.lang.*;\n"
MAIN = ("public class Main {{\n{fields}    public static void main(String[] args) {{\n"
        "        Solution s = new Solution();\n        List<Boolean> correct = Arrays.asList(\n"
        "{checks}\n        );\n        if (correct.contains(false)) {{\n"
        "            throw new AssertionError();\n        }}\n    }}\n}}")


def _problem(i: int) -> EditRow:
    """Three shapes: a list scaled (every third with a stream and an extra import), an int array
    summed, and a pair sharing a helper name (3 and 4 collide, so never meet in a file)."""
    k, shape = i + 1, i % 3
    imports = "import java.util.stream.Collectors;\n" if i % 6 == 0 else ""
    if shape == 2:
        name = f"total{i}"
        doc = (f"    /**\n    Sum the values times factor, plus {k}.\n"
               f"    >>> {name}(new int[] {{1, 2}}, 3)\n    {9 + k}\n     */\n")
        body = (f"    public int {name}(int[] values, int factor) {{\n        int sum = {k};\n"
                f"        for (int v : values) {{\n            sum += v * factor{{bug}};\n"
                f"        }}\n        return sum;\n    }}")
        checks = (f"                s.{name}(new int[] {{1, 2}}, 3) == {9 + k},\n"
                  f"                s.{name}(new int[] {{}}, 5) == {k}")
    else:
        name = f"scale{i}"
        doc = (f"    /**\n    Multiply every value by factor and add {k}.\n    <p>\n"
               f"    >>> {name}(Arrays.asList(1, 2), 3)\n    [{3 + k}, {6 + k}]\n     */\n")
        step = f"v * factor + {k}{{bug}}"
        body = (f"    public List<Integer> {name}(List<Integer> values, int factor) {{\n"
                + (f"        return values.stream().map(v -> {step})"
                   f".collect(Collectors.toList());\n" if imports else
                   f"        List<Integer> result = new ArrayList<>();\n"
                   f"        for (int v : values) {{\n            result.add({step});\n        }}\n"
                   f"        return result;\n") + "    }")
        checks = (f"                s.{name}(Arrays.asList(1, 2), 3).equals(Arrays.asList({3 + k}, "
                  f"{6 + k})),\n                s.{name}(new ArrayList<>(), 5).isEmpty()")
    helper = "    private int shared() {\n        return 0;\n    }\n\n" if i in (3, 4) else ""
    fields = "    static int[] unused = {1, 2};\n" if i % 4 == 1 else ""
    text = f"{imports}{HEAD}\nclass Solution {{\n{helper}{doc}{body}\n}}\n"
    return EditRow("humanevalfix_docs_java", f"synthetic/Java/{i}", lang="java",
                   before=text.replace("{bug}", " - 1"), after=text.replace("{bug}", ""),
                   instruction=f"Fix bugs in {name}.",
                   meta={"entry_point": name,
                         "test": MAIN.format(fields=fields, checks=checks)})


PROBLEMS = [_problem(i) for i in range(60)]
SOURCES = {"humanevalfix_docs_java": PROBLEMS}


def _built(**options: object) -> list[dict[str, object]]:
    rows, dropped = build_rows(SOURCES, langs=("java",), per_cell=1, check=False,
                               **options)  # type: ignore[arg-type]
    assert not dropped
    return rows["kinds_java"]


def test_parse_a_problem() -> None:
    problem = JAVA.parse(PROBLEMS[3])
    assert problem is not None and problem.name == "scale3"
    assert problem.names == {"scale3", "shared"}
    assert problem.imports == ("import java.util.*;", "import java.lang.*;")
    assert problem.fixed.startswith("    private int shared() {")
    assert problem.fixed.endswith("    }")
    assert "v * factor + 4 - 1" in problem.buggy and "- 1" not in problem.fixed
    assert problem.test.startswith("    public static void main") and "s.scale3(" in problem.test
    streamed = JAVA.parse(PROBLEMS[0])
    assert streamed is not None and streamed.imports[0] == "import java.util.stream.Collectors;"


def test_parse_refuses_other_shapes() -> None:
    row = PROBLEMS[1]
    assert JAVA.parse(EditRow(row.dataset, row.id, row.before, row.after, row.instruction,
                              lang="java", meta={**row.meta, "entry_point": "scale_1"})) is None
    outside = row.after + "\nclass Other {}\n"
    assert JAVA.parse(EditRow(row.dataset, row.id, row.before, outside, row.instruction,
                              lang="java", meta=row.meta)) is None


def test_members_skip_nested_classes_strings_and_comments() -> None:
    body = ('    /** Doc { */\n    public List<Integer> sortArray(List<Integer> arr) {\n'
            '        String brace = "}{";\n        char c = \'}\';\n'
            '        arr.sort(new Comparator<Integer>() {\n'
            '            public int compare(Integer a, Integer b) { return a - b; } // }\n'
            '        });\n        return arr;\n    }\n'
            '    static final int[] TABLE = {1, 2};\n    int count;\n')
    found = members(body)
    assert found is not None
    assert [(m.name, m.method, m.first, m.start, m.last) for m in found] == [
        ("sortArray", True, 0, 1, 8), ("TABLE", False, 9, 9, 9), ("count", False, 10, 10, 10)]
    assert JAVA.functions(f"{HEAD}\nclass Solution {{\n{body}}}\n") == ["sortArray"]
    assert members("    void f() {\n") is None


def test_signature() -> None:
    sig = signature("public static <T> Map<String, List<T>> group(List<T> xs, int n) "
                    "throws NoSuchAlgorithmException {")
    assert sig is not None and (sig.ret, sig.name, sig.tparams) == (
        "Map<String, List<T>>", "group", "<T>")
    assert sig.params == (("List<T>", "xs"), ("int", "n"))
    assert sig.declare("caller1", sig.typed) == (
        "public <T> Map<String, List<T>> caller1(List<T> xs, int n) "
        "throws NoSuchAlgorithmException")
    assert signature("public int f(int... xs) {") is None
    assert signature("public int f() {") is not None


def test_render_layout_and_callers() -> None:
    scale = JAVA.parse(PROBLEMS[1])
    assert scale is not None
    text = JAVA.render(["import java.util.*;"], ["public static final int N = 3;"],
                       [scale.fixed, *JAVA.callers("scale1")])
    assert text.startswith("import java.util.*;\n\nclass Solution {\n"
                           "    public static final int N = 3;\n\n    /**\n")
    assert text.endswith("    public List<Integer> caller2(List<Integer> values, int factor) {\n"
                         "        List<Integer> result = scale1(values, factor);\n"
                         "        return result;\n    }\n}\n")
    assert "    public List<Integer> caller1(List<Integer> values, int factor) {\n" \
           "        return scale1(values, factor);\n    }\n\n" in text
    assert JAVA.functions(text) == ["scale1", "caller1", "caller2"]
    with pytest.raises(ValueError):
        JAVA.render([], [], ["//@caller1 missing"])


def test_javadoc_edits() -> None:
    block = JAVA.parse(PROBLEMS[1])
    assert block is not None
    assert JAVA.describe(block.fixed, "scale1") == (
        "public List<Integer> scale1(List<Integer> values, int factor): Multiply every value "
        "by factor and add 2.\n<p>\n>>> scale1(Arrays.asList(1, 2), 3)\n[5, 8]")
    short = JAVA.shorten_doc(block.fixed, "scale1")
    assert short is not None and short[1] == "Multiply every value by factor and add 2."
    assert short[0].startswith("    /** Multiply every value by factor and add 2. */\n"
                               "    public List<Integer> scale1(")
    assert JAVA.describe("    int f() {\n        return 1;\n    }", "f") is None


def test_add_calls_param_keeps_an_overload() -> None:
    problem = JAVA.parse(PROBLEMS[2])
    assert problem is not None
    changed = JAVA.add_calls_param(problem.fixed, "total2")
    assert changed is not None and changed[1] == "Arrays.asList(values, factor)"
    assert ("    public int total2(int[] values, int factor, List<List<Object>> calls) {\n"
            "        if (calls != null) {\n            calls.add(Arrays.asList(values, factor));\n"
            "        }\n") in changed[0]
    assert changed[0].endswith("\n\n    public int total2(int[] values, int factor) {\n"
                               "        return total2(values, factor, null);\n    }")
    # A lone object array would be spread by Arrays.asList; a name of the spy's is taken.
    assert JAVA.add_calls_param("    int f(String[] xs) {\n        return 1;\n    }", "f") is None
    assert JAVA.add_calls_param("    int f(int calls) {\n        return 1;\n    }", "f") is None


@given(picks=st.lists(st.sampled_from([i for i in range(12) if i != 4]), min_size=1, max_size=6,
                     unique=True),
       consts=st.lists(st.sampled_from(("VERSION", "ENCODING", "RETRY_LIMIT")), unique=True))
@settings(max_examples=40, deadline=None)
def test_render_then_split_gives_the_blocks_back(picks: list[int], consts: list[str]) -> None:
    problems = [p for p in (JAVA.parse(PROBLEMS[i]) for i in picks) if p is not None]
    assert len(problems) == len(picks)
    imports = list(dict.fromkeys(line for p in problems for line in p.imports))
    lines = [JAVA.constant(name, JAVA.literal(n)) for n, name in enumerate(consts)]
    text = JAVA.render(imports, lines, [p.fixed for p in problems])
    split = split_file(text)
    assert split is not None and split[0] == imports
    assert split[1] == "\n\n".join(["\n".join("    " + c for c in lines)] * bool(lines)
                                   + [p.fixed for p in problems])
    names = [m.name for p in problems for m in members(p.fixed) or [] if m.method]
    assert JAVA.functions(text) == names
    found = members(split[1])
    assert found is not None and [m.name for m in found if not m.method] == consts


@needs_java
def test_every_kind_holds() -> None:
    assert_rows_hold(_built(sizes=("small", "medium")), "java", sizes=("small", "medium"))


@needs_java
def test_a_large_row_holds() -> None:
    row = _built(kinds=("rename",), sizes=("large",))[0]
    assert run_tests(row, str(row["after"])).passed
    assert not run_tests(row, str(row["before"])).passed


@needs_java
def test_a_damaged_neighbour_fails_the_row() -> None:
    for row in _built(kinds=("bugfix", "docstring"), sizes=("medium",)):
        ids = row_meta(row)["source_ids"]
        assert isinstance(ids, list) and len(ids) > 2
        problem = next(p for p in PROBLEMS if p.id == ids[-1])
        good, bad = next((a, b) for a, b in zip(problem.after.splitlines(),
                                                 problem.before.splitlines()) if a != b)
        damaged = str(row["after"]).replace(good, bad)
        assert damaged != row["after"] and not run_tests(row, damaged).passed


def test_kind_rules() -> None:
    rows = {str(row_meta(r)["kind"]): r for r in _built(sizes=("medium",))}
    rename = rows["rename"]
    targets = row_meta(rename)["targets"]
    assert isinstance(targets, list)
    old, new = (str(name) for name in targets)
    assert re.search(rf"public \S+ {old}\(", str(rename["before"]))
    assert not re.search(rf"(?<![\w$]){old}(?![\w$])", str(rename["after"]))
    assert str(rename["after"]).count(f"{new}(") >= 3  # the definition and both callers
    assert f'method.getName().equals("{old}")' in str(row_meta(rename)["test_program"])
    param = rows["add_parameter"]
    assert "List<List<Object>> calls" in str(param["after"])
    assert "calls" not in str(param["before"])
    assert "caller1(List<List<Object>> calls, " in str(param["after"])
    program = str(row_meta(param)["test_program"])
    assert program.count("static class Check") == program.count(".main(args);")
    assert "new Solution().caller1(spyLog, " in program
    added = str(row_meta(rows["add_function"])["targets"][0])  # type: ignore[index]
    instruction = str(rows["add_function"]["instruction"])
    assert re.match(rf"Add a function public \S+ {added}\(", instruction)
    short = str(rows["docstring"]["instruction"])
    assert short.startswith("Replace the Javadoc comment of ") and short.endswith(" */.")


def test_top_level_forms() -> None:
    seen: dict[str, dict[str, object]] = {}
    for seed in range(12):
        for row in _built(kinds=("top_level",), sizes=("small",), seed=seed):
            text = str(row["instruction"])
            form = ("exports" if "METHODS" in text else "add" if text.startswith("Add") else
                    "change")
            seen.setdefault(form, row)
    assert set(seen) == {"exports", "add", "change"}
    exports = seen["exports"]
    names = JAVA.functions(str(exports["before"]))
    listing = "".join(f'        "{n}",\n' for n in names)
    assert f"class Solution {{\n    public static final String[] METHODS = {{\n{listing}    }};\n" \
        in str(exports["after"])
    assert re.match(r"Add the constant `public static final (int|String) [A-Z_]+ = .+;` at the "
                    r"top of class Solution, before its first method\.$",
                    str(seen["add"]["instruction"]))
    assert "public static final" in str(seen["change"]["before"])
