"""A document's indentation unit, and an edit's lines written in another unit put back in it
(copygram.language.indent_style)."""

from __future__ import annotations

import ast

from hypothesis import given
from hypothesis import strategies as st

from copygram.language.indent_style import (
    TAB,
    indent_unit,
    relaid,
    relaid_text,
    restyled,
    spaced_view,
    tabbed,
)
from copygram.language.lines import split_lines

FOUR = '''def mean(xs):
    """Return the mean of xs."""
    return sum(xs) / len(xs)


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n % 2 == 1:
        return s[n // 2]
    return (s[n // 2 - 1] + s[n // 2]) / 3


print(mean([1, 2]), median([1, 2]))
'''
MEDIAN_FIXED = FOUR.replace("/ 3\n", "/ 2\n")


def in_unit(text: str, unit: str) -> str:
    return relaid_text(text, "    ", unit)


def test_the_unit_a_document_indents_by() -> None:
    assert indent_unit(split_lines(FOUR)) == "    "
    assert indent_unit(split_lines(in_unit(FOUR, TAB))) == TAB
    assert indent_unit(split_lines(in_unit(FOUR, "  "))) == "  "
    # A docstring's deeper continuation line does not outvote the code's steps.
    assert indent_unit(split_lines('def f():\n    """A.\n      b\n    """\n    return 1\n'
                                   "    pass\n")) == "    "
    # Tabs and spaces at the start of lines, or one indented line: no unit to keep.
    assert indent_unit(split_lines("def f():\n\treturn 1\n\ndef g():\n    return 2\n")) is None
    assert indent_unit(split_lines("def f():\n    return 1\n")) is None
    assert indent_unit(split_lines("")) is None
    # A C block comment's continuation lines ( * text) in a tab-indented file are not read.
    c = "/*\n * A.\n * B.\n */\nint f(int x) {\n\tif (x)\n\t\treturn 1;\n\treturn 0;\n}\n"
    assert indent_unit(split_lines(c)) == TAB


def test_relaid_keeps_depth_and_alignment() -> None:
    assert relaid("\t\t", TAB, "    ") == " " * 8
    assert relaid("\t  ", TAB, "    ") == "      "  # two spaces of alignment kept
    assert relaid(" " * 8, "    ", TAB) == "\t\t"
    assert relaid(" " * 6, "    ", "  ") == "    "  # one depth, then the two-space alignment
    assert relaid("\t ", "  ", TAB) is None  # not written in spaces
    assert relaid("\t \t", TAB, "  ") is None


def test_a_function_written_back_in_four_spaces_goes_back_to_the_file_s_unit() -> None:
    # Qwen2.5-Coder-1.5B's program for "Fix the bug in median" in a tab- and a two-space-
    # indented file: the function written back in four spaces (the case this module is for).
    for unit in (TAB, "  "):
        document = in_unit(FOUR, unit)
        text, moved = restyled(document, in_unit(MEDIAN_FIXED, unit).replace(
            in_unit(MEDIAN_FIXED[MEDIAN_FIXED.index("def median"):], unit),
            MEDIAN_FIXED[MEDIAN_FIXED.index("def median"):]))
        assert text == in_unit(MEDIAN_FIXED, unit)
        assert moved == 5  # the function's indented lines (not the "print" line at the margin)


def test_an_edit_in_the_file_s_own_unit_is_kept_as_it_is() -> None:
    for unit in (TAB, "  ", "    "):
        document = in_unit(FOUR, unit)
        # A line moved one depth deeper on purpose (into a new if) is the edit, not a unit.
        nested = document.replace(in_unit("    s = sorted(xs)\n", unit),
                                  in_unit("    if xs:\n        s = sorted(xs)\n", unit))
        for edit in (document, in_unit(MEDIAN_FIXED, unit), nested):
            assert restyled(document, edit) == (edit, 0)


def test_a_document_whose_unit_cannot_be_read_is_left_alone() -> None:
    mixed = FOUR.replace("    return sum", "\treturn sum")
    four_tabs = in_unit(MEDIAN_FIXED, TAB)
    assert restyled(mixed, four_tabs) == (four_tabs, 0)


def test_a_new_line_led_by_spaces_in_a_tab_file_takes_tabs() -> None:
    # A line the edit added, alone in its hunk, with no document line to compare: in a file
    # whose every indented line starts with a tab, spaces at its start are foreign to it.
    document = in_unit(FOUR, TAB)
    edit = document.replace("\ts = sorted(xs)\n", "\ts = sorted(xs)\n    xs = list(xs)\n")
    text, moved = restyled(document, edit)
    assert text == document.replace("\ts = sorted(xs)\n", "\ts = sorted(xs)\n\txs = list(xs)\n")
    assert moved == 1


def test_line_endings_and_the_rest_of_each_line_are_kept() -> None:
    document = in_unit(FOUR, TAB).replace("\n", "\r\n")
    edit = document.replace(in_unit(FOUR[FOUR.index("def median"):], TAB).replace("\n", "\r\n"),
                            MEDIAN_FIXED[MEDIAN_FIXED.index("def median"):].replace("\n", "\r\n"))
    text, _ = restyled(document, edit)
    assert text == in_unit(MEDIAN_FIXED, TAB).replace("\n", "\r\n")


_BODY = st.lists(st.sampled_from(["x = 1", "y = x", "return x", "pass", "z = f(x)"]),
                 min_size=1, max_size=3)


@st.composite
def python_files(draw: st.DrawFn) -> str:
    """A parsing Python file of functions with nested ifs, indented by four spaces."""
    parts = []
    for k in range(draw(st.integers(1, 4))):
        lines = [f"def f{k}(x):"]
        for depth in range(1, draw(st.integers(1, 3)) + 1):
            lines += ["    " * depth + s for s in draw(_BODY)]
            lines.append("    " * depth + "if x:")
        lines.append("    " * depth + "    pass")
        parts.append("\n".join(lines) + "\n")
    return "\n\n".join(parts)


@given(python_files(), st.sampled_from([TAB, "  ", "   "]), st.data())
def test_any_function_rewritten_in_four_spaces_is_put_back_exactly(
        four: str, unit: str, data: st.DataObject) -> None:
    # The document in `unit`; the edit writes some of its functions back in four spaces, as
    # they were otherwise: restyled gives the document back, and the result parses.
    document = in_unit(four, unit)
    functions = document.split("\n\n")
    redone = data.draw(st.sets(st.integers(0, len(functions) - 1), min_size=1))
    edit = "\n\n".join(relaid_text(f, unit, "    ") if k in redone else f
                       for k, f in enumerate(functions))
    text, moved = restyled(document, edit)
    assert text == document
    ast.parse(text)
    assert moved == sum(len([line for line in split_lines(functions[k]) if line[0] in " \t"])
                        for k in redone)


@given(python_files(), st.sampled_from([TAB, "  ", "    "]))
def test_restyled_never_changes_what_a_line_says_or_how_many_there_are(four: str,
                                                                     unit: str) -> None:
    document = in_unit(four, unit)
    for edit in (four, in_unit(four, TAB), in_unit(four, "  "), document):
        text, _ = restyled(document, edit)
        assert [line.lstrip(" \t") for line in split_lines(text)] == \
            [line.lstrip(" \t") for line in split_lines(edit)]
    assert restyled(document, document) == (document, 0)


@given(python_files(), st.lists(st.sampled_from(["", " ", "  ", "   ", "    ", TAB]), max_size=4),
       st.integers(0, 60))
def test_a_tab_file_s_spaced_view_goes_back_exactly(four: str, leads: list[str],
                                                    at: int) -> None:
    # A tab-indented file, perhaps with a line led by other whitespace spliced in: its view
    # goes back to it exactly, or there is none; a view holds no tab where a line begins.
    lines = split_lines(in_unit(four, TAB))
    for lead in leads:
        lines.insert(at % (len(lines) + 1), f"{TAB}{lead}x = 1\n")
    document = "".join(lines)
    view = spaced_view(document)
    if view is None:
        assert indent_unit(lines) != TAB or tabbed(relaid_text(document, TAB, "    ")) != document
        return
    assert tabbed(view) == document
    assert not any(line.startswith(TAB) for line in split_lines(view))
    assert [line.lstrip(" \t") for line in split_lines(view)] == \
        [line.lstrip(" \t") for line in lines]


def test_no_view_of_a_file_not_indented_by_tabs_or_one_that_would_not_come_back() -> None:
    assert spaced_view(FOUR) is None and spaced_view(in_unit(FOUR, "  ")) is None
    tabs = in_unit(FOUR, TAB)
    assert spaced_view(tabs) == FOUR
    # Four spaces of alignment after a tab would come back as a second tab.
    assert spaced_view(tabs.replace(f"{TAB}n = len(s)", f"{TAB}    n = len(s)")) is None
    # A C block comment's continuation lines keep their one space.
    c = "int f(void) {\n\t/* a\n\t * b */\n\treturn 0;\n}\n"
    assert tabbed(spaced_view(c) or "") == c
