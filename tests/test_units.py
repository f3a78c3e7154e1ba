"""Units (copygram.language.units): where the function, class or paragraph a line opens ends."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram.language.lines import split_lines
from copygram.language.units import (
    closes_with_brackets,
    header_end,
    layout_end,
    opens_body,
    unit_end,
)

PYTHON = '''from typing import List


@cache
def f(
    x: int,
) -> int:
    """Doc.

    More.
    """
    if x:
        return 1
    else:
        return 2


def g():
    return 3
'''

JS = '''const f = (x) => {
  if (x) {
    return 1;
  } else {
    return 2;
  }
};
console.log(f(1));
'''


def test_a_python_function_ends_at_its_last_indented_line() -> None:
    lines = split_lines(PYTHON)
    assert unit_end(lines, 4) == 15  # the decorator takes in the function, blank lines inside
    assert unit_end(lines, 5) == 15  # from "def f(": the signature's ") -> int:" goes on
    assert unit_end(lines, 18) == 19  # the last function, to the end of the file
    assert unit_end(lines, 1) == 1  # a top-level statement
    assert unit_end(lines, 2) == 2  # a blank line is a unit of its own


def test_a_compound_statement_takes_in_its_else() -> None:
    lines = split_lines(PYTHON)
    assert unit_end(lines, 12) == 15


def test_a_braced_function_ends_with_its_closing_brace() -> None:
    lines = split_lines(JS)
    assert unit_end(lines, 1) == 7  # "};" closes it; the call after it is not part of it
    assert unit_end(lines, 2) == 6  # "} else {" goes on, "}" ends
    assert unit_end(lines, 8) == 8


def test_a_header_is_the_head_and_the_lines_at_its_indentation_before_the_body() -> None:
    python, js = split_lines(PYTHON), split_lines(JS)
    assert header_end(python, 4) == 5  # the decorator and the def line
    assert header_end(python, 5) == 5  # "def f(": its parameters are indented deeper
    assert header_end(js, 1) == 1
    assert header_end(python, 1) == 1  # a unit of one line is all header


def test_a_replacement_that_stops_where_the_body_begins_opens_it() -> None:
    assert opens_body("const f = (x, y) => {\n", "const f = (x) => {\n")
    assert opens_body("def f(x, y):\n\n", "def f(x):\n")
    assert opens_body("@cache\ndef f(x):\n", "@cache\n")
    assert not opens_body("def f(x):\n    return x\n", "def f(x):\n")  # the body written
    assert not opens_body("const f = (x) => x;\n", "const f = (x) => {\n")  # closed its way
    assert not opens_body("", "def f(x):\n")  # the unit deleted
    assert not opens_body("    if x:\n", "def f(x):\n")  # stops inside the body


def test_trailing_blank_lines_stay_outside() -> None:
    assert unit_end(["def f():\n", "    pass\n", "\n", "\n"], 1) == 2


def test_a_line_outside_the_document_is_refused() -> None:
    with pytest.raises(IndexError, match="line 3"):
        unit_end(["a\n", "b\n"], 3)


_layout = st.lists(st.sampled_from(["def f():", "    x", "        y", "", "}", "} else {",
                                    "else:", "@d", "a", ") -> int:", "  ]"]),
                   min_size=1, max_size=16)


@given(_layout, st.data())
def test_a_unit_starts_at_its_head_and_stays_in_the_document(lines: list[str],
                                                             data: st.DataObject) -> None:
    start = data.draw(st.integers(1, len(lines)))
    assert start <= unit_end(lines, start) <= len(lines)


@given(_layout)
def test_a_later_equal_line_never_ends_its_unit_sooner(lines: list[str]) -> None:
    # What lets a head mean its first occurrence after the cursor (module doc).
    for k, line in enumerate(lines, 1):
        for j in range(k + 1, len(lines) + 1):
            if lines[j - 1] == line:
                assert unit_end(lines, j) >= unit_end(lines, k)


def test_a_document_whose_bodies_close_with_a_brace_is_told_from_python() -> None:
    assert closes_with_brackets(split_lines(JS))
    assert closes_with_brackets(split_lines("int f(int x)\n{\n  return x;\n}\n"))
    assert not closes_with_brackets(split_lines(PYTHON))
    # A Python file with a dict literal: more bodies open with ":" than with "{".
    python_dict = PYTHON + "\n\nTABLE = {\n    'a': 1,\n}\n"
    assert not closes_with_brackets(split_lines(python_dict))
    # A "{" closed at another indentation, or never closed, is not a braced body.
    assert not closes_with_brackets(split_lines("x = {\n    1: 2}\n"))
    assert not closes_with_brackets(split_lines("Some prose {\nand more.\n"))
    assert not closes_with_brackets([])


_names = st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), min_size=1,
                  max_size=5)


@given(_names, st.integers(0, 3))
def test_functions_laid_out_with_braces_or_by_indentation_are_told_apart(names: list[str],
                                                                         tables: int) -> None:
    # The same functions written both ways, each with an if/else body, the Python ones beside
    # up to three dict literals (bodies that "{" opens and "}" closes at their indentation).
    braced = "".join(f"function {n}(x) {{\n  if (x) {{\n    return 1;\n  }} else {{\n"
                     f"    return 2;\n  }}\n}}\n\n" for n in names)
    python = "".join(f"def {n}(x):\n    if x:\n        return 1\n    else:\n"
                     f"        return 2\n\n\n" for n in names)
    python += "".join(f"T{k} = {{\n    'a': 1,\n}}\n" for k in range(tables))
    assert closes_with_brackets(split_lines(braced))
    # Three bodies a function open with ":" (def, if, else): only as many "{" bodies tip it.
    assert closes_with_brackets(split_lines(python)) == (tables >= 3 * len(names))


def test_a_switchs_labels_do_not_make_a_braced_file_python() -> None:
    c_file = ("int f(int x)\n{\n  switch (x) {\n  case 1:\n    return 2;\n  default:\n"
              "    return 3;\n  }\n}\n")
    assert closes_with_brackets(split_lines(c_file))


PARSED = '''USAGE = """
usage: tool [options]
"""


@pytest.mark.parametrize("x", [
    1,
    2,
])
def test_x(x):
    """Doc.
That starts a line at the margin.
    """
    return x
    # a comment the layout keeps in the unit


def after():
    pass
'''


def test_where_the_document_parses_the_parser_ends_its_units() -> None:
    lines = split_lines(PARSED)
    # The layout alone cuts both short: the string's lines at the margin, the decorator's "])".
    assert (layout_end(lines, 1), unit_end(lines, 1)) == (1, 3)
    assert (layout_end(lines, 6), unit_end(lines, 6)) == (9, 15)
    # The trailing comment indented into the function stays in it, as the layout reads it.
    assert (layout_end(lines, 10), unit_end(lines, 10)) == (11, 15)
    assert unit_end(lines, 18) == layout_end(lines, 18) == 19


def test_a_document_that_does_not_parse_is_read_by_layout() -> None:
    broken = PARSED.replace("def after():", "def after(:")
    lines = split_lines(broken)
    assert [unit_end(lines, n) for n in range(1, len(lines) + 1)] == [
        layout_end(lines, n) for n in range(1, len(lines) + 1)]


def test_a_braced_document_is_read_by_its_grammar() -> None:
    js = "const DOC = `\nmargin\n`;\nfunction f(a) {\n  return a;\n}\n"
    lines = split_lines(js)
    assert (layout_end(lines, 1), unit_end(lines, 1)) == (1, 3)
    assert unit_end(lines, 4) == layout_end(lines, 4) == 6


def test_body_lines_are_inside_functions_and_open_no_definition() -> None:
    from copygram.language.units import body_lines

    py = ("import os\n\n\ndef f(x):\n    y = x\n    def g():\n        return 1\n"
          "    return y\n\n\nclass A:\n    limit = 3\n\n    def m(self):\n        return 2\n")
    assert sorted(body_lines(split_lines(py))) == [5, 7, 8, 15]  # g's line 6 and m's 14 open one
    java = ("class Solution {\n    static final int X = 1;\n    public int f(int x) {\n"
            "        for (int i = 0; i < x; i++) {\n            x += i;\n        }\n"
            "        return x;\n    }\n}\n")
    assert sorted(body_lines(split_lines(java))) == [4, 5, 6, 7, 8]
    assert body_lines(split_lines("def f(:\n    pass\n")) == frozenset()  # does not parse
