"""The view of a long document a program's prompt shows (copygram.language.focus): what it
shows, what it leaves out, and that it always reads back to the document."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from copygram.language.damage import find_damage
from copygram.language.focus import ELISION, elision_line, excerpt_view, focus_view, splice
from copygram.language.lines import split_lines


def _function(name: str, body: int, calls: str = "") -> str:
    lines = [f"def {name}(values):\n", f'    """{name.title()} of the values."""\n']
    lines += [f"    step_{i} = len(values) + {i}\n" for i in range(body)]
    lines.append(f"    return {calls}(values)\n" if calls else "    return step_0\n")
    return "".join(lines)


HEAD = "import math\nimport statistics\n\nLIMIT = 10\n"
FUNCTIONS = [("mean", 12, ""), ("median", 10, ""), ("variance", 14, ""), ("stdev", 8, ""),
             ("summary", 5, "median"), ("spread", 9, "")]
DOCUMENT = HEAD + "".join("\n\n" + _function(*f) for f in FUNCTIONS)


def _expanded(view: str, document: str) -> str:
    """The view with each elision line replaced by the document's lines it stands for."""
    lines = split_lines(document)
    out = []
    for line in split_lines(view):
        match = re.search(r"lines (\d+)-(\d+) not shown", line)
        if match and ELISION.match(line.rstrip("\n")):
            out += lines[int(match.group(1)) - 1:int(match.group(2))]
        else:
            out.append(line)
    return "".join(out)


def _span(name: str) -> tuple[int, int]:
    lines = split_lines(DOCUMENT)
    start = next(i for i, line in enumerate(lines, 1) if line.startswith(f"def {name}("))
    end = start
    while end < len(lines) and lines[end].startswith("    "):
        end += 1
    return start, end


def test_the_view_shows_the_head_the_target_and_its_caller_and_elides_the_rest() -> None:
    view = focus_view(DOCUMENT, "Fix bugs in median.", "python")
    assert view is not None
    text = view.text
    assert text.startswith(HEAD)
    assert _function("median", 10) in text
    assert _function("summary", 5, "median") in text  # it calls median
    for other in ("mean", "variance", "stdev", "spread"):
        assert f"def {other}(" not in text
    assert _expanded(text, DOCUMENT) == DOCUMENT
    assert _span("median") in view.shown and _span("summary") in view.shown
    assert len(split_lines(text)) < len(split_lines(DOCUMENT)) / 2


def test_every_elision_line_names_the_lines_it_stands_for() -> None:
    view = focus_view(DOCUMENT, "Remove the function stdev.", "python")
    assert view is not None
    elided = [line for line in split_lines(view.text) if ELISION.match(line.rstrip("\n"))]
    assert elided and elided[-1] == elision_line("python", _span("summary")[0] - 2,
                                                 len(split_lines(DOCUMENT)))
    assert _expanded(view.text, DOCUMENT) == DOCUMENT


def test_no_view_where_the_instruction_targets_no_definition_or_nothing_is_left_out() -> None:
    assert focus_view(DOCUMENT, "Add type hints everywhere.", "python") is None
    assert focus_view(DOCUMENT, "Fix bugs in median.", "text") is None  # prose: no comment
    assert focus_view(DOCUMENT, "Fix bugs in median.", None) is None
    short = HEAD + "\n\n" + _function("median", 2)
    assert focus_view(short, "Fix bugs in median.", "python") is None  # the view is the file


def test_a_braced_language_elides_with_its_own_comment() -> None:
    functions = [f"function f{i}(x) {{\n" + "".join(f"  x = x + {j};\n" for j in range(8))
                 + "  return x;\n}\n" for i in range(6)]
    document = "const LIMIT = 3;\n\n" + "\n".join(functions)
    view = focus_view(document, "Fix bugs in f3.", "javascript")
    assert view is not None
    assert functions[3] in view.text and "function f1(" not in view.text
    assert "// ... lines " in view.text and "# ..." not in view.text
    assert _expanded(view.text, document) == document


def test_related_definitions_stop_at_the_budget_the_target_never_does() -> None:
    callers = "".join(f"\n\ndef use_{i}(values):\n" + "    x = 1\n" * 20
                      + "    return median(values)\n" for i in range(10))
    document = DOCUMENT + callers
    view = focus_view(document, "Fix bugs in median.", "python", context_lines=50)
    assert view is not None
    assert _function("median", 10) in view.text
    shown_callers = view.text.count("return median(values)")
    assert 1 <= shown_callers <= 3  # 22-line callers within 50 lines (summary is 8)
    whole = focus_view(document, "Fix bugs in median.", "python", context_lines=0)
    assert whole is not None and "def use_0(" not in whole.text
    assert _function("median", 10) in whole.text


def test_an_elision_line_written_into_the_file_is_damage() -> None:
    leaked = DOCUMENT.replace("LIMIT = 10\n", "LIMIT = 10\n" + elision_line("python", 5, 9))
    damage = find_damage(DOCUMENT, leaked, language="python")
    assert [d.kind for d in damage] == ["marker"]
    assert "elision" in str(damage[0])
    # A file that holds such a line already may keep it.
    assert find_damage(leaked, leaked + "x = 1\n", language="python") == ()


@given(st.lists(st.tuples(st.integers(0, 12), st.booleans()), min_size=1, max_size=12),
       st.integers(0, 11), st.integers(0, 80))
def test_any_view_reads_back_to_its_document(shape: list[tuple[int, bool]], target: int,
                                             budget: int) -> None:
    names = [f"f_{i}" for i in range(len(shape))]
    document = "import os\n" + "".join(
        "\n\n" + _function(name, body, names[(i + 1) % len(names)] if calls else "")
        for i, (name, (body, calls)) in enumerate(zip(names, shape, strict=True)))
    name = names[target % len(names)]
    view = focus_view(document, f"Fix bugs in {name}.", "python", context_lines=budget)
    if view is None:
        return
    assert _expanded(view.text, document) == document
    assert f"def {name}(" in view.text
    lines = split_lines(document)
    assert all(1 <= a <= b <= len(lines) for a, b in view.shown)
    assert all(b + 1 < c for (_, b), (c, _) in zip(view.shown, view.shown[1:], strict=False))


def test_an_addition_is_shown_its_places_and_the_names_it_must_know() -> None:
    # An added function goes after the last definition: the view shows the head and spread.
    view = focus_view(DOCUMENT, "Add a function `mode_of(values)`.", "python")
    assert view is not None
    assert view.text.startswith(HEAD) and _function("spread", 9) in view.text
    assert "def mean(" not in view.text and _expanded(view.text, DOCUMENT) == DOCUMENT
    # One that speaks of every function sees each one's first line (their names), no body.
    every = focus_view(DOCUMENT, "Add an `__all__` list at the top of the module that names "
                       "every top-level function.", "python")
    assert every is not None and _expanded(every.text, DOCUMENT) == DOCUMENT
    for name, _, _ in FUNCTIONS:
        assert f"def {name}(values):\n" in every.text
    assert "step_3" not in every.text  # no body shown


# The excerpt a scoped rewrite writes again (copygram.decode.scoped).

def test_an_excerpt_shows_the_head_and_the_named_definitions_only() -> None:
    view = excerpt_view(DOCUMENT, "Fix bugs in variance and spread.", "python")
    assert view is not None
    assert view.shown[0][0] == 1  # the head: its imports and constant
    assert _span("variance") in view.shown and _span("spread")[0] in {s for s, _ in view.shown}
    assert "def median(" not in view.text and "def summary(" not in view.text
    assert not ELISION.match(split_lines(view.text)[0])
    assert not ELISION.match(split_lines(view.text)[-1].rstrip("\n"))
    assert splice(DOCUMENT, view, view.text) == DOCUMENT


def test_no_excerpt_for_a_rename_or_nothing_named() -> None:
    for instruction in ("Rename the function mean to average and update every call of it.",
                        "Make the code faster."):
        assert excerpt_view(DOCUMENT, instruction, "python") is None
    assert excerpt_view(DOCUMENT, "Fix bugs in mean.", "text") is None


def test_an_additions_excerpt_is_the_head_and_its_places() -> None:
    # The new unit goes after the head's last statement or the last definition: the excerpt
    # shows those, and a rewrite that appends the function lands after the last one.
    view = excerpt_view(DOCUMENT, "Add a function mode_of(values) that returns the most "
                                  "common value.", "python")
    assert view is not None and view.shown[0][0] == 1 and view.shown[-1] == _span("spread")
    assert "def mean(" not in view.text
    added = view.text + "\n\ndef mode_of(values):\n    return max(values, key=values.count)\n"
    edited = splice(DOCUMENT, view, added)
    assert edited == DOCUMENT + "\n\ndef mode_of(values):\n    return max(values, key=values.count)\n"
    # One that speaks of every function gets each one's first line beside the excerpt, not in
    # it: the default model kept none of 61 first lines between elision lines in order.
    every = excerpt_view(DOCUMENT, "Add an `__all__` list at the top of the module that names "
                         "every top-level function.", "python")
    assert every is not None and splice(DOCUMENT, every, every.text) == DOCUMENT
    assert every.outline == ("LIMIT = 10",
                             *(f"def {name}(values):" for name, _, _ in FUNCTIONS))
    assert not any(f"def {name}(values):\n" in every.text for name, _, _ in FUNCTIONS[1:])
    assert "step_3" not in every.text


def test_a_spliced_rewrite_changes_the_runs_it_shows_and_nothing_else() -> None:
    view = excerpt_view(DOCUMENT, "Fix bugs in variance and spread.", "python")
    assert view is not None
    rewritten = (view.text.replace("step_0 = len(values) + 0", "step_0 = len(values) * 2")
                 .replace('    """Spread of the values."""\n', ""))
    edited = splice(DOCUMENT, view, rewritten)
    assert edited is not None and not find_damage(DOCUMENT, edited, language="python")
    assert edited.count("step_0 = len(values) * 2") == 2  # variance and spread, not the rest
    assert "Spread of the values" not in edited and "Mean of the values" in edited
    removed = splice(DOCUMENT, view, view.text.replace(_function("spread", 9), ""))
    assert removed is not None and "def spread(" not in removed and "def stdev(" in removed


def test_a_rewrite_that_drops_or_changes_an_elision_line_is_not_spliced() -> None:
    view = excerpt_view(DOCUMENT, "Fix bugs in variance and spread.", "python")
    assert view is not None
    cut = [line for line in split_lines(view.text) if ELISION.match(line)]
    assert cut
    assert splice(DOCUMENT, view, view.text.replace(cut[0], "")) is None
    assert splice(DOCUMENT, view, view.text.replace(cut[0], cut[0].replace("lines", "rows"))) \
        is None
    assert splice(DOCUMENT, view, view.text + cut[0]) is None


@given(st.sets(st.sampled_from([name for name, _, _ in FUNCTIONS]), min_size=1, max_size=3),
       st.sampled_from(["", "    # checked\n"]))
def test_an_excerpt_reads_back_and_splices_each_run_in_place(
        names: set[str], extra: str) -> None:
    view = excerpt_view(DOCUMENT, f"Fix bugs in {' and '.join(sorted(names))}.", "python")
    assert view is not None
    assert _expanded(view.text, DOCUMENT) == "".join(
        split_lines(DOCUMENT)[view.shown[0][0] - 1:view.shown[-1][1]])
    # A line added at the end of every run lands at the end of each run in the document.
    pieces = re.split(r"(?m)^(# \.\.\. lines \d+-\d+ not shown \.\.\.\n)", view.text)
    marked = "".join(p if ELISION.match(p.rstrip("\n")) else p + extra for p in pieces)
    edited = splice(DOCUMENT, view, marked)
    assert edited is not None
    assert edited.count("# checked\n") == (len(view.shown) if extra else 0)
    assert len(split_lines(edited)) == len(split_lines(DOCUMENT)) + edited.count("# checked\n")
