"""Definitions an edit lost, and a partial reply put back in its file (copygram.language.lost)."""

from __future__ import annotations

import keyword
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from copygram.language.damage import find_damage
from copygram.language.lost import lost_definitions, put_back

PY = '''import math


def first(x):
    """The first."""
    return x + 1


def second(x):
    return first(x) * 2


class Third:
    def method(self):
        return 3


LIMIT = 10
'''
SECOND_FIXED = "def second(x):\n    return first(x) * 3\n"

CPP = """#include <vector>
using namespace std;
/*
Counts the numbers.
  count_nums({1, 2}) == 2
*/
int count_nums(vector<int> n){
    return n.size();
}

/*
The numbers up to n.
  count_up_to(5) => {2,3}
*/
vector<int> count_up_to(int n){
    vector<int> out;
    return out;
}
"""


def test_a_reply_of_one_function_loses_the_others() -> None:
    assert lost_definitions(PY, SECOND_FIXED, "Fix bugs in second.", "python") == (
        "first", "Third", "LIMIT")


def test_what_the_instruction_names_or_restructures_is_not_lost() -> None:
    without_first = PY.replace(PY[PY.index("def first"):PY.index("def second")], "")
    assert lost_definitions(PY, without_first, "Remove the function first.", "python") == ()
    renamed = PY.replace("first", "initial")
    assert lost_definitions(PY, renamed, "Rename first to initial.", "python") == ()
    # Cleaning up or merging code may take what it does not name with it.
    assert lost_definitions(PY, without_first, "Clean up second.", "python") == ()
    assert lost_definitions(PY, without_first, "Merge the helpers into second.", "python") == ()
    # An instruction that names nothing of the file says nothing of what may go.
    assert lost_definitions(PY, without_first, "Fix the bug(s) in this solution.", "python") == ()
    # Prose, or a file that does not parse: nothing to read.
    assert lost_definitions("one\n\ntwo\n", "two\n", "Revise two.", "prose") == ()
    assert lost_definitions("def f(:\n", "", "Fix f.", "python") == ()


def test_a_method_of_a_named_class_may_go_with_its_edit() -> None:
    without_method = PY.replace("    def method(self):\n        return 3\n", "    pass\n")
    assert lost_definitions(PY, without_method, "Simplify Third.", "python") == ()
    assert lost_definitions(PY, without_method, "Fix Third.", "python") == ()
    assert lost_definitions(PY, without_method, "Fix second.", "python") == ("method",)


def test_a_partial_reply_is_put_back_in_its_file() -> None:
    lost = lost_definitions(PY, SECOND_FIXED, "Fix bugs in second.", "python")
    restored = put_back(PY, SECOND_FIXED, lost, "python")
    assert restored == PY.replace("return first(x) * 2", "return first(x) * 3")


def test_the_file_from_one_function_on_gets_its_head_back() -> None:
    # The first definition comes back before the one that followed it, and the file's head
    # (its import) above it: the reply had nothing above its first definition.
    tail = PY[PY.index("def second"):]
    assert put_back(PY, tail, ("first",), "python") == PY
    # And a tail below the last definition (a __main__ block) where the reply has none.
    main = PY + '\n\nif __name__ == "__main__":\n    print(second(1))\n'
    assert put_back(main, SECOND_FIXED, ("first", "Third", "LIMIT"), "python") == main.replace(
        "return first(x) * 2", "return first(x) * 3")
    # A reply with a head of its own keeps it.
    headed = "import os\n\n\n" + tail
    assert put_back(PY, headed, ("first",), "python") == "import os\n\n\n" + PY[
        PY.index("def first"):]


def test_a_c_comment_block_comes_back_whole() -> None:
    reply = CPP[CPP.index("/*\nThe numbers"):]
    # The comment's inner lines are not comment-marked; the block above the definition is
    # whole, up to the blank line (here the file's head, which the reply lacked, with it).
    restored = put_back(CPP, reply, ("count_nums",), "cpp")
    assert restored == CPP
    middle = ("int a() {\n  return 1;\n}\n\n/*\nThe b.\n  b() == 2\n*/\nint b() {\n"
              "  return 2;\n}\n\nint c() {\n  return 3;\n}\n")
    reply = "int a() {\n  return 1;\n}\n\nint c() {\n  return 3;\n}\n"
    assert put_back(middle, reply, ("b",), "cpp") == middle
    assert not find_damage(CPP, restored, language="cpp")


def test_a_lost_method_of_a_kept_class_has_no_place_to_tell() -> None:
    without_method = PY.replace("    def method(self):\n        return 3\n", "    pass\n")
    assert put_back(PY, without_method, ("method",), "python") is None
    # No definition in the reply to place them by.
    assert put_back(PY, "print(1)\n", ("first", "second", "Third", "LIMIT"), "python") is None


CLASS = """class Account:
    \"\"\"A balance.\"\"\"

    def __init__(self, balance):
        self.balance = balance

    # Money in.
    def deposit(self, amount):
        self.balance += amount

    def withdraw(self, amount):
        self.balance -= amount


def open_account():
    return Account(0)
"""


@pytest.mark.parametrize("method", ["__init__", "deposit", "withdraw"])
def test_a_lost_method_of_a_kept_class_goes_back_among_its_siblings(method: str) -> None:
    # Asked to fix one method, the rewrite wrote the class without another one.
    fixed = CLASS.replace("self.balance -= amount", "self.balance -= abs(amount)")
    lines = fixed.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if f"def {method}(" in line)
    commented = lines[start - 1].strip().startswith("#")
    start -= commented
    reply = "".join(lines[:start] + lines[start + 3 + commented:])  # its comment, it, a blank
    instruction = "Fix withdraw." if method != "withdraw" else "Fix the class Account."
    lost = lost_definitions(CLASS, reply, instruction, "python")
    if method == "withdraw":  # inside the class the instruction names: its edit's to make
        assert lost == ()
        return
    assert lost == (method,)
    restored = put_back(CLASS, reply, lost, "python")
    assert restored == fixed
    # A class written again at another indentation gives no place to tell.
    assert put_back(CLASS, reply.replace("    ", "  "), lost, "python") is None


def test_a_lost_java_method_goes_back_in_its_class() -> None:
    pytest.importorskip("tree_sitter")
    before = ("class Solution {\n    public int a() {\n        return 1;\n    }\n\n"
              "    /** The b. */\n    public int b() {\n        return 2;\n    }\n\n"
              "    public int c() {\n        return 3;\n    }\n}\n")
    reply = ("class Solution {\n    public int a() {\n        return 1;\n    }\n\n"
             "    public int c() {\n        return 4;\n    }\n}\n")
    lost = lost_definitions(before, reply, "Fix c.", "java")
    assert lost == ("b",)
    assert put_back(before, reply, lost, "java") == before.replace("return 3", "return 4")


NAMES = st.lists(st.text(string.ascii_lowercase, min_size=3, max_size=8)
                 .filter(lambda name: not keyword.iskeyword(name)), min_size=2, max_size=7,
                 unique=True)


@given(NAMES, st.data())
def test_any_reply_of_some_functions_in_order_is_put_back_as_the_file(
        names: list[str], data: st.DataObject) -> None:
    functions = [f"def {name}(x):\n    return x + {i}\n" for i, name in enumerate(names)]
    before = "\n\n".join(functions)
    kept = data.draw(st.lists(st.sampled_from(range(len(names))), min_size=1, unique=True)
                     .map(sorted))
    reply = "\n\n".join(functions[i] for i in kept)
    lost = lost_definitions(before, reply, f"Fix {names[kept[0]]}.", "python")
    assert set(lost) == {name for i, name in enumerate(names) if i not in kept}
    assert put_back(before, reply, lost, "python") == before


@pytest.mark.parametrize("language", ["javascript", "cpp"])
def test_other_languages_read_through_their_grammars(language: str) -> None:
    pytest.importorskip("tree_sitter")
    if language == "javascript":
        before = "function a() {\n  return 1;\n}\n\nfunction b() {\n  return 2;\n}\n"
        reply = "function b() {\n  return 3;\n}\n"
    else:
        before = "int a() {\n  return 1;\n}\n\nint b() {\n  return 2;\n}\n"
        reply = "int b() {\n  return 3;\n}\n"
    lost = lost_definitions(before, reply, "Fix b.", language)
    assert lost == ("a",)
    assert put_back(before, reply, lost, language) == before.replace("return 2", "return 3")


def test_a_reply_of_the_added_function_alone_goes_after_the_last_definition() -> None:
    # Asked to add a function, the default model wrote that function alone (a small edit-kinds
    # row): the file keeps every line, the new function after its last definition.
    main = PY + '\n\nif __name__ == "__main__":\n    print(second(1))\n'
    added = "def fourth(x):\n    return x - 1\n"
    instruction = "Add a function fourth(x) that returns x - 1."
    lost = lost_definitions(main, added, instruction, "python")
    assert lost == ("first", "second", "Third", "LIMIT")
    assert put_back(main, added, lost, "python") == main.replace(
        "LIMIT = 10\n", "LIMIT = 10\n\n\n" + added)


def test_a_method_named_as_a_function_is_no_place_to_put_one_after() -> None:
    before = ("def run(x):\n    return x\n\n\ndef helper(x):\n    return 2 * x\n\n\n"
              "class Job:\n    def run(self):\n        return 1\n")
    # The reply kept the class (with its method run) and dropped the function run's
    # neighbour helper: it goes back after the top-level run, not into the class.
    reply = ("def run(x):\n    return x + 1\n\n\nclass Job:\n    def run(self):\n"
             "        return 1\n")
    lost = lost_definitions(before, reply, "Fix run.", "python")
    assert lost == ("helper",)
    assert put_back(before, reply, lost, "python") == before.replace("return x\n", "return x + 1\n", 1)
