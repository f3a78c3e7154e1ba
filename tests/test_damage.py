"""The damage check (copygram.language.damage): markers, parses and definitions an edit broke,
and nothing flagged where the edit left the file sound."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram.language import parsers
from copygram.language.damage import (
    LANGUAGES,
    find_damage,
    guess_language,
    language_for_path,
)
from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER

STATS = '''def mean(values):
    return sum(values) / len(values)


def median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def spread(values):
    return max(values) - mean(values)
'''


def kinds(before: str, after: str, language: str | None = None) -> list[str]:
    return [d.kind for d in find_damage(before, after, language=language)]


def test_a_sound_edit_has_no_damage() -> None:
    fixed = STATS.replace("len(ordered) // 2]", "(len(ordered) - 1) // 2]")
    assert find_damage(STATS, fixed) == ()
    assert find_damage(STATS, STATS) == ()


def test_the_rename_that_named_four_functions_alike_is_a_duplicate() -> None:
    # The failure of issue 40: head-only blocks renamed mean, median and spread to average.
    broken = (STATS.replace("def mean(", "def average(").replace("def median(", "def average(")
              .replace("def spread(", "def average("))
    damage = find_damage(STATS, broken)
    assert damage[0].kind == "duplicate"
    assert "average is defined 3 times" in damage[0].detail
    assert damage[0].line == 1
    # ... and the calls of mean, median and spread were left without a definition.
    assert {d.detail.split()[0] for d in damage if d.kind == "dangling"} == {"mean"}
    # A rename that keeps one definition per name is sound.
    assert find_damage(STATS, STATS.replace("mean", "average")) == ()


def test_a_marker_line_in_the_file_is_damage_unless_the_document_had_it() -> None:
    leaked = STATS.replace("def median", DIVIDER + "def median")
    damage = find_damage(STATS, leaked)
    assert damage[0].kind == "marker"
    assert damage[0].line == 5
    rst = "Title\n=======\n\nText.\n"
    assert find_damage(rst, rst + "\nMore\n=======\n") == ()
    for marker in (BLOCK_OPEN, BLOCK_CLOSE, '<copy lines="1-2"/>\n'):
        assert "marker" in kinds("Some prose.\n", "Some prose.\n" + marker)


def test_a_parse_the_edit_broke_is_damage_with_its_line() -> None:
    broken = STATS.replace("    return max(values) - mean(values)\n",
                           "    return max(values) - mean(values\n")
    damage = find_damage(STATS, broken)
    assert [d.kind for d in damage] == ["parse"]
    assert "python" in damage[0].detail


def test_a_file_that_did_not_parse_is_not_judged_by_its_parse() -> None:
    bad = "def f(:\n    pass\n"
    assert find_damage(bad, bad + "x = (\n", language="python") == ()


def test_property_setters_and_overloads_are_not_duplicates() -> None:
    before = "class A:\n    @property\n    def x(self):\n        return 1\n"
    after = before + "\n    @x.setter\n    def x(self, value):\n        pass\n"
    assert find_damage(before, after) == ()


JS = """const add = (a, b) => {
  return a + b;
};
function twice(x) {
  return add(x, x);
}
"""


@pytest.mark.parametrize(("language", "before", "after", "kind"), [
    ("javascript", JS, JS.replace("return a + b;\n};", "return a + b;\n}};"), "parse"),
    ("javascript", JS, JS + "function twice(y) {\n  return y;\n}\n", "duplicate"),
    ("javascript", JS, JS.replace("const add", "const twice"), "duplicate"),
    ("java", "class A {\n  int f(int x) { return x; }\n}\n",
     "class A {\n  int f(int x) { return x; }\n}\n}\n}\n", "parse"),
    ("java", "class A {\n  int f(int x) { return x; }\n}\n",
     "class A {\n  int f(int x) { return x; }\n  int f(int x) { return 2; }\n}\n", "duplicate"),
    ("go", "package m\n\nfunc f() int {\n\treturn 1\n}\n",
     "package m\n\nfunc f() int {\n\treturn 1\n}\n\nfunc f() int {\n\treturn 2\n}\n", "duplicate"),
    ("rust", "fn f() -> i32 {\n    1\n}\n", "fn f() -> i32 {\n    1\n}\n}\n", "parse"),
    ("cpp", "int f(int x) {\n  return x;\n}\n", "int f(int x) {\n  return x;\n\n", "parse"),
])
def test_other_languages(language: str, before: str, after: str, kind: str) -> None:
    assert find_damage(before, before, language=language) == ()
    assert kind in kinds(before, after, language)


def test_overloads_are_other_definitions_in_java_and_cpp() -> None:
    before = "class A {\n  int f(int x) { return x; }\n}\n"
    after = "class A {\n  int f(int x) { return x; }\n  int f(long x) { return 2; }\n}\n"
    assert find_damage(before, after, language="java") == ()


def test_the_language_comes_from_the_path_or_the_text() -> None:
    assert language_for_path("a/b/stats.py") == "python"
    assert language_for_path("x.JS") == "javascript"
    assert language_for_path("notes.md") is None
    assert guess_language(STATS) == "python"
    assert guess_language(JS) == "javascript"
    assert guess_language("package m\n\nfunc f() int {\n\treturn 1\n}\n") == "go"
    # Prose that happens to parse defines nothing: it is not code.
    assert guess_language("Hello\n") is None
    assert guess_language("A paragraph about {braces}, in prose.\n") is None


def test_an_unknown_language_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown language"):
        find_damage("x\n", "y\n", language="cobol")
    assert "python" in LANGUAGES


_line = st.sampled_from(["x = 1\n", "def f():\n", "    return 2\n", "class C:\n", "    pass\n",
                         "\n", "# note\n", "y = f()\n"])


@given(st.lists(_line, max_size=12), st.lists(_line, max_size=12))
def test_damage_only_ever_names_what_the_after_text_holds(before: list[str],
                                                         after: list[str]) -> None:
    old, new = "".join(before), "".join(after)
    for damage in find_damage(old, new, language="python"):
        assert damage.kind in ("parse", "duplicate", "dangling", "marker")
        assert damage.line is None or 1 <= damage.line <= max(1, new.count("\n") + 1)
        if damage.kind == "dangling":  # a name the input defined, used where the result says
            name = damage.detail.split()[0]
            assert f"def {name}(" in old or f"class {name}:" in old or f"{name} =" in old
            assert damage.line is not None and name in new.splitlines()[damage.line - 1]
    assert find_damage(old, old, language="python") == ()


def test_without_a_grammar_the_brackets_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from copygram.language import parsers

    monkeypatch.setattr(parsers, "tree", lambda text, language: None)
    java = "class A {\n  String s = \"}\"; // }\n  int f() { return 1; }\n}\n"
    assert find_damage(java, java, language="java") == ()
    broken = find_damage(java, java + "}\n", language="java")
    assert [(d.kind, d.line) for d in broken] == [("parse", 5)]
    assert "unmatched '}'" in broken[0].detail
    assert "unclosed '{'" in find_damage(java, java[:-2], language="java")[0].detail


def test_a_rename_that_left_a_call_is_a_dangling_name() -> None:
    renamed = STATS.replace("def mean(", "def average(")
    damage = find_damage(STATS, renamed)
    assert [(d.kind, d.line) for d in damage] == [("dangling", 11)]
    assert "mean is used but no longer defined" in damage[0].detail
    # Every use renamed too, or a name no longer used, is sound; so is a name that was never
    # bound in the file (a builtin, or one the file never defined).
    assert find_damage(STATS, STATS.replace("mean", "average")) == ()
    assert find_damage("x = len([])\n", "y = len([])\n") == ()
    star = "from os.path import *\n\n\ndef f():\n    return join('a')\n"
    assert find_damage(star, star.replace("def f", "def g")) == ()


def test_a_dangling_name_in_javascript() -> None:
    calls = JS + "console.log(twice(2));\n"
    damage = find_damage(calls, calls.replace("function twice", "function double"),
                         language="javascript")
    assert [d.kind for d in damage] == ["dangling"]
    renamed = calls.replace("twice", "double")
    assert find_damage(calls, renamed, language="javascript") == ()
    # A parameter of the same name binds it: a shadowed name is not dangling.
    shadow = "function f(a) {\n  return a;\n}\nfunction g(a) {\n  return a;\n}\n"
    assert find_damage(shadow, shadow.replace("function f(a)", "function h(a)"),
                       language="javascript") == ()


CPP_CALLS = """#include <vector>
using namespace std;

int twice(int x) {
    return 2 * x;
}

int quad(int x) {
    return twice(twice(x));
}

int size_of(vector<int> v) {
    return v.size();
}
"""

JAVA_CALLS = """class Solution {
    public int twice(int x) {
        return 2 * x;
    }

    public int quad(int x) {
        return twice(this.twice(x));
    }

    public int size(java.util.List<Integer> xs) {
        return xs.size();
    }
}
"""


@pytest.mark.parametrize(("text", "language"), [(CPP_CALLS, "cpp"), (JAVA_CALLS, "java")])
def test_a_rename_that_left_a_call_dangles_in_cpp_and_java(text: str, language: str) -> None:
    if parsers.parser(language) is None:
        pytest.skip(f"the tree-sitter grammar for {language} is not installed")
    definition = "int twice(int x)"
    left = text.replace(definition, definition.replace("twice", "doubled"))
    damage = find_damage(text, left, language=language)
    assert [(d.kind, d.detail.split()[0]) for d in damage] == [("dangling", "twice")]
    assert damage[0].line == (9 if language == "cpp" else 7)
    # Every call renamed too is sound; so is a method of another object that shares a removed
    # name (xs.size() after size is renamed), and a function removed with its every call.
    assert find_damage(text, text.replace("twice", "doubled"), language=language) == ()
    assert find_damage(text, text.replace("size", "count").replace("xs.count", "xs.size")
                       .replace("v.count", "v.size"), language=language) == ()
    # In C++, a prototype still declares a function whose definition went (a link error, not
    # a dangling name: declared, so not reported).
    if language == "cpp":
        declared = left.replace("int quad", "int twice(int x);\n\nint quad")
        assert find_damage(text, declared, language="cpp") == ()


_PY_CALLS = ("def f(n, calls=None):\n    calls is None or calls.append((n,))\n    return n\n\n\n"
             "def caller(*args, calls=None):\n    return f(*args, calls=calls)\n")
_JS_CALLS = ("const f = (n, calls = null) => {\n  if (calls !== null) calls.push([n]);\n"
             "  return n;\n};\nconst caller = (calls, ...args) => f(...args, calls);\n")
_CPP_CALLS = ("int f(int n, int* calls = nullptr){\n    if (calls != nullptr) *calls += 1;\n"
              "    return n;\n}\nint caller(int* calls, int n) { return f(n, calls); }\n")
_JAVA_CALLS = ("class S {\n    int f(int n, java.util.List<Object> calls) {\n"
               "        if (calls != null) calls.add(n);\n        return n;\n    }\n"
               "    int caller(java.util.List<Object> calls, int n) { return f(n, calls); }\n}\n")
REMOVED_PARAMETER = {
    "python": (_PY_CALLS, "def f(n, calls=None):", "def f(n):", 2),
    "javascript": (_JS_CALLS, "const f = (n, calls = null) => {", "const f = (n) => {", 2),
    "cpp": (_CPP_CALLS, "int f(int n, int* calls = nullptr){", "int f(int n){", 2),
    "java": (_JAVA_CALLS, "int f(int n, java.util.List<Object> calls) {", "int f(int n) {", 3),
}


@pytest.mark.parametrize("language", sorted(REMOVED_PARAMETER))
def test_a_parameter_taken_out_and_still_used_dangles(language: str) -> None:
    # The remove_parameter rows: a program took `calls` out of f's signature and kept the line
    # that uses it; the caller still binds `calls`, so the file-wide check saw nothing.
    if language != "python" and parsers.parser(language) is None:
        pytest.skip(f"the tree-sitter grammar for {language} is not installed")
    text, signature, without, line = REMOVED_PARAMETER[language]
    kept = text.replace(signature, without)
    damage = find_damage(text, kept, language=language)
    assert [(d.kind, d.line) for d in damage] == [("dangling", line)]
    assert "calls is used in f but is no longer one of its parameters" in damage[0].detail
    # The use taken out too, or the name declared in f or at the top of the file: sound.
    use = text.splitlines()[line - 1] + "\n"
    assert find_damage(text, kept.replace(use, ""), language=language) == ()
    # Bound nowhere any more (the caller gone too): one damage, said by the file-wide check.
    if language in ("python", "javascript"):
        alone = kept[:kept.index("\n\n" if language == "python" else "\nconst caller")] + "\n"
        only = find_damage(text, alone, language=language)
        assert [d.detail for d in only] == [
            "calls is used but no longer defined (the input defined it)"]
    if language == "python":
        assert find_damage(text, "calls = []\n" + kept, language=language) == ()
        local = kept.replace("def f(n):\n", "def f(n):\n    calls = []\n")
        assert find_damage(text, local, language=language) == ()


@given(st.sets(st.sampled_from("abcde"), min_size=1), st.sets(st.sampled_from("abcde")),
       st.sets(st.sampled_from("abcde")))
def test_a_parameter_dangles_exactly_where_it_went_and_its_use_stayed(
        params: set[str], kept: set[str], used: set[str]) -> None:
    def source(names: set[str]) -> str:
        body = "".join(f"    print({name})\n" for name in sorted(used)) or "    pass\n"
        # g binds every name, so only the parameter check can see what f lost.
        return f"def f({', '.join(sorted(names))}):\n{body}\n\ndef g(a, b, c, d, e):\n    pass\n"

    kept = kept & params
    damage = find_damage(source(params), source(kept), language="python")
    flagged = {d.detail.split()[0] for d in damage if "one of its parameters" in d.detail}
    assert flagged == (params - kept) & used
