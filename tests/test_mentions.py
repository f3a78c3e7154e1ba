"""A rename's calls in a file's documentation (copygram.language.mentions): doctests and
comment examples renamed; code, string literals and prose words never."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from copygram.language.definitions import code_only
from copygram.language.mentions import rename_documented_calls

PY = '''import os  # strlen(s) is the length

def compute_strlen(string: str) -> int:
    """ Return length of given string
    >>> strlen('')
    0
    >>> strlen ('abc')
    3
    The strlen of a word; my_strlen(x) is another function.
    """
    message = "strlen(x) is gone"
    return len(string)


def g():
    return compute_strlen("é") + strlen(1)
'''


def test_python_doctests_and_comments_are_renamed_and_nothing_else() -> None:
    text, count = rename_documented_calls(PY, [("strlen", "compute_strlen")], "python")
    assert count == 3
    assert ">>> compute_strlen('')" in text and ">>> compute_strlen ('abc')" in text
    assert "# compute_strlen(s) is the length" in text
    # Code is the model's (a call of the old name left there is the check's concern), and a
    # string literal is code; prose and other names keep their words.
    assert 'compute_strlen("é") + strlen(1)' in text
    assert '"strlen(x) is gone"' in text
    assert "The strlen of a word; my_strlen(x)" in text
    assert code_only(text, "python") == code_only(PY, "python")


def test_comments_of_tree_sitter_languages_are_renamed() -> None:
    js = ("/* Check\n  isSorted([5]) \u279e true\n*/\n"
          "const calcIsSorted = (lst) => { return 'isSorted(1)'; } // isSorted (2)\n")
    text, count = rename_documented_calls(js, [("isSorted", "calcIsSorted")], "javascript")
    assert count == 2
    assert text == js.replace("  isSorted([5])", "  calcIsSorted([5])").replace(
        "// isSorted (2)", "// calcIsSorted (2)")
    cpp = '// f("") == ""\nint g() { return f(1); } /* f ("b") */\n'
    text, count = rename_documented_calls(cpp, [("f", "h")], "cpp")
    assert (text, count) == ('// h("") == ""\nint g() { return f(1); } /* h ("b") */\n', 2)


def test_nothing_is_renamed_without_a_parse_a_grammar_or_a_pair() -> None:
    broken = "def f(:\n    # g(1)\n"
    assert rename_documented_calls(broken, [("g", "h")], "python") == (broken, 0)
    assert rename_documented_calls("# g(1)\n", [("g", "h")], None) == ("# g(1)\n", 0)
    assert rename_documented_calls("# g(1)\n", [], "python") == ("# g(1)\n", 0)
    # Lines that end in "\r\n" or a lone "\r" are read as ast reads them.
    assert rename_documented_calls("x = 1\r\n# g(1)\ry = 2\r", [("g", "h")], "python") == (
        "x = 1\r\n# h(1)\ry = 2\r", 1)


_PIECES = st.sampled_from([
    "f(1)\n", "x = f(2)\n", "# f(3) here\n", "s = 'f(4)'\n", "def f(a):\n    return a\n",
    'def g():\n    """f(5) and f (6)"""\n    return f(7)\n', "# the f of it\n",
    "class C:\n    '''>>> f(8)'''\n", "y = 'é'  # f(9)\n"])


@given(st.lists(_PIECES, max_size=8))
def test_python_code_is_never_changed(pieces: list[str]) -> None:
    text = "".join(pieces)
    renamed, count = rename_documented_calls(text, [("f", "h")], "python")
    assert code_only(renamed, "python") == code_only(text, "python")
    assert renamed.count("f(") + renamed.count("f (") + count == (
        text.count("f(") + text.count("f ("))
    assert len(renamed) == len(text)
