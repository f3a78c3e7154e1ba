"""A rename program's result, its documentation's calls of the old name renamed too
(copygram.decode.renames), with a scripted model; a rewrite's result stays the model's own."""

from __future__ import annotations

from copygram import EditSession
from copygram.decode.prompt import REWRITE_SYSTEM
from copygram.language.search_replace import BLOCK_CLOSE, BLOCK_OPEN, DIVIDER
from copygram.testing import PromptedBackend

DOCUMENT = '''def f(x):
    """Add one.

    >>> f(1)
    2
    """
    return x + 1


# g(y) is f(y) by another name
def g(y):
    return f(y)
'''
INSTRUCTION = "Rename the function f to add_one and update every call of it."
BODY = '''    """Add one.

    >>> f(1)
    2
    """
    return x + 1
'''
# The model renames the code and keeps its docstring's doctest and the comment as they were.
PROGRAM = (BLOCK_OPEN + "def f(x):\n" + DIVIDER + "def add_one(x):\n" + BODY + BLOCK_CLOSE
           + BLOCK_OPEN + "def g(y):\n" + DIVIDER + "def g(y):\n    return add_one(y)\n"
           + BLOCK_CLOSE)
CODE_RENAMED = (DOCUMENT.replace("def f(x)", "def add_one(x)")
                .replace("return f(y)", "return add_one(y)"))


def session(mode: str, rewrite: str = CODE_RENAMED) -> EditSession:
    backend = PromptedBackend(DOCUMENT, replies=((REWRITE_SYSTEM, rewrite), ("", PROGRAM)))
    return EditSession(backend, mode=mode)


def test_a_rename_programs_documented_calls_are_renamed_too() -> None:
    result = session("program").edit(DOCUMENT, INSTRUCTION, language="python")
    assert result.mode == "program" and result.redone is None
    assert result.text == (CODE_RENAMED.replace(">>> f(1)", ">>> add_one(1)")
                           .replace("is f(y) by", "is add_one(y) by"))
    assert result.stats.doc_renames == 2
    assert "# g(y) is" in result.text  # g is not renamed: only the pairs the instruction asks


def test_nothing_else_is_renamed() -> None:
    # Another instruction: no rename asked, nothing renamed (the program is the same).
    result = session("program").edit(DOCUMENT, "Fix bugs in f and g.", language="python")
    assert ">>> f(1)" in result.text and result.stats.doc_renames == 0
    # Rewrite mode's result is the model's own text, as plain greedy would write it.
    rewritten = session("rewrite").edit(DOCUMENT, INSTRUCTION, language="python")
    assert rewritten.text == CODE_RENAMED and rewritten.stats.doc_renames == 0
