"""Documentation an edit dropped, and put back above or in its definition
(copygram.language.lost_docs)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram.language.lost_docs import lost_documentation, put_back_documentation

JS = """/*You will be given the name of a class (a string) and a list of extensions.
  The extensions are to be used to load additional classes to the class.
  Example:
  for strongestExtension('my_class', ['AA', 'Be', 'CC']) == 'my_class.AA'
  */
const strongestExtension = (class_name, extensions) => {
  return class_name + '.' + extensions[0];
}

// Calls strongestExtension with whatever it is given,
// and returns what it returns.
const caller1 = (...args) => strongestExtension(...args);
"""
JS_EDIT = "Add a last parameter calls = null to strongestExtension."
# The default model's rewrite (the dev split's JavaScript add_parameter row): the comment above
# the function it was asked to change is gone, the function kept.
JS_REPLY = JS[JS.index("const strongestExtension"):].replace(
    "(class_name, extensions) =>", "(class_name, extensions, calls = null) =>")

PY = '''import math


# The mean of the values: their sum over their count,
# for a list of at least one number.
def mean(values):
    return sum(values) / len(values)


def median(values):
    """The middle value of a non-empty list of numbers.

    For an even count this is the mean of the two middle values.
    """
    ordered = sorted(values)
    return ordered[len(ordered) // 2]
'''
MEDIAN_BARE = PY.replace('''    """The middle value of a non-empty list of numbers.

    For an even count this is the mean of the two middle values.
    """
''', "")


def test_a_comment_above_a_kept_function_that_the_reply_left_out_is_lost() -> None:
    lost = lost_documentation(JS, JS_REPLY, JS_EDIT, "javascript")
    assert [(doc.name, doc.start, doc.end, doc.docstring) for doc in lost] == [
        ("strongestExtension", 1, 5, False)]
    restored = put_back_documentation(JS, JS_REPLY, lost, "javascript")
    assert restored == JS.replace("(class_name, extensions) =>",
                                  "(class_name, extensions, calls = null) =>")
    assert lost_documentation(JS, restored, JS_EDIT, "javascript") == ()


def test_a_docstring_and_a_comment_run_are_put_back_where_they_were() -> None:
    reply = MEDIAN_BARE.replace("# The mean of the values: their sum over their count,\n"
                                "# for a list of at least one number.\n", "")
    lost = lost_documentation(PY, reply, "Fix bugs in median.", "python")
    assert [(doc.name, doc.docstring) for doc in lost] == [("median", True), ("mean", False)]
    assert put_back_documentation(PY, reply, lost, "python") == PY


def test_a_docstring_goes_back_at_its_body_s_indentation() -> None:
    reply = MEDIAN_BARE.replace("    ordered = sorted(values)\n    return",
                                "  ordered = sorted(values)\n  return")
    lost = lost_documentation(PY, reply, "Fix bugs in median.", "python")
    restored = put_back_documentation(PY, reply, lost, "python")
    assert restored is not None
    assert '  """The middle value of a non-empty list of numbers.\n\n  For an even' in restored


@pytest.mark.parametrize("reply, instruction", [
    # An instruction about documentation is the judge of what it keeps.
    (MEDIAN_BARE, "Remove the docstring of median."),
    (MEDIAN_BARE, "Fix the comments of median."),
    # So is one that restructures.
    (MEDIAN_BARE, "Clean up median."),
    # A reworded docstring is an edit of it, not a loss.
    (PY.replace("For an even count this is the mean of the two middle values.",
                "Even counts: the mean of the two middle ones."), "Fix bugs in median."),
    # A docstring put in its place is the model's own.
    (MEDIAN_BARE.replace("    ordered = sorted", '    """Median."""\n    ordered = sorted'),
     "Fix bugs in median."),
    # Its definition gone (removed, renamed) takes it along.
    (PY[:PY.index("def median")], "Remove the function median."),
    (MEDIAN_BARE.replace("def median", "def middle"), "Rename median to middle."),
    # No instruction: nothing to read it against.
    (MEDIAN_BARE, ""),
])
def test_what_is_no_loss(reply: str, instruction: str) -> None:
    assert lost_documentation(PY, reply, instruction, "python") == ()


def test_a_one_line_comment_or_a_language_without_a_parser_is_not_read() -> None:
    one_line = "// Sums.\nconst f = (a) => a;\n"
    assert lost_documentation(one_line, "const f = (a) => a + 1;\n", "Fix f.", "javascript") == ()
    assert lost_documentation(JS, JS_REPLY, JS_EDIT, None) == ()
    assert lost_documentation(JS, JS_REPLY, JS_EDIT, "text") == ()


def test_a_comment_with_no_place_left_cannot_be_put_back() -> None:
    lost = lost_documentation(JS, JS_REPLY, JS_EDIT, "javascript")
    assert put_back_documentation(JS, "const other = 1;\n", lost, "javascript") is None


_SENTENCE = st.text(alphabet="abcdefghij klmnop", min_size=14, max_size=40).map(
    lambda s: "x" + s.strip() + "x")


@given(st.lists(st.tuples(st.booleans(), st.lists(_SENTENCE, min_size=2, max_size=3),
                          st.booleans()), min_size=1, max_size=5), st.data())
def test_every_dropped_block_is_found_and_put_back_as_it_was(
        functions: list[tuple[bool, list[str], bool]], data: st.DataObject) -> None:
    # Python functions, each documented by a comment run above it or a docstring (or not),
    # some of them left out by the "edit": put back, the file is what it was.
    parts, dropped_parts = [], []
    for k, (docstring, words, drop) in enumerate(functions):
        sentences = [f"f{k}, line {i}: {text}" for i, text in enumerate(words)]
        if docstring:
            doc = '    """' + "\n    ".join(sentences) + '\n    """\n'
            whole = f"def f{k}(x):\n{doc}    return x + {k}\n"
            bare = f"def f{k}(x):\n    return x + {k}\n"
        else:
            doc = "".join(f"# {s}\n" for s in sentences)
            whole = f"{doc}def f{k}(x):\n    return x + {k}\n"
            bare = f"def f{k}(x):\n    return x + {k}\n"
        parts.append(whole)
        dropped_parts.append(bare if drop else whole)
    before = "\n\n".join(parts)
    after = "\n\n".join(dropped_parts)
    instruction = data.draw(st.sampled_from(["Fix bugs in f0.", "Add a parameter to f0."]))
    lost = lost_documentation(before, after, instruction, "python")
    assert len(lost) == sum(drop for _, _, drop in functions)
    assert put_back_documentation(before, after, lost, "python") == before
