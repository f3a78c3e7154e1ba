"""Rows shaped like the real sets (HumanEvalFix Python and JS, QuixBugs) for ``bench quality``'s
tests: a buggy and a fixed file with the set's own kind of test, and a tiny edit (``BEFORE`` ->
``AFTER``) for the approaches over a scripted model."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from copygram.bench.data import EditRow

PY_FIXED = '''from typing import List


def below_zero(operations: List[int]) -> bool:
    """ True if the running balance ever drops below zero. """
    balance = 0
    for op in operations:
        balance += op
        if balance < 0:
            return True
    return False
'''
PY_BUGGY = PY_FIXED.replace("if balance < 0:", "if balance == 0:")
PY_TEST = '''



def check(below_zero):
    assert below_zero([]) == False
    assert below_zero([1, 2, -3, 1, 2, -3]) == False
    assert below_zero([1, 2, -4, 5, 6]) == True

check(below_zero)
'''

JS_FIXED = '''/* True if the running balance ever drops below zero. */
const belowZero = (operations) => {
  let balance = 0;
  for (const op of operations) {
    balance += op;
    if (balance < 0) {
      return true;
    }
  }
  return false;
}
'''
JS_BUGGY = JS_FIXED.replace("if (balance < 0)", "if (balance == 0)")
JS_TEST = '''const testBelowZero = () => {
  console.assert(belowZero([]) === false)
  console.assert(belowZero([1, 2, -3, 1, 2, -3]) === false)
  console.assert(belowZero([1, 2, -4, 5, 6]) === true)
}

testBelowZero()
'''

QUIX_FIXED = '''def gcd(a, b):
    if b == 0:
        return a
    else:
        return gcd(b, a % b)
'''
QUIX_BUGGY = QUIX_FIXED.replace("gcd(b, a % b)", "gcd(a % b, b)")
QUIX_TESTS = '''assert gcd(*[17, 0]) == 17
assert gcd(*[13, 13]) == 13
assert gcd(*[37, 600]) == 1
'''

CPP_FIXED = '''/* True if the running balance ever drops below zero. */
#include<vector>
using namespace std;
bool below_zero(vector<int> operations){
    int balance=0;
    for (int i=0;i<operations.size();i++)
    {
        balance+=operations[i];
        if (balance<0) return true;
    }
    return false;
}
'''
CPP_BUGGY = CPP_FIXED.replace("if (balance<0)", "if (balance==0)")
CPP_TEST = '''#undef NDEBUG
#include<assert.h>
int main(){
    assert (below_zero({}) == false);
    assert (below_zero({1, 2, -3, 1, 2, -3}) == false);
    assert (below_zero({1, 2, -4, 5, 6}) == true);
}
'''

JAVA_FIXED = '''import java.util.*;
import java.lang.*;

class Solution {
    /**
    True if the running balance ever drops below zero.
     */
    public boolean belowZero(List<Integer> operations) {
        int balance = 0;
        for (int op : operations) {
            balance += op;
            if (balance < 0) {
                return true;
            }
        }
        return false;
    }
}
'''
JAVA_BUGGY = JAVA_FIXED.replace("if (balance < 0)", "if (balance == 0)")
JAVA_TEST = '''public class Main {
    public static void main(String[] args) {
        Solution s = new Solution();
        List<Boolean> correct = Arrays.asList(
                !s.belowZero(new ArrayList<>(Arrays.asList())),
                !s.belowZero(new ArrayList<>(Arrays.asList(1, 2, -3, 1, 2, -3))),
                s.belowZero(new ArrayList<>(Arrays.asList(1, 2, -4, 5, 6)))
        );
        if (correct.contains(false)) {
            throw new AssertionError();
        }
    }
}
'''


def py_row(before: str = PY_BUGGY, after: str = PY_FIXED, test: str = PY_TEST,
           dataset: str = "humanevalfix_docs_python", row_id: str = "py/0") -> EditRow:
    return EditRow(dataset, row_id, before, after, instruction="Fix bugs in below_zero.",
                   lang="python", meta={"test": test, "entry_point": "below_zero"})


def js_row() -> EditRow:
    return EditRow("humanevalfix_docs_js", "js/0", JS_BUGGY, JS_FIXED,
                   instruction="Fix bugs in belowZero.", lang="js",
                   meta={"test": JS_TEST, "entry_point": "belowZero"})


def cpp_row() -> EditRow:
    return EditRow("humanevalfix_docs_cpp", "cpp/0", CPP_BUGGY, CPP_FIXED,
                   instruction="Fix bugs in below_zero.", lang="cpp",
                   meta={"test": CPP_TEST, "entry_point": "below_zero"})


def java_row() -> EditRow:
    return EditRow("humanevalfix_docs_java", "java/0", JAVA_BUGGY, JAVA_FIXED,
                   instruction="Fix bugs in belowZero.", lang="java",
                   meta={"test": JAVA_TEST, "entry_point": "belowZero"})


def quix_row() -> EditRow:
    return EditRow("quixbugs_python", "quix/gcd", QUIX_BUGGY, QUIX_FIXED,
                   instruction="Fix the bug in gcd.", lang="python",
                   meta={"docstring": "gcd", "tests": QUIX_TESTS})


BEFORE = "def area(w, h):\n    return w + h\n"
AFTER = "def area(w, h):\n    return w * h\n"


def row_meta(row: dict[str, object]) -> dict[str, object]:
    """A built row's ``meta``, typed."""
    meta = row["meta"]
    assert isinstance(meta, dict)
    return meta


def assert_rows_hold(rows: list[dict[str, object]], language: str,
                     sizes: Sequence[str] = ("small", "medium", "large")) -> None:
    """``bench kinds`` rows of ``language``: one per kind and size, each of its size, its after
    passing its test program and its before failing it (a docstring row's by its text
    check)."""
    from copygram.bench.kinds import SIZES
    from copygram.bench.kinds_edits import BEHAVIOUR_KINDS, CODE_KINDS
    from copygram.bench.testrun import has_tests, run_tests
    from copygram.language.lines import count_lines

    cells = Counter((row_meta(r)["kind"], row_meta(r)["size"]) for r in rows)
    assert cells == Counter({(k, s): 1 for k in CODE_KINDS for s in sizes}), cells
    for row in rows:
        meta = row_meta(row)
        low, high = SIZES[str(meta["size"])][:2]
        assert low <= count_lines(str(row["before"])) <= high
        assert count_lines(str(row["before"])) == meta["lines"]
        assert meta["language"] == language and has_tests(row)
        after = run_tests(row, str(row["after"]))
        assert after.passed, (row["id"], after.tail)
        before = run_tests(row, str(row["before"]))
        assert not before.passed, (row["id"], before.tail)
        # A kind no test can see fails on its text alone: a line it lacks or still holds.
        text = "lacks the line" in before.tail or "still holds the line" in before.tail
        assert text == (meta["kind"] not in BEHAVIOUR_KINDS)
